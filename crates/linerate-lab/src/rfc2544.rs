//! RFC 2544 throughput on a `router` lab: the MLRsearch-style search ([`search`]) and its
//! trials on the lab ([`trial`]): `linerate gen` in `gen` offering a load through the DUT,
//! `linerate gen --receive` in `recv` counting what arrived, and the generator's own ceiling
//! measured into a sink that does not forward.

pub mod forwarding;
pub mod search;
pub mod trial;

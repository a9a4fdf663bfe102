//! RFC 2544 throughput: one procedure ([`procedure`]: per frame size a warm-up, the
//! generator's ceiling, the MLRsearch-style [`search`] for NDR and PDR, latency at 10/50/90 %
//! of NDR) over a small [`bed::TestBed`] interface, which `lab rfc2544` and `lab run`'s
//! `rfc2544` workload both run, and whose result is the stored shape of
//! `linerate_store::rfc2544`.
//!
//! A lab's namespaces are one test bed ([`namespaces`]): [`path`] resolves the lab's
//! `gen → DUT → recv` path, [`trial`] runs `linerate gen` in `gen` offering a load and
//! `linerate gen --receive` in `recv` counting what arrived, and the generator's own ceiling
//! is measured into a sink that does not forward ([`forwarding`] turns the DUT's forwarding
//! off for it and puts it back, also after a kill).
//!
//! Modules, from the bottom: [`search`], [`forwarding`] and [`bed`]; [`path`]; [`trial`];
//! [`namespaces`] and [`procedure`].

pub mod bed;
pub mod ceiling;
pub mod counter;
pub mod external;
pub mod forwarding;
pub mod guard;
pub mod namespaces;
pub mod path;
pub mod procedure;
pub mod search;
pub mod trial;

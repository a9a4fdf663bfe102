//! Pure network arithmetic: what a link, a bus or a path can carry. No I/O.
//!
//! - [`ethernet`]: frames/s and bit rates per frame size at L1/L2/L3, RFC 2544 sizes, IMIX.
//! - [`bus`]: PCI, PCI-X and PCIe bandwidth and whether a bus carries its NICs.
//! - [`bdp`]: bandwidth-delay product, window scaling, buffer sizes, Mathis and RFC 6349 bounds.
//! - [`tunnel`]: encapsulation overhead, inner MTU, TCP MSS and header efficiency.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod bdp;
pub mod bus;
pub mod ethernet;
pub mod tunnel;

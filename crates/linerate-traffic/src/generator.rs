//! The raw-frame generator (`linerate gen`) and its receive counter (`gen --receive`).
//! Ethernet/IPv4/UDP frames are built once per flow and size ([`crate::frame`]), stamped per
//! frame with linerate's signature, a sequence number and a send timestamp, and sent by one of
//! two engines, a socket per thread: AF_XDP (`linerate_sys::xdp`, one queue per thread) or an
//! AF_PACKET `TPACKET_V2` transmit ring (qdisc bypassed). Each thread is pinned to its own CPU
//! unless told not to. The counter reads an AF_PACKET receive ring and counts the signed
//! frames ([`crate::rx_tally`]).
//!
//! Nothing here prints: [`send`] and [`receive`] take their configuration and a stop flag and
//! return the documents `linerate gen --json` prints ([`document`]), which the binary renders
//! and the lab reads back typed. Linux only: the rings and AF_XDP are Linux's; the
//! configuration and documents exist everywhere.
//!
//! Modules, from the bottom: [`config`], [`document`] and [`error`]; `link` (the interface's
//! MAC, counters, neighbours), `placement` (CPU per thread), `tx` (the rings); `sender` (one
//! thread's loop); `send` and `receive` on top.

pub mod config;
pub mod document;
pub mod error;
#[cfg(target_os = "linux")]
pub mod link;
#[cfg(target_os = "linux")]
mod placement;
#[cfg(target_os = "linux")]
mod receive;
#[cfg(target_os = "linux")]
mod send;
#[cfg(target_os = "linux")]
mod sender;
#[cfg(target_os = "linux")]
mod tx;

pub use config::{Engine, Placement, Rate, ReceiveConfig, SendConfig, parse_cpus, parse_mac};
pub use document::{EngineUsed, IfCounters, Latency, Received, Sent, ThreadSent};
pub use error::GenError;
#[cfg(target_os = "linux")]
pub use receive::{Receiver, receive};
#[cfg(target_os = "linux")]
pub use send::send;

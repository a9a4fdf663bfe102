//! `--mode rr` and `--mode crr`: request/response transactions. The client's worker sends a
//! request, waits for the whole response and records the time it took in an HDR histogram
//! ([`Latency`](crate::latency::Latency)); the server's worker answers. Counters: `packets`
//! counts completed transactions, `bytes` their request plus response bytes (added only when a
//! transaction completes, so bytes ÷ (REQ + RESP) is exact per interval); `lost` counts UDP
//! transactions that timed out.
//!
//! - `rr` over TCP: one connection per stream (the stream's own), TCP_NODELAY.
//! - `rr` over UDP: one datagram each way; the first min(8, REQ, RESP) bytes carry the
//!   sequence number so a late answer is never taken for the current one.
//! - `crr`: a new TCP connection per transaction to a port the server opened for the test
//!   (announced in its hello), closed by the client with a reset so neither side piles up
//!   TIME_WAIT sockets; the time includes the connect.

pub mod crr;
pub mod tcp;
pub mod udp;

use std::time::Duration;

/// How long a UDP transaction waits for its answer before it counts as lost.
pub const UDP_TIMEOUT: Duration = Duration::from_millis(200);
/// How long a server worker waits on one crr connection.
pub const CRR_IO_TIMEOUT: Duration = Duration::from_secs(2);

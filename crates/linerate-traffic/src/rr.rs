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

/// Runs `work` with `sock` free of receive timeouts: a blocking read with SO_RCVTIMEO arms a
/// kernel timer on every wait, which on loopback is a measurable part of a 4 µs transaction.
/// Instead a watcher thread looks at `stop` every [`crate::flow::POLL`] and, once it is set,
/// shuts the socket down for reading, which wakes a blocked read with end-of-file. Nothing is
/// sent to the peer (SHUT_RD), so it never sees a close before the results exchange.
pub(crate) fn without_read_timeout<T>(
    sock: &std::net::TcpStream,
    stop: &std::sync::atomic::AtomicBool,
    work: impl FnOnce() -> T,
) -> T {
    use std::sync::atomic::{AtomicBool, Ordering};
    let _ = sock.set_read_timeout(None);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                if stop.load(Ordering::Relaxed) {
                    let _ = sock.shutdown(std::net::Shutdown::Read);
                    return;
                }
                std::thread::sleep(crate::flow::POLL / 2);
            }
        });
        let out = work();
        done.store(true, Ordering::Relaxed);
        out
    })
}

//! What one data stream is and counts, shared by every kind of worker (bulk TCP/UDP, pps,
//! rr/crr): its spec and work, its lock-free counters, the byte budget, pacing, the UDP
//! header and receive-side loss tracking. The threads that run streams are in
//! [`crate::stream`]; the workers in [`crate::pps`] and [`crate::rr`] build on this.

pub mod budget;
pub mod counters;
pub mod pacing;
pub mod rx_batch;
pub mod rx_options;
pub mod udp_header;
pub mod udp_rx;
pub mod work;
pub mod zerocopy;

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::Duration;

pub use budget::Budget;
pub use counters::{CounterSnapshot, StreamCounters};
pub use work::{Work, WorkKind, WorkReport};

use crate::config::{Direction, Protocol};

/// How long a blocked read or write waits before looking at the stop flag again.
pub const POLL: Duration = Duration::from_millis(100);

/// A bulk TCP sender's plain write (every send path's copy): a write of nothing is an error,
/// since the send loop takes `Ok(0)` as "try again".
pub(crate) fn write_copy(sock: &mut TcpStream, buf: &[u8]) -> std::io::Result<usize> {
    use std::io::Write;
    match sock.write(buf) {
        Ok(0) => Err(std::io::ErrorKind::WriteZero.into()),
        r => r,
    }
}

/// iperf3's stream ids: 1, 3, 4, 5, … (2 is skipped on purpose).
pub fn stream_id(index: usize) -> i64 {
    if index == 0 { 1 } else { index as i64 + 2 }
}

/// What a stream does.
#[derive(Debug, Clone)]
pub struct StreamSpec {
    /// iperf3 stream id.
    pub id: i64,
    /// Send or receive, from this side's view.
    pub direction: Direction,
    /// TCP or UDP.
    pub protocol: Protocol,
    /// Write size or datagram payload.
    pub len: usize,
    /// Target rate in bit/s (0: unlimited).
    pub rate_bps: u64,
    /// Pacing granularity.
    pub pacing_timer: Duration,
    /// UDP sequence numbers are 64-bit.
    pub udp64: bool,
    /// What the thread does beyond bulk transfer, and where it runs.
    pub work: Work,
    /// The user sized the socket buffers (`-w`): UDP streams leave them alone; otherwise a
    /// UDP receiver raises its buffer so a scheduling hiccup is not counted as loss.
    pub window_set: bool,
}

/// A connected data socket.
#[derive(Debug)]
pub enum DataSocket {
    /// A TCP connection.
    Tcp(TcpStream),
    /// A connected UDP socket.
    Udp(UdpSocket),
}

impl DataSocket {
    /// Local address.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        match self {
            DataSocket::Tcp(s) => s.local_addr().ok(),
            DataSocket::Udp(s) => s.local_addr().ok(),
        }
    }

    /// Peer address.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        match self {
            DataSocket::Tcp(s) => s.peer_addr().ok(),
            DataSocket::Udp(s) => s.peer_addr().ok(),
        }
    }
}

/// Whether an I/O error only means "nothing yet, look at the stop flag".
pub(crate) fn is_retry(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    ) || e.raw_os_error() == Some(libc::ENOBUFS)
        || e.raw_os_error() == Some(libc::ECONNREFUSED)
}

/// A payload that compresses badly enough not to flatter compressing links.
pub(crate) fn pattern(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x9E37_79B9;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_skip_two() {
        let ids: Vec<i64> = (0..4).map(super::stream_id).collect();
        assert_eq!(ids, [1, 3, 4, 5]);
    }
}

//! Data streams: one OS thread per stream, blocking sockets, and lock-free counters that the
//! interval sampler reads. The hot loops neither lock nor allocate: buffers are allocated once
//! before the loop, counters are relaxed atomics written by exactly one thread.

pub mod budget;
pub mod counters;
pub mod pacing;
pub mod tcp;
pub mod udp;
pub mod udp_header;
pub mod udp_rx;

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

pub use budget::Budget;
pub use counters::{CounterSnapshot, StreamCounters};

use crate::config::{Direction, Protocol};
use crate::error::TrafficError;

/// How long a blocked read or write waits before looking at the stop flag again.
pub const POLL: Duration = Duration::from_millis(100);

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
    /// What the thread does beyond bulk transfer, and where it runs ([`crate::modes`]).
    pub work: crate::modes::Work,
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

/// A running (or finished) stream as the controller sees it.
#[derive(Debug)]
pub struct StreamHandle {
    /// What it does.
    pub spec: StreamSpec,
    /// Its counters.
    pub counters: Arc<StreamCounters>,
    /// A duplicate of the TCP socket for TCP_INFO sampling.
    pub info_fd: Option<OwnedFd>,
    /// Local address.
    pub local: Option<SocketAddr>,
    /// Peer address.
    pub remote: Option<SocketAddr>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<DataSocket>>,
    socket: Option<DataSocket>,
}

impl StreamHandle {
    /// Wraps a connected socket; the thread starts with [`StreamHandle::start`].
    pub fn new(spec: StreamSpec, socket: DataSocket) -> Result<StreamHandle, TrafficError> {
        let info_fd = match &socket {
            DataSocket::Tcp(s) => Some(
                s.as_fd()
                    .try_clone_to_owned()
                    .map_err(|e| TrafficError::socket("duplicating a stream socket", e))?,
            ),
            DataSocket::Udp(_) => None,
        };
        Ok(StreamHandle {
            local: socket.local_addr(),
            remote: socket.peer_addr(),
            spec,
            counters: Arc::new(StreamCounters::default()),
            info_fd,
            stop: Arc::new(AtomicBool::new(false)),
            thread: None,
            socket: Some(socket),
        })
    }

    /// Starts the stream's thread. `budget` bounds what a sender sends.
    pub fn start(&mut self, budget: Option<Arc<Budget>>) -> Result<(), TrafficError> {
        let Some(socket) = self.socket.take() else {
            return Ok(());
        };
        let spec = self.spec.clone();
        let counters = Arc::clone(&self.counters);
        let stop = Arc::clone(&self.stop);
        let name = format!("lr-stream-{}", spec.id);
        let handle = std::thread::Builder::new()
            .name(name)
            .spawn(move || run_stream(spec, socket, counters, stop, budget))
            .map_err(|e| TrafficError::socket("starting a stream thread", e))?;
        self.thread = Some(handle);
        Ok(())
    }

    /// Asks the thread to stop (it notices within [`POLL`]).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Stops and waits for the thread; the socket stays open until the handle is dropped, so
    /// the peer never sees a close before the results exchange.
    pub fn join(&mut self) {
        self.stop();
        if let Some(t) = self.thread.take()
            && let Ok(sock) = t.join()
        {
            self.socket = Some(sock);
        }
    }

    /// Stops the thread and shuts the TCP connection down, as iperf3's server does at
    /// `TEST_END`: a peer blocked reading a whole block then sees the end of the stream.
    pub fn close(&mut self) {
        self.join();
        if let Some(DataSocket::Tcp(s)) = &self.socket {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }

    /// TCP_INFO now, for TCP streams.
    pub fn tcp_info(&self) -> Option<crate::sockopt::TcpInfo> {
        self.info_fd
            .as_ref()
            .and_then(|fd| crate::sockopt::tcp_info(fd.as_fd()))
    }

    /// Whether the stream's thread has finished on its own (budget spent, peer closed, error).
    pub fn finished(&self) -> bool {
        self.counters.finished.load(Ordering::Relaxed)
    }
}

impl Drop for StreamHandle {
    fn drop(&mut self) {
        self.join();
    }
}

fn run_stream(
    spec: StreamSpec,
    socket: DataSocket,
    counters: Arc<StreamCounters>,
    stop: Arc<AtomicBool>,
    budget: Option<Arc<Budget>>,
) -> DataSocket {
    // pps/rr/crr workers (and --affinity) take over here; bulk streams fall through.
    let socket = match crate::modes::run(&spec, socket, &counters, &stop, budget.as_deref()) {
        Ok(handled) => {
            counters.finished.store(true, Ordering::Relaxed);
            return handled;
        }
        Err(socket) => socket,
    };
    let socket = match (socket, spec.direction) {
        (DataSocket::Tcp(s), Direction::Send) => {
            DataSocket::Tcp(tcp::send(&spec, s, &counters, &stop, budget.as_deref()))
        }
        (DataSocket::Tcp(s), Direction::Receive) => {
            DataSocket::Tcp(tcp::receive(&spec, s, &counters, &stop))
        }
        (DataSocket::Udp(s), Direction::Send) => {
            DataSocket::Udp(udp::send(&spec, s, &counters, &stop, budget.as_deref()))
        }
        (DataSocket::Udp(s), Direction::Receive) => {
            DataSocket::Udp(udp::receive(&spec, s, &counters, &stop))
        }
    };
    counters.finished.store(true, Ordering::Relaxed);
    socket
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

#[cfg(test)]
mod tests {
    #[test]
    fn ids_skip_two() {
        let ids: Vec<i64> = (0..4).map(super::stream_id).collect();
        assert_eq!(ids, [1, 3, 4, 5]);
    }
}

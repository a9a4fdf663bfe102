//! Data streams' threads: one OS thread per stream, blocking sockets, and the lock-free
//! counters ([`crate::flow`]) that the interval sampler reads. The hot loops neither lock nor
//! allocate: buffers are allocated once before the loop, counters are relaxed atomics written
//! by exactly one thread. A stream whose work is not bulk transfer runs its mode's worker
//! ([`crate::pps`], [`crate::rr`]) instead.

pub mod tcp;
#[cfg(target_os = "linux")]
pub mod tcp_zc;
pub mod udp;

use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use crate::config::Direction;
use crate::error::TrafficError;
use crate::flow::WorkKind;
pub(crate) use crate::flow::is_retry;
pub use crate::flow::{
    Budget, CounterSnapshot, DataSocket, POLL, StreamCounters, StreamSpec, budget, counters,
    pacing, stream_id, udp_header, udp_rx,
};

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
    counters.note_thread();
    // pps/rr/crr workers (and --affinity) take over here; bulk streams fall through.
    let socket = match run_worker(&spec, socket, &counters, &stop, budget.as_deref()) {
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

/// Runs `socket`'s stream on its mode's worker when its work is not bulk transfer; gives the socket back
/// (`Err`) otherwise. Pins the thread first when asked.
fn run_worker(
    spec: &StreamSpec,
    socket: DataSocket,
    counters: &StreamCounters,
    stop: &AtomicBool,
    budget: Option<&Budget>,
) -> Result<DataSocket, DataSocket> {
    let work = &spec.work;
    // A CPU that cannot be used (gone offline, outside the cpuset) leaves the thread unpinned;
    // the report then shows no pinned CPU.
    let _ = work.report.placement.enter(work.cpu);
    let out = match (&work.kind, socket, spec.direction) {
        (WorkKind::Stream, s, _) => return Err(s),
        (WorkKind::Pps(p), DataSocket::Udp(s), Direction::Send) => {
            DataSocket::Udp(crate::pps::send(spec, p, s, counters, stop, budget))
        }
        (WorkKind::Pps(p), DataSocket::Udp(s), Direction::Receive) => {
            DataSocket::Udp(crate::pps::receive(spec, p, s, counters, stop))
        }
        (WorkKind::Rr(size), DataSocket::Tcp(s), Direction::Send) => {
            DataSocket::Tcp(crate::rr::tcp::client(spec, *size, s, counters, stop))
        }
        (WorkKind::Rr(size), DataSocket::Tcp(s), Direction::Receive) => {
            DataSocket::Tcp(crate::rr::tcp::server(*size, s, counters, stop))
        }
        (WorkKind::Rr(size), DataSocket::Udp(s), Direction::Send) => {
            DataSocket::Udp(crate::rr::udp::client(spec, *size, s, counters, stop))
        }
        (WorkKind::Rr(size), DataSocket::Udp(s), Direction::Receive) => {
            DataSocket::Udp(crate::rr::udp::server(spec, *size, s, counters, stop))
        }
        (WorkKind::CrrClient { addr, size }, s, Direction::Send) => {
            crate::rr::crr::client(spec, *addr, *size, counters, stop);
            s
        }
        (WorkKind::CrrServer { listener, size }, s, Direction::Receive) => {
            crate::rr::crr::server(spec, listener, *size, counters, stop);
            s
        }
        // A combination the checks exclude; run it as a plain stream rather than not at all.
        (_, s, _) => return Err(s),
    };
    work.report.placement.note();
    Ok(out)
}

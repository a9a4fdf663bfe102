//! A stream's work: what its thread does besides plain bulk transfer (the pps, rr and crr
//! workers), where it runs, and what it reports besides its counters. Data only: the stream's
//! thread ([`crate::stream`]) hands the work to its worker.

use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};

use crate::affinity::Placement;
use crate::config::{RrSize, ZeroCopy};
use crate::datagram::PpsSpec;
use crate::latency::Latency;

/// What a stream's thread does when it is not plain bulk transfer.
///
/// (A sendfile-based zero-copy send for bulk TCP was built and measured in wave 2: on
/// loopback it moved 147–150 Gbit/s against 156–204 Gbit/s with plain writes over 2
/// streams, because the receiver copies anyway; it was dropped. `--zerocopy` now means
/// `MSG_ZEROCOPY` and `TCP_ZEROCOPY_RECEIVE`: [`Work::zerocopy`].)
#[derive(Debug, Clone, Default)]
pub enum WorkKind {
    /// Bulk TCP/UDP (part 1's loops).
    #[default]
    Stream,
    /// Small datagrams, batched.
    Pps(PpsSpec),
    /// Request/response on the stream's own socket.
    Rr(RrSize),
    /// Client: connect, request, response, close, to `addr`.
    CrrClient {
        /// The server's transaction port.
        addr: SocketAddr,
        /// Sizes.
        size: RrSize,
    },
    /// Server: accept transactions on a listener shared by the test's streams.
    CrrServer {
        /// The test's transaction listener.
        listener: Arc<TcpListener>,
        /// Sizes.
        size: RrSize,
    },
}

/// What one worker reports besides its counters.
#[derive(Debug, Default)]
pub struct WorkReport {
    /// Where it ran.
    pub placement: Placement,
    /// Transaction latencies (rr/crr client workers), filled when the worker ends.
    pub latency: Mutex<Option<Latency>>,
    /// Errors that did not stop the worker (crr connects refused, rr timeouts).
    pub soft_errors: std::sync::atomic::AtomicU64,
    /// What a bulk TCP stream's zero-copy paths did, filled when the stream ends.
    pub zerocopy: Mutex<Option<super::zerocopy::ZcStream>>,
}

/// A stream's work: what to do and where to run.
#[derive(Debug, Clone, Default)]
pub struct Work {
    /// What to do.
    pub kind: WorkKind,
    /// CPU to pin the thread to.
    pub cpu: Option<usize>,
    /// Bulk TCP: send and receive without the copy.
    pub zerocopy: ZeroCopy,
    /// Filled by the worker.
    pub report: Arc<WorkReport>,
}

impl Work {
    /// The latency histogram the worker left, if any.
    pub fn latency(&self) -> Option<Latency> {
        match self.report.latency.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// What the stream's zero-copy paths did, if it used them.
    pub fn zerocopy(&self) -> Option<super::zerocopy::ZcStream> {
        match self.report.zerocopy.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    pub(crate) fn store_zerocopy(&self, z: super::zerocopy::ZcStream) {
        match self.report.zerocopy.lock() {
            Ok(mut g) => *g = Some(z),
            Err(p) => *p.into_inner() = Some(z),
        }
    }

    pub(crate) fn store_latency(&self, l: Latency) {
        match self.report.latency.lock() {
            Ok(mut g) => *g = Some(l),
            Err(p) => *p.into_inner() = Some(l),
        }
    }
}

//! One sending thread's way to the kernel: an AF_PACKET `TPACKET_V2` transmit ring or an
//! AF_XDP socket on its own queue (`linerate_sys`), opened for every thread before any sends,
//! so a permission error is one clear message. A refused AF_XDP bind is explained from its
//! errno.

use std::time::{Duration, Instant};

use linerate_sys::txring::TxRing;
use linerate_sys::xdp::{XdpMode, XskTx};

use super::document::EngineUsed;
use super::error::GenError;
use crate::frame;

/// Slots of each AF_PACKET ring / chunks of each AF_XDP UMEM.
const RING_FRAMES: usize = 4096;

/// What `detail` says of the packet engine.
pub(super) const PACKET_DETAIL: &str =
    "AF_PACKET TPACKET_V2 transmit ring per thread, qdisc bypassed";

/// One thread's way to the kernel.
pub(super) enum Tx {
    Packet(TxRing),
    Xdp(XskTx, u32),
}

impl Tx {
    /// Queues one frame; `fill` is given the buffer and its slot (or chunk) index.
    pub(super) fn push(&mut self, fill: impl FnOnce(&mut [u8], usize) -> usize) -> bool {
        match self {
            Tx::Packet(r) => r.push_indexed(fill),
            Tx::Xdp(x, _) => x.push_indexed(fill),
        }
    }

    /// Slots (packet) or chunks (xdp): the range of the index `push` gives.
    pub(super) fn slots(&self) -> usize {
        match self {
            Tx::Packet(r) => r.slots(),
            Tx::Xdp(x, _) => x.chunks(),
        }
    }

    pub(super) fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Tx::Packet(r) => r.flush(),
            Tx::Xdp(x, _) => x.flush(),
        }
    }

    pub(super) fn wait(&mut self, timeout: Duration) -> std::io::Result<()> {
        match self {
            Tx::Packet(r) => r.wait(timeout),
            Tx::Xdp(x, _) => x.wait(timeout),
        }
    }

    /// Hands everything queued to the kernel before the thread reports (bounded).
    pub(super) fn drain(&mut self) -> std::io::Result<()> {
        self.flush()?;
        if let Tx::Xdp(x, _) = self {
            let until = Instant::now() + Duration::from_secs(1);
            while x.outstanding() > 0 && Instant::now() < until {
                x.wait(Duration::from_millis(1))?;
                x.flush()?;
            }
        }
        Ok(())
    }

    pub(super) fn wrong_format(&self) -> u64 {
        match self {
            Tx::Packet(r) => r.wrong_format(),
            Tx::Xdp(..) => 0,
        }
    }

    pub(super) fn queue(&self) -> Option<u32> {
        match self {
            Tx::Packet(_) => None,
            Tx::Xdp(_, q) => Some(*q),
        }
    }
}

/// The sockets of every thread, the engine they are, and how it sends.
pub(super) struct Opened {
    pub(super) rings: Vec<Tx>,
    pub(super) engine: EngineUsed,
    pub(super) detail: String,
}

/// An OS error opening `what` on `dev`: a permission error says what is needed.
fn opening(dev: &str, e: std::io::Error, what: &'static str) -> GenError {
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        GenError::Permission {
            program: "linerate gen",
            what,
            dev: dev.to_owned(),
        }
    } else {
        GenError::Io {
            what: format!("opening {what} on {dev}"),
            source: e,
        }
    }
}

/// A packet transmit ring per thread, its slots `slot` bytes.
pub(super) fn open_packet(dev: &str, slot: usize, threads: usize) -> Result<Opened, GenError> {
    let rings = (0..threads)
        .map(|_| {
            TxRing::open(dev, slot, RING_FRAMES, true)
                .map(Tx::Packet)
                .map_err(|e| opening(dev, e, "a packet transmit ring"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Opened {
        rings,
        engine: EngineUsed::Packet,
        detail: PACKET_DETAIL.to_owned(),
    })
}

/// One AF_XDP socket per thread on queues 0, 1, …: zero-copy where the driver takes it,
/// else copy mode. The error says why the kernel or driver refused.
pub(super) fn open_xdp(dev: &str, largest: usize, threads: usize) -> Result<Opened, GenError> {
    if largest > frame::FCS + 2048 {
        return Err(GenError::XdpFrameTooLarge { largest });
    }
    if let Some(queues) = tx_queues(dev)
        && queues < threads
    {
        return Err(GenError::XdpQueues {
            threads,
            dev: dev.to_owned(),
            queues,
        });
    }
    let mut rings = Vec::new();
    let mut mode = XdpMode::ZeroCopy;
    for t in 0..threads {
        let q = t as u32;
        let sock = match XskTx::open(dev, q, RING_FRAMES as u32, mode) {
            Ok(s) => s,
            Err(_) if mode == XdpMode::ZeroCopy => {
                mode = XdpMode::Copy;
                XskTx::open(dev, q, RING_FRAMES as u32, mode).map_err(|e| xdp_error(dev, q, e))?
            }
            Err(e) => return Err(xdp_error(dev, q, e)),
        };
        rings.push(Tx::Xdp(sock, q));
    }
    let detail = match mode {
        XdpMode::Copy => "AF_XDP socket per thread and queue, copy mode",
        XdpMode::ZeroCopy => "AF_XDP socket per thread and queue, zero-copy",
    };
    Ok(Opened {
        rings,
        engine: EngineUsed::Xdp,
        detail: detail.to_owned(),
    })
}

/// Why an AF_XDP bind to `queue` of `dev` was refused, from its errno.
fn xdp_error(dev: &str, queue: u32, e: std::io::Error) -> GenError {
    let why = match e.raw_os_error() {
        Some(libc::EAFNOSUPPORT) => "this kernel has no AF_XDP (CONFIG_XDP_SOCKETS)".to_owned(),
        Some(libc::EPERM | libc::EACCES) => return opening(dev, e, "an AF_XDP socket"),
        Some(libc::EBUSY) => {
            format!("queue {queue} of {dev} is already bound by another AF_XDP socket")
        }
        Some(libc::EINVAL) => format!("{dev} has no queue {queue}, or refuses AF_XDP on it"),
        Some(libc::EOPNOTSUPP) => format!("the driver of {dev} refuses AF_XDP"),
        _ => e.to_string(),
    };
    GenError::XdpBind {
        dev: dev.to_owned(),
        queue,
        why,
        error: e,
    }
}

/// Transmit queues of `dev` (/sys/class/net/DEV/queues/tx-*), when sysfs says.
fn tx_queues(dev: &str) -> Option<usize> {
    let dir = std::fs::read_dir(format!("/sys/class/net/{dev}/queues")).ok()?;
    Some(
        dir.filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("tx-"))
            .count(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_bind_is_explained_by_its_errno() {
        let why = |errno: i32| xdp_error("veth0", 1, std::io::Error::from_raw_os_error(errno));
        assert!(
            why(libc::EAFNOSUPPORT)
                .to_string()
                .contains("CONFIG_XDP_SOCKETS")
        );
        assert!(why(libc::EBUSY).to_string().contains("already bound"));
        assert!(why(libc::EINVAL).to_string().contains("has no queue 1"));
        assert!(
            why(libc::EOPNOTSUPP)
                .to_string()
                .contains("driver of veth0")
        );
        assert!(matches!(why(libc::EPERM), GenError::Permission { .. }));
        assert!(matches!(why(libc::EACCES), GenError::Permission { .. }));
        let other = why(libc::ENOMEM).to_string();
        assert!(
            other.starts_with("--engine xdp: cannot bind an AF_XDP socket to veth0 queue 1"),
            "{other}"
        );
    }
}

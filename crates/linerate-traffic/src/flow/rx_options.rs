//! A pps receiver's socket options and what it reports of its receive path: UDP_GRO and busy
//! polling where the system has them (Linux), and the batch sizing's figures. Other systems
//! receive datagram by datagram and say so.

use std::net::UdpSocket;
use std::sync::atomic::Ordering;

use crate::flow::counters::RxPathCounters;
use crate::flow::rx_batch::RxBatch;
use linerate_sys::mmsg::Batch;

/// Asks for UDP_GRO on `sock`; whether it is on. Notes the outcome in `path`.
pub fn gro(sock: &UdpSocket, path: &RxPathCounters) -> bool {
    #[cfg(target_os = "linux")]
    let on = {
        use std::os::fd::AsFd;
        linerate_sys::udp_rx::set_udp_gro(sock.as_fd()).is_ok()
    };
    #[cfg(not(target_os = "linux"))]
    let on = {
        let _ = sock;
        false
    };
    path.gro.store(if on { 1 } else { 2 }, Ordering::Relaxed);
    on
}

/// Busy-poll budget: packets per poll (the kernel's default is 8).
const BUSY_POLL_BUDGET: u16 = 64;

/// Asks for busy polling of `usec` µs on `sock` (nothing when 0). Notes in `path` whether the
/// kernel took every option.
pub fn busy_poll(sock: &UdpSocket, usec: u32, path: &RxPathCounters) {
    if usec == 0 {
        return;
    }
    path.busy_poll_us.store(u64::from(usec), Ordering::Relaxed);
    #[cfg(target_os = "linux")]
    let ok = {
        use std::os::fd::AsFd;
        let b = linerate_sys::udp_rx::set_busy_poll(sock.as_fd(), usec, BUSY_POLL_BUDGET);
        b.usec.is_ok() && b.prefer.is_ok() && b.budget.is_ok()
    };
    #[cfg(not(target_os = "linux"))]
    let ok = {
        let _ = (sock, BUSY_POLL_BUDGET);
        false
    };
    path.busy_poll
        .store(if ok { 1 } else { 2 }, Ordering::Relaxed);
}

/// The GRO segment size of receive `i` of `batch`, when GRO is on and the kernel coalesced.
pub fn segment_size(batch: &Batch, i: usize, gro: bool) -> Option<usize> {
    if !gro {
        return None;
    }
    #[cfg(target_os = "linux")]
    {
        let (level, kind) = linerate_sys::udp_rx::GRO_CMSG;
        batch
            .control_int(i, level, kind)
            .and_then(|s| usize::try_from(s).ok())
            .filter(|&s| s > 0)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (batch, i);
        None
    }
}

/// Copies the batch sizing's figures and the most datagrams one GRO receive held into `path`.
pub fn publish(sizing: &RxBatch, max_segments: u64, path: &RxPathCounters) {
    path.batch_peak
        .store(sizing.peak() as u64, Ordering::Relaxed);
    path.per_call_milli
        .store((sizing.per_call() * 1000.0) as u64, Ordering::Relaxed);
    path.gro_max_segments.store(max_segments, Ordering::Relaxed);
}

//! Kernel netem: detection (does this kernel have the qdisc?) and its options for one
//! direction (delay, jitter, loss, rate, limit).

use crate::impair::Impairment;
use crate::netlink::{Msg, NetlinkError, Rtnl};

const TCA_NETEM_RATE: u16 = 6;
const TCA_NETEM_RATE64: u16 = 8;
const TCA_NETEM_LATENCY64: u16 = 10;
const TCA_NETEM_JITTER64: u16 = 11;

/// Whether the kernel has netem, asked the kernel itself: a netem qdisc without options on
/// `lo` (index 1) is refused with EINVAL when netem exists (it needs options) and ENOENT when
/// the kind is unknown. Nothing is created either way.
pub fn available(rtnl: &mut Rtnl) -> Result<bool, NetlinkError> {
    match rtnl.add_root_qdisc(1, "netem", None) {
        Ok(()) => Ok(true),
        Err(e) if e.errno() == Some(libc::EINVAL) => Ok(true),
        Err(e) if matches!(e.errno(), Some(libc::ENOENT | libc::EOPNOTSUPP)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// The TCA_OPTIONS blob of netem for `imp`: `struct tc_netem_qopt` then attributes.
pub fn options(imp: &Impairment) -> Vec<u8> {
    let loss = (imp.loss.fraction().clamp(0.0, 1.0) * f64::from(u32::MAX)) as u32;
    let mut m = Msg::new(0, 0);
    let mut qopt = [0u8; 24];
    qopt[4..8].copy_from_slice(&imp.limit.to_ne_bytes());
    qopt[8..12].copy_from_slice(&loss.to_ne_bytes());
    m.push(&qopt);
    m.attr_u64(TCA_NETEM_LATENCY64, imp.delay.as_nanos());
    m.attr_u64(TCA_NETEM_JITTER64, imp.jitter.as_nanos());
    if let Some(rate) = imp.rate {
        let bytes = (rate.as_f64() / 8.0) as u64;
        let mut r = [0u8; 16];
        r[0..4].copy_from_slice(&u32::try_from(bytes).unwrap_or(u32::MAX).to_ne_bytes());
        m.attr(TCA_NETEM_RATE, &r);
        if bytes > u64::from(u32::MAX) {
            m.attr_u64(TCA_NETEM_RATE64, bytes);
        }
    }
    m.into_payload()
}

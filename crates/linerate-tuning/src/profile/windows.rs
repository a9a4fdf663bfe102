//! Windows formulas.

use crate::finding::Severity;
use crate::formula;
use crate::profile::{Profile, Target};
use crate::wording::bytes;

pub(crate) fn generate(p: &mut Profile) {
    let rate = p.context.rate.unwrap_or_default();
    let bdp = p.bdp.bytes();
    if p.role.terminates_tcp() {
        let level = if bdp > formula::WINDOWS_NORMAL_WINDOW {
            "experimental"
        } else {
            "normal"
        };
        p.set(
            Target::Netsh,
            "netsh.autotuninglevel",
            level,
            Severity::Warning,
            format!(
                "BDP {} vs {} reachable at level normal (65535 × 2^8): {}",
                bytes(bdp),
                bytes(formula::WINDOWS_NORMAL_WINDOW),
                if level == "normal" {
                    "normal suffices"
                } else {
                    "only experimental (scale 14) reaches it"
                }
            ),
        );
        if rate > formula::paws_rate_threshold() {
            p.set(Target::Netsh, "netsh.timestamps", "enabled", Severity::Info,
                format!("{rate} > 2^31 bytes / 120 s = {}: sequence numbers wrap within 2 × MSL, so PAWS timestamps are needed (RFC 7323)", formula::paws_rate_threshold()));
        }
    }
    if p.role.forwards() {
        p.set(
            Target::Netsh,
            "netsh.forwarding",
            "enabled",
            Severity::Warning,
            format!("role {}: forwards packets", p.role),
        );
        p.set(Target::Netsh, "netsh.rsc", "disabled", Severity::Warning,
            format!("role {}: receive segment coalescing merges segments that must be forwarded as they came (like LRO)", p.role));
    }
    p.notes.push("TcpWindowSize, Tcp1323Opts, ForwardBufferMemory, NumForwardPackets: legacy registry values with no effect since Vista; not written".into());
}

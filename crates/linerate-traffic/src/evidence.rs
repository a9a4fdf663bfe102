//! The evidence a test gathers to explain its rate: every TCP stream's `TCP_INFO` sampled
//! during the test (≥ 100 Hz by default) and where the side's CPU went, folded in fixed
//! memory by a recorder thread beside the streams ([`EvidenceRecorder`]). The types are
//! `linerate-iperf3`'s ([`linerate_iperf3::evidence`]): the server returns its side in its
//! results, the client writes both in its document.

mod cpu;
mod gauge;
mod recorder;
mod tcp;
mod udp;

pub(crate) use gauge::GaugeAcc;
pub use linerate_iperf3::evidence::{
    CpuEvidence, CpuInterval, CpuShare, Evidence, Gauge, MissingEvidence, MissingReason,
    ProcessCpu, Role, Side, StreamRole, TcpStreamEvidence, TestEvidence, ThreadCpu,
};
pub use recorder::EvidenceRecorder;

use crate::result::PeerKind;

/// The client's evidence: its own side and what the server returned, or why it returned
/// none. `None` when the client recorded nothing (sampling off, or the test ended inside
/// its omitted period).
pub fn test_evidence(
    local: Option<Evidence>,
    remote: Option<Evidence>,
    peer: PeerKind,
) -> Option<TestEvidence> {
    let local = local?;
    let remote_missing = match (&remote, peer) {
        (Some(_), _) => None,
        (None, PeerKind::Iperf3) => Some(MissingEvidence::iperf3_peer()),
        (None, PeerKind::Linerate) => Some(MissingEvidence::not_returned()),
    };
    Some(TestEvidence {
        local,
        remote,
        remote_missing,
    })
}

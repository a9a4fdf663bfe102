//! `audit --role vpn`: finds the newest stored run that went through a tunnel and hands it to
//! the vpn rules (`linerate_tuning::vpn`), which judge the host's settings against it.

use anyhow::Context as _;
use linerate_store::Store;
use linerate_tuning::vpn::{TunnelRecord, TunnelRun};
use serde::Deserialize as _;

/// Runs looked at, newest first, for one that went through a tunnel.
const RUNS_SEARCHED: usize = 500;

/// The newest run in `store` that went through a tunnel (among the newest [`RUNS_SEARCHED`]).
pub fn newest_tunnel_run(store: &Store) -> anyhow::Result<Option<TunnelRun>> {
    let Some((listing, tunnel)) = store.newest_with_object("/linerate/tunnel", RUNS_SEARCHED)?
    else {
        return Ok(None);
    };
    let record = TunnelRecord::deserialize(&tunnel).with_context(|| {
        format!(
            "stored run {}: its linerate.tunnel object does not read as a tunnel",
            listing.id
        )
    })?;
    Ok(Some(TunnelRun {
        id: listing.id.0,
        started: linerate_report::format::utc(listing.started_at),
        tunnel: record,
    }))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use linerate_lab::runner::RunTunnel;
    use linerate_lab::tunnel::observe::{SocketBuffers, TunnelObservation};
    use linerate_tuning::vpn::TunnelRecord;

    /// What `lab run` stores is what the vpn rules read: every field of the lab's record
    /// arrives (a field renamed on one side fails here instead of reading as absent).
    #[test]
    fn the_labs_tunnel_record_reads_back_whole() -> anyhow::Result<()> {
        let written = RunTunnel {
            kind: "openvpn",
            implementation: "openvpn 2.6.14".into(),
            interface_mtu: Some(1448),
            tcp_maxseg: Some(1396),
            link_mtu: 1500,
            observed: Some(TunnelObservation {
                socket_buffers: Some(SocketBuffers {
                    rcv_before: 1,
                    rcv_after: 2,
                    snd_before: 3,
                    snd_after: 4,
                }),
                sndbuf_requested: Some(5),
                rcvbuf_requested: Some(6),
                txqueuelen: Some(7),
                tx_packets: Some(8),
                tx_dropped: Some(9),
                encap: Some("openvpn-udp".into()),
                predicted_inner_mtu: Some(1448),
                predicted_mss: Some(1408),
                sources: vec!["openvpn log".into()],
            }),
        };
        let stored = serde_json::to_value(&written)?;
        let read: TunnelRecord = serde_json::from_value(stored.clone())?;
        assert_eq!(serde_json::to_value(&read)?, stored);
        Ok(())
    }
}

//! What a tunnel showed during a run, read after the load and before `lab down`: `calc
//! tunnel`'s prediction and the options asked for, then what `gen`'s daemon and its tun device
//! showed (read by `linerate-probe`'s `tunnel` module: socket buffers, TX queue length and
//! drops). `audit --role vpn` judges the host's settings against these.

use linerate_probe::tunnel::Daemon;
pub use linerate_probe::tunnel::{SocketBuffers, TunnelObservation};

use super::TunnelState;

/// Reads what `gen`'s tunnel daemon and its tun device showed; what cannot be read stays
/// `None` (a tunnel without OpenVPN has no such log lines).
pub fn observe(t: &TunnelState) -> TunnelObservation {
    let mut o = TunnelObservation {
        encap: Some(t.spec.encap().name().to_owned()),
        ..TunnelObservation::default()
    };
    if let Some(r) = super::predict(&t.spec, t.link_mtu) {
        o.predicted_inner_mtu = Some(r.inner_mtu.bytes());
        o.predicted_mss = Some(r.tcp_mss.bytes());
        o.sources.push(format!(
            "calc tunnel --encap {} on link MTU {}",
            t.spec.encap().name(),
            t.link_mtu
        ));
    }
    if let super::TunnelSpec::Openvpn(opts) = &t.spec {
        o.sndbuf_requested = opts.sndbuf;
        o.rcvbuf_requested = opts.rcvbuf;
    }
    let Some(daemon) = t.processes.iter().find(|p| p.node == "gen") else {
        return o;
    };
    o.read_daemon(Daemon {
        program: &daemon.program,
        log: &daemon.log,
        pid: daemon.pid,
        interface: &t.gen_interface,
    });
    o
}

use super::*;
use crate::finding::Location;
use linerate_probe::tunnel::SocketBuffers;

fn entry(key: &str, value: &str) -> Entry {
    Entry {
        key: key.into(),
        value: value.into(),
        quoted: false,
        location: Location {
            source: "/proc/sys".into(),
            line: None,
        },
        ignore_errors: false,
        inline_comment: None,
        format: crate::parse::Format::Dump,
    }
}

fn run(tunnel: TunnelRecord) -> TunnelRun {
    TunnelRun {
        id: 7,
        started: "2025-11-24 16:00:00 UTC".into(),
        tunnel,
    }
}

fn rule<'a>(f: &'a [Finding], rule: &str) -> &'a Finding {
    f.iter()
        .find(|x| x.rule == rule)
        .unwrap_or_else(|| panic!("no {rule} in {f:#?}"))
}

#[test]
fn without_a_measurement_everything_is_info_and_cites_socket_7() {
    let f = findings(None, &[entry("net.core.rmem_max", "212992")], "runs.db");
    assert!(f.iter().all(|x| x.severity == Severity::Info), "{f:#?}");
    assert!(rule(&f, "vpn-no-measurement").why.contains("runs.db"));
    let cap = rule(&f, "vpn-socket-buffer-cap");
    assert_eq!(cap.value.as_deref(), Some("212992"));
    assert!(cap.source.starts_with("socket(7)"));
}

#[test]
fn a_measured_tunnel_is_judged_against_the_hosts_caps_and_cites_the_run() {
    let t = TunnelRecord {
        kind: Some("openvpn".into()),
        implementation: Some("openvpn 2.6.14".into()),
        interface_mtu: Some(9000),
        tcp_maxseg: Some(8948),
        link_mtu: Some(1500),
        observed: Some(TunnelObservation {
            socket_buffers: Some(SocketBuffers {
                rcv_before: 212_992,
                rcv_after: 425_984,
                snd_before: 212_992,
                snd_after: 8_388_608,
            }),
            rcvbuf_requested: Some(4_194_304),
            sndbuf_requested: Some(4_194_304),
            txqueuelen: Some(500),
            tx_packets: Some(100_000),
            tx_dropped: Some(42),
            encap: Some("openvpn-udp".into()),
            predicted_inner_mtu: Some(1448),
            predicted_mss: Some(1408),
            sources: Vec::new(),
        }),
    };
    let entries = [
        entry("net.core.rmem_max", "212992"),
        entry("net.core.wmem_max", "4194304"),
    ];
    let f = findings(Some(&run(t)), &entries, "runs.db");
    let capped = rule(&f, "vpn-socket-buffer-capped");
    assert_eq!(
        (capped.severity, capped.key.as_str()),
        (Severity::Warning, "net.core.rmem_max")
    );
    assert_eq!(capped.fix, Fix::Set("4194304".into()));
    assert!(capped.why.contains("212992 -> 425984"), "{}", capped.why);
    assert!(
        capped
            .source
            .contains("stored run 7 (2025-11-24 16:00:00 UTC, openvpn 2.6.14)"),
        "{}",
        capped.source
    );
    let fits = rule(&f, "vpn-socket-buffer-fits");
    assert_eq!(fits.key, "net.core.wmem_max");
    assert!(fits.why.contains("212992 -> 8388608"), "{}", fits.why);
    let drops = rule(&f, "vpn-tun-queue-drops");
    assert_eq!(drops.severity, Severity::Warning);
    assert!(drops.why.contains("dropped 42"), "{}", drops.why);
    assert_eq!(drops.fix, Fix::Set("txqueuelen 1000".into()));
    let mtu = rule(&f, "vpn-mtu-above-link");
    assert_eq!(mtu.severity, Severity::Info);
    assert!(
        mtu.why.contains("1448") && mtu.why.contains("1408"),
        "{}",
        mtu.why
    );
    assert!(
        mtu.source
            .starts_with("calc tunnel --encap openvpn-udp on link MTU 1500")
    );
    assert!(f.iter().all(|x| x.severity != Severity::Error));
}

#[test]
fn an_old_run_without_observations_gives_info_only() -> Result<(), serde_json::Error> {
    // As stored before linerate recorded what the tunnel showed.
    let t: TunnelRecord = serde_json::from_value(serde_json::json!({
        "kind": "wireguard", "implementation": "wireguard-go 0.0.2023",
        "interface_mtu": 1420, "tcp_maxseg": 1368, "link_mtu": 1500
    }))?;
    let f = findings(
        Some(&run(t)),
        &[entry("net.core.rmem_max", "212992")],
        "runs.db",
    );
    assert!(f.iter().all(|x| x.severity == Severity::Info), "{f:#?}");
    rule(&f, "vpn-tun-queue-unknown");
    rule(&f, "vpn-socket-buffer-default");
    assert!(
        rule(&f, "vpn-tun-queue-unknown")
            .source
            .contains("wireguard-go 0.0.2023")
    );
    Ok(())
}

use super::*;

struct FakeHost {
    host_only: &'static [&'static str],
    nft: bool,
}

impl HostCheck for FakeHost {
    fn sysctl(&self, key: &str) -> Result<(), String> {
        if self.host_only.contains(&key) {
            Err(format!("refusing {key}: not per network namespace"))
        } else {
            Ok(())
        }
    }
    fn tool(&self, name: &str) -> bool {
        name != "nft" || self.nft
    }
}

const HOST: FakeHost = FakeHost {
    host_only: &["net.core.netdev_max_backlog"],
    nft: true,
};

fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/lab")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn err(text: &str, host: &dyn HostCheck) -> ExperimentError {
    match parse(text, Path::new("exp.toml"), host) {
        Ok(e) => panic!("expected an error, got {e:?}"),
        Err(e) => e,
    }
}

const MINIMAL: &str = "[experiment]\nname = \"x\"\n[workload]\nmode = \"tcp\"\nduration = \"1s\"\n";

#[test]
fn the_examples_are_valid() -> Result<(), ExperimentError> {
    let wb = parse(
        &example("window-buffers.toml"),
        Path::new("window-buffers.toml"),
        &HOST,
    )?;
    assert_eq!(wb.variants.len(), 3);
    assert_eq!(wb.variants[0].name, "kernel-default");
    assert_eq!(wb.repetitions, 5);
    let l0 = &wb.variants[1].spec.links[0];
    assert_eq!(
        l0.emulation.as_ref().map(|e| e[0].rate),
        Some(Some(BitRate::from_gbps(1)))
    );
    assert_eq!(wb.variants[1].spec.sysctls.len(), 2);
    let rf = parse(
        &example("router-firewall.toml"),
        Path::new("router-firewall.toml"),
        &HOST,
    )?;
    assert_eq!(
        rf.variants[2].firewall,
        Some(Firewall::Stateless { rules: 1000 })
    );
    assert_eq!(
        rf.variants[0].workload.frame,
        Some(ByteSize::from_bytes(64))
    );
    let sweep = parse(
        &example("rmem-sweep.toml"),
        Path::new("rmem-sweep.toml"),
        &HOST,
    )?;
    assert_eq!(sweep.variants.len(), 6);
    assert_eq!(sweep.variants[0].name, "recv:net.ipv4.tcp_rmem=262144");
    let last = &sweep.variants[5].spec.sysctls;
    assert_eq!(last[0].key, "net.ipv4.tcp_wmem");
    assert_eq!(
        (last[1].node.as_str(), last[1].value.as_str()),
        ("recv", "4096 131072 16777216")
    );
    Ok(())
}

#[test]
fn a_file_without_variants_has_one_baseline() -> Result<(), ExperimentError> {
    let e = parse(MINIMAL, Path::new("m.toml"), &NoHostCheck)?;
    assert_eq!(e.variants.len(), 1);
    assert_eq!(e.variants[0].name, "baseline");
    assert!(e.variants[0].spec.links[0].emulation.is_none());
    Ok(())
}

#[test]
fn errors_name_the_file_line_and_field() {
    let e = err(&format!("{MINIMAL}bogus = 1\n"), &HOST);
    assert_eq!((e.line, e.file.as_path()), (6, Path::new("exp.toml")));
    assert!(e.message.contains("bogus"), "{e}");

    let e = err(&format!("{MINIMAL}[lab]\ndelay = \"20 parsecs\"\n"), &HOST);
    assert_eq!((e.line, e.field.as_str()), (7, "lab.delay"), "{e}");

    let e = err(&format!("{MINIMAL}[lab]\ndelay = \"l1=5ms\"\n"), &HOST);
    assert_eq!(e.line, 7, "{e}");
    assert!(e.message.contains("no link l1"), "{e}");

    let text = format!(
        "{MINIMAL}[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nsysctl = [\"gen:vm.swappiness=1\"]\n"
    );
    let e = err(&text, &HOST);
    assert_eq!((e.line, e.field.as_str()), (10, "variant[1].sysctl"), "{e}");
    assert!(e.message.contains("whole host"), "{e}");

    let text = format!(
        "{MINIMAL}[[variant]]\nname = \"a\"\nsysctl = [\"recv:net.core.netdev_max_backlog=5000\"]\n"
    );
    assert!(
        err(&text, &HOST)
            .message
            .contains("not per network namespace")
    );

    let text =
        format!("{MINIMAL}[[variant]]\nname = \"a\"\nsysctl = [\"dut:net.core.somaxconn=5\"]\n");
    assert!(err(&text, &HOST).message.contains("no node \"dut\""));

    let text = format!("{MINIMAL}[[variant]]\nname = \"a\"\nfirewall = \"stateful\"\n");
    let e = err(
        &text,
        &FakeHost {
            host_only: &[],
            nft: false,
        },
    );
    assert!(
        e.message.contains("apt-get install nftables") && e.line == 8,
        "{e}"
    );

    let text = format!("{MINIMAL}[[variant]]\nname = \"a\"\n[[variant]]\nname = \"a\"\n");
    assert!(err(&text, &HOST).message.contains("duplicate"));

    let e = err(
        "[experiment]\nname = \"x\"\n[workload]\nmode = \"warp\"\nduration = \"1s\"\n",
        &HOST,
    );
    assert_eq!((e.line, e.field.as_str()), (4, "workload.mode"));
    let e = err(
        "[experiment]\nname = \"x\"\nrepetitions = 0\n[workload]\nmode = \"tcp\"\nduration = \"1s\"\n",
        &HOST,
    );
    assert_eq!((e.line, e.field.as_str()), (3, "experiment.repetitions"));
    assert!(
        e.to_string()
            .starts_with("exp.toml:3:15: experiment.repetitions: "),
        "{e}"
    );
}

#[test]
fn sweeps_expand_link_firewall_and_stream_parameters() -> Result<(), ExperimentError> {
    let text = format!("{MINIMAL}[sweep]\nparameter = \"link.mtu\"\nvalues = [1500, 9000]\n");
    let e = parse(&text, Path::new("s.toml"), &HOST)?;
    assert_eq!(
        e.variants
            .iter()
            .map(|v| v.spec.links[0].mtu)
            .collect::<Vec<_>>(),
        [1500, 9000]
    );
    let text = format!("{MINIMAL}[sweep]\nparameter = \"streams\"\nvalues = [1, 4]\n");
    let e = parse(&text, Path::new("s.toml"), &HOST)?;
    assert_eq!(e.variants[1].workload.streams, 4);
    let text = format!(
        "{MINIMAL}[sweep]\nparameter = \"firewall\"\nvalues = [\"stateless:10\", \"stateful\"]\n"
    );
    let e = parse(&text, Path::new("s.toml"), &HOST)?;
    assert_eq!(e.variants[1].firewall, Some(Firewall::Stateful));
    let text = format!("{MINIMAL}[sweep]\nparameter = \"link.colour\"\nvalues = [1]\n");
    assert!(err(&text, &HOST).message.contains("unknown link parameter"));
    let text = format!("{MINIMAL}[sweep]\nparameter = \"link.mtu\"\nvalues = [10]\n");
    assert!(err(&text, &HOST).message.contains("MTU"));
    Ok(())
}

#[test]
fn the_openvpn_sweep_is_a_grid_of_tun_mtu_by_cipher() -> Result<(), ExperimentError> {
    let e = parse(
        &example("openvpn-tun-mtu.toml"),
        Path::new("openvpn-tun-mtu.toml"),
        &HOST,
    )?;
    assert_eq!(e.variants.len(), 16);
    let sweep = e.sweep.clone().unwrap_or_else(|| panic!("no sweep"));
    assert_eq!(sweep.bases, ["AES-256-GCM", "CHACHA20-POLY1305"]);
    assert_eq!(sweep.values.len(), 8);
    let v = &e.variants[8 + 4];
    assert_eq!(v.name, "CHACHA20-POLY1305 tunnel.tun-mtu=24000");
    match &v.spec.tunnel {
        Some(crate::tunnel::TunnelSpec::Openvpn(o)) => {
            assert_eq!(o.cipher, "CHACHA20-POLY1305");
            assert_eq!(o.tun_mtu, Some(24000));
            assert_eq!((o.fragment, o.mssfix), (Some(0), Some(0)));
        }
        other => panic!("{other:?}"),
    }
    Ok(())
}

#[test]
fn a_variant_may_name_another_tunnel_or_none() -> Result<(), ExperimentError> {
    let e = parse(
        &example("wireguard-vs-openvpn.toml"),
        Path::new("wireguard-vs-openvpn.toml"),
        &HOST,
    )?;
    let kinds: Vec<Option<&str>> = e
        .variants
        .iter()
        .map(|v| v.spec.tunnel.as_ref().map(crate::tunnel::TunnelSpec::kind))
        .collect();
    assert_eq!(
        kinds,
        [None, Some("wireguard"), Some("openvpn"), Some("openvpn")]
    );
    Ok(())
}

#[test]
fn a_bad_tunnel_option_names_its_line_and_field() {
    let text = format!(
        "{MINIMAL}[lab]\ntunnel = \"openvpn\"\ntunnel_options = [\"cipher=AES-128-GCM\",\n  \"tun-mtu=big\"]\n"
    );
    let e = err(&text, &HOST);
    assert_eq!(e.line, 9, "{e}");
    assert_eq!(e.field, "lab.tunnel_options", "{e}");
    assert!(e.message.contains("tun-mtu"), "{e}");
    let e = err(&format!("{MINIMAL}[lab]\ntunnel = \"gre\"\n"), &HOST);
    assert!(e.field == "lab.tunnel" && e.message.contains("gre"), "{e}");
    let text = format!("{MINIMAL}[sweep]\nparameter = \"tunnel.tun-mtu\"\nvalues = [1500]\n");
    let e = err(&text, &HOST);
    assert!(e.message.contains("no tunnel is set"), "{e}");
}

#[test]
fn rate_layer_is_l1_unless_the_lab_or_a_variant_says_l2() -> Result<(), ExperimentError> {
    use crate::impair::RateLayer;
    let text = format!(
        "{MINIMAL}[lab]\nrate = \"100M\"\n[[variant]]\nname = \"wire\"\n[[variant]]\nname = \"frames\"\nlink = {{ rate_layer = \"l2\" }}\n"
    );
    let e = parse(&text, Path::new("x.toml"), &HOST)?;
    let layer = |v: usize| {
        e.variants[v].spec.links[0]
            .emulation
            .as_ref()
            .map(|d| (d[0].rate_layer, d[1].rate_layer))
    };
    assert_eq!(layer(0), Some((RateLayer::L1, RateLayer::L1)));
    assert_eq!(layer(1), Some((RateLayer::L2, RateLayer::L2)));
    let all_l2 = parse(
        &format!("{MINIMAL}[lab]\nrate = \"100M\"\nrate_layer = \"L2\"\n"),
        Path::new("x.toml"),
        &HOST,
    )?;
    assert_eq!(
        all_l2.variants[0].spec.links[0]
            .emulation
            .as_ref()
            .map(|d| d[0].rate_layer),
        Some(RateLayer::L2)
    );
    let bad = err(
        &format!("{MINIMAL}[lab]\nrate = \"100M\"\nrate_layer = \"l3\"\n"),
        &HOST,
    );
    assert_eq!(
        (bad.line, bad.field.as_str()),
        (8, "lab.rate_layer"),
        "{bad}"
    );
    assert!(bad.message.contains("expected l1"), "{bad}");
    Ok(())
}

#[test]
fn pps_workloads_use_the_frame_generator_unless_the_file_says_socket() -> Result<(), ExperimentError>
{
    let pps = "[experiment]\nname = \"x\"\n[workload]\nmode = \"pps\"\nduration = \"1s\"\n";
    let e = parse(pps, Path::new("exp.toml"), &HOST)?;
    assert_eq!(e.variants[0].workload.generator, Some(PpsGenerator::Frames));
    let socket = format!("{pps}generator = \"socket\"\n");
    let e = parse(&socket, Path::new("exp.toml"), &HOST)?;
    assert_eq!(e.variants[0].workload.generator, Some(PpsGenerator::Socket));
    let rf = parse(
        &example("router-firewall.toml"),
        Path::new("router-firewall.toml"),
        &HOST,
    )?;
    assert_eq!(
        rf.variants[0].workload.generator,
        Some(PpsGenerator::Frames)
    );
    // Other modes have no generator to choose; a wrong name is named.
    let e = err(&format!("{MINIMAL}generator = \"frames\"\n"), &HOST);
    assert_eq!((e.line, e.field.as_str()), (6, "workload.generator"));
    let e = err(&format!("{pps}generator = \"raw\"\n"), &HOST);
    assert!(e.message.contains("frames or socket"), "{e}");
    // tcp has none at all.
    let e = parse(MINIMAL, Path::new("exp.toml"), &HOST)?;
    assert_eq!(e.variants[0].workload.generator, None);
    Ok(())
}

#[test]
fn rfc2544_workloads_need_a_router_and_default_to_64_byte_frames() -> Result<(), ExperimentError> {
    let text = "[experiment]\nname = \"x\"\n[lab]\ntopology = \"router\"\n[workload]\nmode = \
                \"rfc2544\"\nduration = \"2s\"\n";
    let e = parse(text, Path::new("exp.toml"), &HOST)?;
    assert_eq!(e.variants[0].workload.mode, WorkloadMode::Rfc2544);
    assert_eq!(e.variants[0].workload.frame, Some(ByteSize::from_bytes(64)));
    let pair = text.replace("router", "pair");
    let e = err(&pair, &HOST);
    assert_eq!(e.field, "workload.mode");
    assert!(e.message.contains("router"), "{e}");
    let ex = parse(
        &example("router-rfc2544.toml"),
        Path::new("router-rfc2544.toml"),
        &HOST,
    )?;
    assert_eq!(ex.variants.len(), 2);
    // It writes the search's defaults out.
    let w = &ex.variants[0].workload;
    assert_eq!(
        w.pdr.map(Percent::fraction),
        Some(crate::rfc2544::search::DEFAULT_PDR)
    );
    assert_eq!(w.phases, Some(crate::rfc2544::search::DEFAULT_PHASES));
    assert_eq!(w.repeat, Some(crate::rfc2544::search::DEFAULT_REPEATS));
    Ok(())
}

const RFC2544: &str = "[experiment]\nname = \"x\"\n[lab]\ntopology = \"router\"\n[workload]\nmode \
                       = \"rfc2544\"\nduration = \"2s\"\n";

#[test]
fn rfc2544_workloads_take_the_search_s_settings() -> Result<(), ExperimentError> {
    let text = format!(
        "{RFC2544}pdr = \"0.1%\"\nwidth = \"1%\"\nphases = 3\nrepeat = 1\ninitial_trial = \
         \"500ms\"\n"
    );
    let w = parse(&text, Path::new("exp.toml"), &HOST)?.variants[0]
        .workload
        .clone();
    assert_eq!(w.pdr, Some(Percent::new(0.1)));
    assert_eq!(w.width, Some(Percent::new(1.0)));
    assert_eq!((w.phases, w.repeat), (Some(3), Some(1)));
    assert_eq!(w.initial_trial, Some(Duration::from_millis(500)));
    // As long as the final trials is fine.
    let same = format!("{RFC2544}initial_trial = \"2s\"\n");
    let w = &parse(&same, Path::new("exp.toml"), &HOST)?.variants[0].workload;
    assert_eq!(w.initial_trial, Some(Duration::from_secs(2)));
    // Absent, they stay absent (the search's defaults) and out of the stored experiment.
    let e = parse(RFC2544, Path::new("exp.toml"), &HOST)?;
    let w = &e.variants[0].workload;
    assert_eq!(
        (w.pdr, w.width, w.phases, w.repeat, w.initial_trial),
        (None, None, None, None, None)
    );
    let json = serde_json::to_value(w).expect("serialize");
    for key in ["pdr", "width", "phases", "repeat", "initial_trial"] {
        assert!(json.get(key).is_none(), "{key} in {json}");
    }
    // A workload stored before these keys existed (without them) still reads.
    let back: Workload = serde_json::from_value(json).expect("an old workload reads");
    assert_eq!(&back, w);
    // Set, they round-trip through the store's JSON.
    let set = parse(&text, Path::new("exp.toml"), &HOST)?.variants[0]
        .workload
        .clone();
    let json = serde_json::to_value(&set).expect("serialize");
    assert_eq!(json["phases"], 3, "{json}");
    let back: Workload = serde_json::from_value(json).expect("reads back");
    assert_eq!(back, set);
    Ok(())
}

#[test]
fn latency_trials_are_on_unless_an_rfc2544_workload_says_false() -> Result<(), ExperimentError> {
    let on = parse(RFC2544, Path::new("exp.toml"), &HOST)?;
    assert_eq!(on.variants[0].workload.latency, None);
    let off = parse(
        &format!("{RFC2544}latency = false\n"),
        Path::new("exp.toml"),
        &HOST,
    )?;
    assert_eq!(off.variants[0].workload.latency, Some(false));
    // Another mode refuses it, naming the key and its line.
    let e = err(&format!("{MINIMAL}latency = false\n"), &HOST);
    assert_eq!((e.line, e.field.as_str()), (6, "workload.latency"), "{e}");
    assert!(e.message.contains("only mode = \"rfc2544\""), "{e}");
    // Not a boolean: TOML's own error, at the value.
    let e = err(&format!("{RFC2544}latency = \"no\"\n"), &HOST);
    assert_eq!(e.line, 8, "{e}");
    Ok(())
}

#[test]
fn bad_search_settings_name_their_line_column_and_key() {
    // Line 8 follows RFC2544's seven; the value starts after `key = `.
    let cases: [(&str, &str, usize, &str); 12] = [
        ("pdr", "\"0%\"", 7, "more than 0 and less than 100 %"),
        ("pdr", "\"100%\"", 7, "more than 0 and less than 100 %"),
        ("pdr", "0.5", 7, "write 0.5% for percent"),
        ("pdr", "\"lots\"", 7, "percentage"),
        ("width", "\"50%\"", 9, "more than 0 and less than 50 %"),
        ("width", "\"0%\"", 9, "more than 0 and less than 50 %"),
        ("phases", "0", 10, "between 1 and 10"),
        ("phases", "11", 10, "between 1 and 10"),
        ("repeat", "0", 10, "between 1 and 20"),
        ("repeat", "-1", 10, "between 1 and 20"),
        (
            "initial_trial",
            "\"3s\"",
            17,
            "3 s is longer than workload.duration 2 s",
        ),
        ("initial_trial", "\"0s\"", 17, "more than 0"),
    ];
    for (key, value, column, says) in cases {
        let e = err(&format!("{RFC2544}{key} = {value}\n"), &HOST);
        assert_eq!(
            (e.line, e.column, e.field.as_str(), e.file.as_path()),
            (
                8,
                column,
                format!("workload.{key}").as_str(),
                Path::new("exp.toml")
            ),
            "{key} = {value}: {e}"
        );
        assert!(e.message.contains(says), "{key} = {value}: {e}");
        assert!(e.to_string().contains("exp.toml:8:"), "{e}");
    }
    let e = err(&format!("{RFC2544}initial_trial = \"soon\"\n"), &HOST);
    assert_eq!(
        (e.line, e.field.as_str()),
        (8, "workload.initial_trial"),
        "{e}"
    );
    // Not a number at all: TOML's own error, at the value.
    let e = err(&format!("{RFC2544}phases = \"2\"\n"), &HOST);
    assert_eq!((e.line, e.column), (8, 10), "{e}");
}

#[test]
fn the_search_settings_are_refused_in_other_modes() {
    for mode in ["tcp", "udp", "pps", "rr"] {
        let text = format!(
            "[experiment]\nname = \"x\"\n[lab]\ntopology = \"router\"\n[workload]\nmode = \
             \"{mode}\"\nduration = \"2s\"\nrepeat = 3\npdr = \"0.1%\"\n"
        );
        let e = err(&text, &HOST);
        // The first key written is named, with its place.
        assert_eq!(
            (e.line, e.column, e.field.as_str()),
            (8, 10, "workload.repeat"),
            "{mode}: {e}"
        );
        assert!(e.message.contains("mode = \"rfc2544\""), "{mode}: {e}");
        assert!(e.message.contains(mode), "{mode}: {e}");
    }
}

//! `linerate calc` through the real binary: the acceptance figures of the Foundation issue,
//! `--json` schemas, bad input (exit 2, flag named) and snapshots of help and the main table.

#![forbid(unsafe_code)]

mod support;

use serde_json::Value;
use support::bin::{json, run, stdout, with_closed_stdout};

/// Runs a command that must fail as a usage error; returns stderr.
fn usage_error(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(out.status.code(), Some(2), "linerate {args:?}: {out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let err = String::from_utf8(out.stderr).expect("utf-8");
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn f64_at(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {pointer} in {v}"))
}

fn frames_per_second(link: &str, frame: &str) -> u64 {
    let v = json(&["calc", "rate", "--link", link, "--frame", frame]);
    assert_eq!(v["schema"], "linerate.calc.rate/1");
    f64_at(&v, "/rows/0/frames_per_second").floor() as u64
}

#[test]
fn acceptance_frames_per_second() {
    assert_eq!(frames_per_second("1G", "64"), 1_488_095);
    assert_eq!(frames_per_second("10G", "64"), 14_880_952);
    assert_eq!(frames_per_second("1G", "1518"), 81_274);
    let text = stdout(&["calc", "rate", "--link", "1G", "--frame", "64,1518"]);
    assert!(text.contains("1,488,095"), "{text}");
    assert!(text.contains("81,274"), "{text}");
    let text = stdout(&["calc", "rate", "--link", "10G", "--frame", "64"]);
    assert!(text.contains("14,880,952"), "{text}");
}

#[test]
fn full_duplex_gigabit_router_forwards_3_mpps() {
    let v = json(&["calc", "rate", "--link", "1G", "--frame", "64"]);
    assert_eq!(v["duplex"], "full");
    let need = f64_at(&v, "/rows/0/forwarding_need");
    assert!((need - 2_976_190.48).abs() < 0.01, "{need}");
    let v = json(&[
        "calc", "rate", "--link", "1G", "--frame", "64", "--duplex", "half",
    ]);
    assert_eq!(
        f64_at(&v, "/rows/0/forwarding_need"),
        f64_at(&v, "/rows/0/frames_per_second")
    );
}

#[test]
fn acceptance_simple_imix_is_350_kpps_at_the_ethernet_layer() {
    let v = json(&["calc", "rate", "--link", "1G", "--frame", "imix"]);
    let eth = f64_at(&v, "/rows/0/ethernet_layer_pps");
    assert!((345_000.0..355_000.0).contains(&eth), "{eth}");
    assert_eq!(eth.round() as u64, 352_775);
    // On the wire (FCS, padding, preamble and gap counted) fewer fit.
    assert_eq!(
        f64_at(&v, "/rows/0/frames_per_second").floor() as u64,
        327_367
    );
    assert_eq!(v["imix"].as_array().map(Vec::len), Some(3));
    let text = stdout(&["calc", "rate", "--link", "1G", "--frame", "imix"]);
    assert!(text.contains("352,775 pps"), "{text}");
    assert!(text.contains("Ethernet layer"), "{text}");
}

#[test]
fn default_table_has_rfc2544_sizes_and_imix_and_names_layers() {
    let v = json(&["calc", "rate", "--link", "10G"]);
    let sizes: Vec<&str> = v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["frame"].as_str())
        .collect();
    assert_eq!(
        sizes,
        ["64", "128", "256", "512", "1024", "1280", "1518", "imix"]
    );
    let text = stdout(&["calc", "rate", "--link", "10G"]);
    for layer in ["L1", "L2", "L3"] {
        assert!(text.contains(layer), "{layer}: {text}");
    }
}

#[test]
fn acceptance_bus_figures() {
    let text = stdout(&["calc", "bus", "--pci", "32bit/66MHz"]);
    assert!(text.contains("264 MB/s"), "{text}");
    let v = json(&["calc", "bus", "--pci", "32bit/66MHz"]);
    assert_eq!(v["schema"], "linerate.calc.bus/1");
    assert_eq!(f64_at(&v, "/bandwidth/usable"), 264e6 * 8.0);

    let v = json(&["calc", "bus", "--pcix", "64bit/133MHz", "--nics", "2x1G"]);
    assert_eq!(f64_at(&v, "/bandwidth/usable"), 1064e6 * 8.0);
    assert_eq!(f64_at(&v, "/verdict/per_nic_share"), 532e6 * 8.0);
    assert_eq!(v["verdict"]["enough"], true);
    let text = stdout(&["calc", "bus", "--pcix", "64bit/133MHz", "--nics", "2x1G"]);
    assert!(text.contains("1064 MB/s"), "{text}");
    assert!(text.contains("532 MB/s"), "{text}");
    assert!(text.contains("ENOUGH"), "{text}");
}

#[test]
fn pcie_verdicts() {
    let v = json(&["calc", "bus", "--pcie", "gen3x8", "--nics", "2x10G"]);
    assert_eq!(v["encoding"], "128b/130b");
    assert_eq!(v["verdict"]["enough"], true);
    let v = json(&["calc", "bus", "--pcie", "gen2x1", "--nics", "2x10G"]);
    assert_eq!(f64_at(&v, "/bandwidth/usable"), 4e9);
    assert_eq!(v["verdict"]["enough"], false);
    let text = stdout(&["calc", "bus", "--pcie", "gen2x1", "--nics", "2x10G"]);
    assert!(text.contains("NOT ENOUGH"), "{text}");
}

#[test]
fn bdp_figures() {
    let v = json(&[
        "calc", "bdp", "--rate", "1G", "--rtt", "40ms", "--window", "64KiB", "--loss", "0.01%",
    ]);
    assert_eq!(v["schema"], "linerate.calc.bdp/1");
    assert_eq!(f64_at(&v, "/bdp"), 5_000_000.0);
    assert_eq!(f64_at(&v, "/window_scale/shift"), 7.0);
    assert_eq!(f64_at(&v, "/linux_buffer/buffer"), 10_000_000.0);
    assert_eq!(f64_at(&v, "/window/throughput"), 13_107_200.0);
    assert_eq!(v["window"]["limits"], true);
    assert!((f64_at(&v, "/mathis/c") - 1.2247).abs() < 1e-4);
    let mathis = f64_at(&v, "/mathis/throughput");
    assert!((mathis - 35_468_611.0).abs() < 1.0, "{mathis}");
    let rfc = f64_at(&v, "/rfc6349/max_tcp_throughput");
    assert!((rfc - 949_284_785.0).abs() < 1_000.0, "{rfc}");
    assert_eq!(f64_at(&v, "/ceiling"), 13_107_200.0);
    let text = stdout(&["calc", "bdp", "--rate", "1G", "--rtt", "40ms"]);
    assert!(text.contains("2 × BDP"), "{text}");
    assert!(text.contains("tcp_rmem"), "{text}");
}

#[test]
fn tunnel_figures() {
    let v = json(&["calc", "tunnel", "--mtu", "1500", "--encap", "wireguard"]);
    assert_eq!(v["schema"], "linerate.calc.tunnel/1");
    assert_eq!(f64_at(&v, "/inner_mtu"), 1440.0);
    let v = json(&["calc", "tunnel", "--encap", "wireguard", "--outer", "ipv6"]);
    assert_eq!(f64_at(&v, "/inner_mtu"), 1420.0);
    let v = json(&[
        "calc",
        "tunnel",
        "--encap",
        "pppoe,wireguard",
        "--link",
        "1G",
    ]);
    assert_eq!(f64_at(&v, "/inner_mtu"), 1432.0);
    assert_eq!(f64_at(&v, "/tcp_mss"), 1392.0);
    assert!(f64_at(&v, "/goodput") > 897e6);
    let v = json(&["calc", "tunnel", "--encap", "vxlan", "--encap", "gre"]);
    assert_eq!(f64_at(&v, "/inner_mtu"), 1500.0 - 50.0 - 24.0);
    let list = json(&["calc", "tunnel", "--list"]);
    assert_eq!(list["schema"], "linerate.calc.tunnel-list/1");
    let names: Vec<&str> = list["encapsulations"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    for name in [
        "openvpn-udp",
        "openvpn-tcp",
        "wireguard",
        "ipsec-esp-aes-gcm",
        "gre",
        "vxlan",
        "pppoe",
        "vlan",
    ] {
        assert!(names.contains(&name), "{name}");
    }
}

#[test]
fn bad_input_names_the_flag_and_exits_2() {
    let e = usage_error(&["calc", "rate", "--link", "10GB"]);
    assert!(e.contains("--link") && e.contains("write 10G"), "{e}");
    let e = usage_error(&["calc", "rate", "--link", "10G", "--frame", "63"]);
    assert!(
        e.contains("--frame") && e.contains("minimum frame of 64"),
        "{e}"
    );
    let e = usage_error(&["calc", "rate", "--link", "0"]);
    assert!(e.contains("--link"), "{e}");
    let e = usage_error(&["calc", "tunnel", "--encap", "carrier-pigeon"]);
    assert!(e.contains("--encap") && e.contains("wireguard"), "{e}");
    let e = usage_error(&["calc", "tunnel", "--mtu", "100", "--encap", "wireguard"]);
    assert!(e.contains("--encap") && e.contains("does not fit"), "{e}");
    let e = usage_error(&["calc", "tunnel", "--mtu", "70000", "--encap", "gre"]);
    assert!(e.contains("--mtu"), "{e}");
    let e = usage_error(&[
        "calc", "bdp", "--rate", "1G", "--rtt", "40ms", "--mss", "9000",
    ]);
    assert!(e.contains("--mss"), "{e}");
    let e = usage_error(&["calc", "bdp", "--rate", "1G", "--rtt", "0"]);
    assert!(e.contains("--rtt"), "{e}");
    let e = usage_error(&["calc", "bus", "--pci", "48bit/33MHz"]);
    assert!(e.contains("--pci"), "{e}");
    let e = usage_error(&["calc", "bus", "--pcie", "gen3x8", "--nics", "2x10GB"]);
    assert!(e.contains("--nics"), "{e}");
    usage_error(&["calc", "bus"]);
    usage_error(&["calc", "bus", "--pci", "32/33", "--pcie", "gen3x8"]);
}

/// Issue 23 item 1: `--rtt 80` was read as 80 seconds ("BDP 10 GB"); a bare number is now
/// refused with the likely form, and a long RTT written with its unit is still questioned.
#[test]
fn a_bare_rtt_is_refused_with_the_likely_form() {
    let e = usage_error(&["calc", "bdp", "--rate", "1G", "--rtt", "80"]);
    assert!(e.contains("'80' needs a unit: 80ms?"), "{e}");
    let text = stdout(&["calc", "bdp", "--rate", "1G", "--rtt", "40s"]);
    assert!(
        text.contains("warning: a round-trip time of 40 s is unusual"),
        "{text}"
    );
}

/// `--link -10G` says "negative", not clap's "unexpected argument '-1' found".
#[test]
fn a_negative_rate_says_negative() {
    for args in [
        &["calc", "rate", "--link", "-10G"][..],
        &["calc", "bdp", "--rate", "-1G", "--rtt", "80ms"],
        &["calc", "bdp", "--rate", "1G", "--rtt", "-80ms"],
    ] {
        let e = usage_error(args);
        assert!(e.contains("is negative"), "{args:?}: {e}");
        assert!(!e.contains("unexpected argument"), "{args:?}: {e}");
    }
}

#[test]
fn main_job_table() {
    insta::assert_snapshot!(stdout(&["calc", "rate", "--link", "10G"]));
}

#[test]
fn tunnel_list() {
    insta::assert_snapshot!(stdout(&["calc", "tunnel", "--list"]));
}

#[test]
fn help_calc() {
    insta::assert_snapshot!(stdout(&["calc", "--help"]));
}

#[test]
fn help_calc_rate() {
    insta::assert_snapshot!(stdout(&["calc", "rate", "--help"]));
}

#[test]
fn help_calc_bus() {
    insta::assert_snapshot!(stdout(&["calc", "bus", "--help"]));
}

#[test]
fn help_calc_bdp() {
    insta::assert_snapshot!(stdout(&["calc", "bdp", "--help"]));
}

#[test]
fn help_calc_tunnel() {
    insta::assert_snapshot!(stdout(&["calc", "tunnel", "--help"]));
}

#[test]
fn readme_calc_commands_run() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let mut ran = 0;
    for line in readme.lines() {
        let Some(command) = line.strip_prefix("linerate calc ") else {
            continue;
        };
        let command = command.split('#').next().unwrap_or("");
        let mut args = vec!["calc"];
        args.extend(command.split_whitespace());
        stdout(&args);
        ran += 1;
    }
    assert!(ran >= 5, "found {ran} calc commands in README.md");
}

/// `linerate calc rate --json | head -1` is not an error.
#[test]
fn closed_stdout_is_not_an_error() {
    for args in [
        &["calc", "rate", "--link", "10G", "--json"][..],
        &["calc", "rate", "--link", "10G"][..],
    ] {
        let (code, err) = with_closed_stdout(args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

//! The report's host facts: what the run's document says about the measuring host (iperf3's
//! `system_info`, socket buffers, congestion control), the facts of the linerate host snapshot
//! stored with it that bear on a measurement (kernel, CPU model and cores, memory), and for a
//! `lab run` the test bed (topology, link emulation, tunnel implementation). One table per
//! distinct set of facts, naming the runs that share it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use linerate_store::{RunId, RunRecord};
use serde_json::Value;

use crate::format::{self, escape_html as esc};
use linerate_store::lab_run::LabRun;

/// `schema` of a linerate host snapshot (`linerate-probe`'s `HostSnapshot`).
pub const SNAPSHOT_SCHEMA: &str = "linerate.host-snapshot/1";

/// Labelled facts, in display order.
pub type Facts = Vec<(String, String)>;

/// The host facts section.
pub fn section(runs: &[(RunId, RunRecord)]) -> String {
    // Keyed by the facts themselves: runs on one host under different test beds (a variant
    // with a tunnel, one without) get a table each.
    let mut hosts: BTreeMap<String, (Vec<RunId>, Facts)> = BTreeMap::new();
    let mut order = Vec::new();
    for (id, run) in runs {
        let facts = facts(run);
        let key: String = facts.iter().map(|(k, v)| format!("{k}={v};")).collect();
        let entry = hosts.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            (Vec::new(), facts)
        });
        entry.0.push(*id);
    }
    let mut out = String::from("<section><h2>Host facts</h2>\n");
    for key in &order {
        let Some((ids, facts)) = hosts.get(key) else {
            continue;
        };
        let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            out,
            "<p class=\"note\">Run{} {}</p>\n<table><tbody>",
            if ids.len() == 1 { "" } else { "s" },
            ids.join(", ")
        );
        for (k, v) in facts.iter().take(60) {
            let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
        }
        out.push_str("</tbody></table>\n");
    }
    out.push_str("</section>\n");
    out
}

/// One run's facts: the test bed, the host snapshot's, then the document's.
pub fn facts(run: &RunRecord) -> Facts {
    let mut facts = Vec::new();
    match LabRun::of(run) {
        Ok(Some(lab)) => {
            facts.push(("lab".to_owned(), lab.lab));
            facts.push(("topology".to_owned(), lab.topology));
            facts.push(("link emulation".to_owned(), lab.emulator));
            if !lab.links.is_empty() {
                facts.push(("links".to_owned(), lab.links.join("; ")));
            }
            if let Some(t) = lab.tunnel {
                facts.push(("tunnel".to_owned(), t));
            }
            for h in lab.hosts {
                facts.push(("host".to_owned(), h));
            }
        }
        Ok(None) => {}
        Err(e) => facts.push(("lab".to_owned(), format!("unreadable: {e}"))),
    }
    if let Some(snap) = run.host.as_ref().and_then(|h| h.snapshot.as_ref()) {
        if snap["schema"] == SNAPSHOT_SCHEMA {
            snapshot_facts(snap, &mut facts);
        } else {
            flatten("", snap, 0, &mut facts);
        }
    }
    let start = &run.document["start"];
    if let Some(s) = start["system_info"].as_str() {
        facts.push(("system".to_owned(), s.to_owned()));
    }
    facts.push(("measured with".to_owned(), run.tool.clone()));
    for (key, label) in [
        ("tcp_mss_default", "default TCP MSS (bytes)"),
        ("sndbuf_actual", "socket send buffer (bytes)"),
        ("rcvbuf_actual", "socket receive buffer (bytes)"),
    ] {
        if let Some(v) = start[key].as_u64() {
            facts.push((label.to_owned(), v.to_string()));
        }
    }
    if let Some(cc) = run.document["end"]["sender_tcp_congestion"].as_str() {
        facts.push(("sender congestion control".to_owned(), cc.to_owned()));
    }
    if let Some(h) = &run.host {
        facts.push(("snapshot hash".to_owned(), h.hash.clone()));
    }
    facts
}

/// A probed value (`{"value": …}`; `{"unknown": why}` reads as `None`).
fn probed<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut at = v;
    for key in path {
        at = at.get(key)?;
    }
    at.get("value")
}

/// The snapshot facts that bear on a measurement.
fn snapshot_facts(snap: &Value, facts: &mut Facts) {
    let text = |path: &[&str]| probed(snap, path).and_then(Value::as_str);
    let count = |path: &[&str]| probed(snap, path).and_then(Value::as_u64);
    match (text(&["host", "os"]), text(&["host", "kernel"])) {
        (Some(os), Some(kernel)) => facts.push(("kernel".to_owned(), format!("{os} {kernel}"))),
        (None, Some(kernel)) => facts.push(("kernel".to_owned(), kernel.to_owned())),
        _ => {}
    }
    if let Some(h) = text(&["host", "hostname"]) {
        facts.push(("host name".to_owned(), h.to_owned()));
    }
    if let Some(m) = text(&["cpu", "model"]) {
        facts.push(("CPU model".to_owned(), m.to_owned()));
    }
    let logical = probed(snap, &["cpu", "online"])
        .and_then(Value::as_array)
        .map(Vec::len);
    let mut cores = Vec::new();
    if let Some(c) = count(&["cpu", "cores"]) {
        cores.push(format!("{c} core{}", if c == 1 { "" } else { "s" }));
    }
    if let Some(l) = logical {
        cores.push(format!("{l} logical CPU{}", if l == 1 { "" } else { "s" }));
    }
    if let Some(s) = count(&["cpu", "sockets"]) {
        cores.push(format!("{s} socket{}", if s == 1 { "" } else { "s" }));
    }
    if !cores.is_empty() {
        facts.push(("CPU cores".to_owned(), cores.join(", ")));
    }
    if let Some(n) = count(&["cpu", "numa_nodes"]) {
        facts.push(("NUMA nodes".to_owned(), n.to_string()));
    }
    if let Some(smt) = probed(snap, &["cpu", "smt"]).and_then(|s| s["control"].as_str()) {
        facts.push(("SMT".to_owned(), smt.to_owned()));
    }
    if let Some(bytes) = count(&["host", "memory"]) {
        facts.push(("memory".to_owned(), format::size(bytes)));
    }
}

/// Any other snapshot: its facts by path, three levels deep.
fn flatten(prefix: &str, v: &Value, depth: usize, out: &mut Facts) {
    match v {
        Value::Object(m) if depth < 3 => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, depth + 1, out);
            }
        }
        Value::Array(list) if depth < 3 && list.len() <= 8 => {
            for (i, v) in list.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, depth + 1, out);
            }
        }
        Value::Null => {}
        Value::String(s) => out.push((prefix.to_owned(), s.clone())),
        Value::Array(list) => out.push((prefix.to_owned(), format!("{} items", list.len()))),
        other => out.push((prefix.to_owned(), other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_snapshot_gives_the_facts_that_matter() {
        let snap = serde_json::json!({
            "schema": SNAPSHOT_SCHEMA,
            "captured_at": 1,
            "host": {"os": {"value": "Linux"}, "kernel": {"value": "6.8.0"},
                     "hostname": {"value": "bench"}, "memory": {"value": 8_000_000_000_u64}},
            "cpu": {"model": {"value": "AMD EPYC"}, "online": {"value": [0, 1, 2, 3]},
                    "cores": {"value": 2}, "sockets": {"value": 1},
                    "smt": {"value": {"control": "on", "active": true}},
                    "numa_nodes": {"unknown": "no sysfs"}},
            "interfaces": {"value": [{"name": "eth0"}]}
        });
        let mut facts = Vec::new();
        snapshot_facts(&snap, &mut facts);
        let get = |k: &str| {
            facts
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("kernel"), Some("Linux 6.8.0"));
        assert_eq!(get("CPU model"), Some("AMD EPYC"));
        assert_eq!(get("CPU cores"), Some("2 cores, 4 logical CPUs, 1 socket"));
        assert_eq!(get("memory"), Some("8.00 GB"));
        assert_eq!(get("SMT"), Some("on"));
        assert_eq!(get("NUMA nodes"), None, "unknown facts are left out");
        assert!(get("interfaces").is_none(), "no dump of the whole snapshot");
    }
}

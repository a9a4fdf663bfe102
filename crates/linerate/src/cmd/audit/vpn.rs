//! `audit --role vpn`: what the newest stored tunnel run showed (`lab run` through an OpenVPN
//! or WireGuard tunnel records the daemon's socket buffers, the tun device's queue length and
//! drops, and `calc tunnel`'s prediction beside the measured MTU and MSS), judged against this
//! host's settings. Every finding cites its evidence: the stored run (id, date) or a documented
//! fact with its reference. Without evidence a finding is info, never an error.

use linerate_store::{RunFilter, Store};
use linerate_tuning::parse::Entry;
use linerate_tuning::{Finding, Fix, Severity};
use serde_json::Value;

/// Runs looked at, newest first, for one that went through a tunnel.
const RUNS_SEARCHED: usize = 500;

/// socket(7), on SO_RCVBUF/SO_SNDBUF: the kernel doubles the value set and caps it at
/// `net.core.rmem_max`/`wmem_max` (SO_RCVBUFFORCE/SO_SNDBUFFORCE with CAP_NET_ADMIN pass it).
const SOCKET_7: &str =
    "socket(7): SO_RCVBUF/SO_SNDBUF (man7.org/linux/man-pages/man7/socket.7.html)";

/// The newest stored run with a tunnel: its id, start time and `linerate.tunnel` object.
pub struct TunnelRun {
    id: linerate_store::RunId,
    started_at: i64,
    tunnel: Value,
}

impl TunnelRun {
    fn cite(&self) -> String {
        let what = self.tunnel["implementation"]
            .as_str()
            .filter(|s| !s.is_empty())
            .or_else(|| self.tunnel["kind"].as_str())
            .unwrap_or("a tunnel");
        format!(
            "stored run {} ({}, {what})",
            self.id,
            linerate_report::format::utc(self.started_at)
        )
    }

    fn observed(&self, key: &str) -> Option<u64> {
        self.tunnel["observed"][key].as_u64()
    }
}

/// The newest run in `store` that went through a tunnel (among the newest [`RUNS_SEARCHED`]).
pub fn newest_tunnel_run(store: &Store) -> anyhow::Result<Option<TunnelRun>> {
    let listed = store.list(&RunFilter {
        last: Some(RUNS_SEARCHED),
        ..RunFilter::default()
    })?;
    let mut newest: Option<TunnelRun> = None;
    for l in listed {
        if newest
            .as_ref()
            .is_some_and(|n| (n.started_at, n.id) >= (l.started_at, l.id))
        {
            continue;
        }
        let run = store.run(l.id)?;
        let tunnel = &run.document["linerate"]["tunnel"];
        if tunnel.is_object() {
            newest = Some(TunnelRun {
                id: l.id,
                started_at: l.started_at,
                tunnel: tunnel.clone(),
            });
        }
    }
    Ok(newest)
}

fn finding(
    rule: &str,
    severity: Severity,
    key: &str,
    value: Option<String>,
    why: String,
    fix: Fix,
    source: String,
) -> Finding {
    Finding {
        rule: rule.to_owned(),
        severity,
        location: None,
        key: key.to_owned(),
        value,
        why,
        fix,
        source,
    }
}

fn live(entries: &[Entry], key: &str) -> Option<u64> {
    entries
        .iter()
        .find(|e| e.key == key)
        .and_then(|e| e.value.trim().parse().ok())
}

/// The vpn role's findings from `run` (the newest tunnel run, if any) and the host's values.
pub fn findings(run: Option<&TunnelRun>, entries: &[Entry], store_path: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(run) = run else {
        out.push(finding(
            "vpn-no-measurement",
            Severity::Info,
            "tunnel",
            None,
            format!(
                "no run through a tunnel is stored in {store_path}, so nothing here is judged from a measurement"
            ),
            Fix::Command("linerate lab run examples/lab/openvpn-tun-mtu.toml".into()),
            "linerate lab run --tunnel (issue 14)".into(),
        ));
        for (key, what) in [
            ("net.core.rmem_max", "rcvbuf"),
            ("net.core.wmem_max", "sndbuf"),
        ] {
            if let Some(v) = live(entries, key) {
                out.push(finding(
                    "vpn-socket-buffer-cap",
                    Severity::Info,
                    key,
                    Some(v.to_string()),
                    format!(
                        "OpenVPN's --{what} (and any UDP tunnel daemon's socket buffer) is capped at {key} = {v} bytes unless the daemon has CAP_NET_ADMIN; the kernel doubles what it grants"
                    ),
                    Fix::None,
                    SOCKET_7.into(),
                ));
            }
        }
        return out;
    };
    let cite = run.cite();
    // Socket buffers: what OpenVPN asked for against the host's caps, and what it got.
    for (key, requested, before, after, what) in [
        (
            "net.core.rmem_max",
            "rcvbuf_requested",
            "rcv_before",
            "rcv_after",
            "rcvbuf",
        ),
        (
            "net.core.wmem_max",
            "sndbuf_requested",
            "snd_before",
            "snd_after",
            "sndbuf",
        ),
    ] {
        let cap = live(entries, key);
        let asked = run.observed(requested);
        let got = run.tunnel["observed"]["socket_buffers"][after].as_u64();
        let had = run.tunnel["observed"]["socket_buffers"][before].as_u64();
        let seen = match (had, got) {
            (Some(a), Some(b)) => format!("; {cite} logged {a} -> {b} bytes"),
            _ => String::new(),
        };
        match (asked, cap) {
            (Some(want), Some(cap)) if want > cap => out.push(finding(
                "vpn-socket-buffer-capped",
                Severity::Warning,
                key,
                Some(cap.to_string()),
                format!(
                    "OpenVPN --{what} {want} is above {key} = {cap}: a daemon without CAP_NET_ADMIN gets at most {cap} (doubled){seen}"
                ),
                Fix::Set(want.to_string()),
                format!("{SOCKET_7}; {cite}"),
            )),
            (Some(want), Some(cap)) => out.push(finding(
                "vpn-socket-buffer-fits",
                Severity::Info,
                key,
                Some(cap.to_string()),
                format!("OpenVPN --{what} {want} fits under {key} = {cap}{seen}"),
                Fix::None,
                format!("{SOCKET_7}; {cite}"),
            )),
            (None, cap) => out.push(finding(
                "vpn-socket-buffer-default",
                Severity::Info,
                key,
                cap.map(|c| c.to_string()),
                format!(
                    "the measured tunnel set no --{what}: its socket kept the kernel's default{seen}; whether a larger one helps is measured by sweeping tunnel.{what} in an experiment"
                ),
                Fix::None,
                format!("{SOCKET_7}; {cite}"),
            )),
            (Some(want), None) => out.push(finding(
                "vpn-socket-buffer-unknown",
                Severity::Info,
                key,
                None,
                format!("OpenVPN --{what} {want} was used; {key} is not in the audited values{seen}"),
                Fix::None,
                format!("{SOCKET_7}; {cite}"),
            )),
        }
    }
    // The tun device's transmit queue: drops mean packets waited for the daemon longer than
    // the queue holds.
    let qlen = run.observed("txqueuelen");
    let qlen_text = qlen.map_or_else(|| "the OS default".to_owned(), |q| q.to_string());
    match (run.observed("tx_dropped"), run.observed("tx_packets")) {
        (Some(dropped), Some(sent)) if dropped > 0 => out.push(finding(
            "vpn-tun-queue-drops",
            Severity::Warning,
            "tun txqueuelen",
            Some(qlen_text.clone()),
            format!(
                "the tun device dropped {dropped} packets on transmit (sent {sent}) at txqueuelen {qlen_text}: the daemon did not read them in time; a longer queue (OpenVPN --txqueuelen) absorbs bursts, a CPU-bound daemon needs more CPU"
            ),
            Fix::Set(format!("txqueuelen {}", qlen.map_or(1000, |q| (q * 2).max(1000)))),
            cite.clone(),
        )),
        (Some(_), Some(sent)) => out.push(finding(
            "vpn-tun-queue-ok",
            Severity::Info,
            "tun txqueuelen",
            Some(qlen_text.clone()),
            format!("the tun device dropped nothing on transmit ({sent} packets) at txqueuelen {qlen_text}"),
            Fix::None,
            cite.clone(),
        )),
        _ => out.push(finding(
            "vpn-tun-queue-unknown",
            Severity::Info,
            "tun txqueuelen",
            None,
            "the stored tunnel run has no tun counters (stored before linerate recorded them)".into(),
            Fix::None,
            cite.clone(),
        )),
    }
    // MTU and MSS: calc tunnel's prediction against the interface and the measured MSS.
    let t = &run.tunnel;
    if let (Some(predicted), Some(mtu)) = (
        run.observed("predicted_inner_mtu"),
        t["interface_mtu"].as_u64(),
    ) {
        let encap = t["observed"]["encap"].as_str().unwrap_or("the tunnel");
        let link = t["link_mtu"].as_u64().unwrap_or(0);
        let mss = t["tcp_maxseg"].as_u64();
        let pmss = run.observed("predicted_mss");
        let mss_text = mss.map_or_else(String::new, |m| format!(", measured MSS {m}"));
        let source = format!("calc tunnel --encap {encap} on link MTU {link}; {cite}");
        if mtu > predicted {
            out.push(finding(
                "vpn-mtu-above-link",
                Severity::Info,
                "tunnel mtu",
                Some(mtu.to_string()),
                format!(
                    "the tunnel MTU {mtu} is above the {predicted} that fits link MTU {link} ({encap}){mss_text}: full-size packets are fragmented under the tunnel (IP fragments, reassembled by the peer); a tun-mtu sweep shows whether that pays on this CPU, else clamp TCP's MSS to {}",
                    pmss.map_or_else(|| "the predicted MSS".to_owned(), |m| m.to_string())
                ),
                Fix::None,
                source,
            ));
        } else {
            out.push(finding(
                "vpn-mtu-fits",
                Severity::Info,
                "tunnel mtu",
                Some(mtu.to_string()),
                format!("the tunnel MTU {mtu} fits link MTU {link} ({encap}; calc tunnel: {predicted}){mss_text}"),
                Fix::None,
                source,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests;

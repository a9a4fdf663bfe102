//! The vpn role's rules: what a measured tunnel showed (`lab run` through an OpenVPN or
//! WireGuard tunnel records the daemon's socket buffers, the tun device's queue length and
//! drops, and `calc tunnel`'s prediction beside the measured MTU and MSS, see
//! `linerate_probe::tunnel`), judged against the host's settings. Every finding cites its
//! evidence: the stored run (id, date) or a documented fact with its reference. Without
//! evidence a finding is info, never an error.
//!
//! The caller finds the run (the binary reads the results store) and hands it over as a
//! [`TunnelRun`]; these rules read nothing themselves.

use linerate_probe::tunnel::TunnelObservation;

use crate::parse::Entry;
use crate::{Finding, Fix, Severity};

/// socket(7), on SO_RCVBUF/SO_SNDBUF: the kernel doubles the value set and caps it at
/// `net.core.rmem_max`/`wmem_max` (SO_RCVBUFFORCE/SO_SNDBUFFORCE with CAP_NET_ADMIN pass it).
const SOCKET_7: &str =
    "socket(7): SO_RCVBUF/SO_SNDBUF (man7.org/linux/man-pages/man7/socket.7.html)";

/// A run's tunnel as stored (the `linerate.tunnel` object of its document, written by `lab
/// run`). Every field is optional: runs stored before linerate recorded a figure lack it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TunnelRecord {
    /// `openvpn`, `wireguard`.
    pub kind: Option<String>,
    /// Which implementation ran, with its version (`openvpn 2.6.14`).
    pub implementation: Option<String>,
    /// The tunnel interface's MTU.
    pub interface_mtu: Option<u64>,
    /// TCP_MAXSEG of the load's connection through the tunnel.
    pub tcp_maxseg: Option<u64>,
    /// The smallest link MTU under the tunnel.
    pub link_mtu: Option<u64>,
    /// What the tunnel showed after the load.
    pub observed: Option<TunnelObservation>,
}

/// The stored run the rules judge from: the newest one that went through a tunnel.
#[derive(Debug, Clone, PartialEq)]
pub struct TunnelRun {
    /// Its id in the results store.
    pub id: i64,
    /// When it started, as people read it (`2026-11-28 13:17:42 UTC`).
    pub started: String,
    /// Its tunnel.
    pub tunnel: TunnelRecord,
}

impl TunnelRun {
    /// The run as a finding cites it: `stored run 7 (2026-11-28 13:17:42 UTC, openvpn 2.6.14)`.
    fn cite(&self) -> String {
        let what = self
            .tunnel
            .implementation
            .as_deref()
            .filter(|s| !s.is_empty())
            .or(self.tunnel.kind.as_deref())
            .unwrap_or("a tunnel");
        format!("stored run {} ({}, {what})", self.id, self.started)
    }

    fn observed<T: Copy>(&self, field: impl Fn(&TunnelObservation) -> Option<T>) -> Option<T> {
        self.tunnel.observed.as_ref().and_then(field)
    }
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

/// The vpn role's findings from `run` (the newest tunnel run, if any) and the host's values;
/// `store` names where runs were looked for (said when none went through a tunnel).
pub fn findings(run: Option<&TunnelRun>, entries: &[Entry], store: &str) -> Vec<Finding> {
    let Some(run) = run else {
        return unmeasured(entries, store);
    };
    let mut out = socket_buffers(run, entries);
    out.push(tun_queue(run));
    out.extend(mtu(run));
    out
}

/// Without a measurement: what is known from the documentation alone.
fn unmeasured(entries: &[Entry], store: &str) -> Vec<Finding> {
    let mut out = vec![finding(
        "vpn-no-measurement",
        Severity::Info,
        "tunnel",
        None,
        format!(
            "no run through a tunnel is stored in {store}, so nothing here is judged from a measurement"
        ),
        Fix::Command("linerate lab run examples/lab/openvpn-tun-mtu.toml".into()),
        "linerate lab run --tunnel (issue 14)".into(),
    )];
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
    out
}

/// One direction's socket buffer in an observation: the size asked for, and what the daemon's
/// log said before and after setting it.
type Side = fn(&TunnelObservation) -> (Option<u32>, Option<(u64, u64)>);

/// Socket buffers: what OpenVPN asked for against the host's caps, and what it got.
fn socket_buffers(run: &TunnelRun, entries: &[Entry]) -> Vec<Finding> {
    let cite = run.cite();
    let mut out = Vec::new();
    let sides: [(&str, &str, Side); 2] = [
        ("net.core.rmem_max", "rcvbuf", |o| {
            (
                o.rcvbuf_requested,
                o.socket_buffers.map(|b| (b.rcv_before, b.rcv_after)),
            )
        }),
        ("net.core.wmem_max", "sndbuf", |o| {
            (
                o.sndbuf_requested,
                o.socket_buffers.map(|b| (b.snd_before, b.snd_after)),
            )
        }),
    ];
    for (key, what, side) in sides {
        let cap = live(entries, key);
        let (asked, logged) = run.tunnel.observed.as_ref().map_or((None, None), side);
        let seen = match logged {
            Some((a, b)) => format!("; {cite} logged {a} -> {b} bytes"),
            None => String::new(),
        };
        let source = format!("{SOCKET_7}; {cite}");
        out.push(match (asked.map(u64::from), cap) {
            (Some(want), Some(cap)) if want > cap => finding(
                "vpn-socket-buffer-capped",
                Severity::Warning,
                key,
                Some(cap.to_string()),
                format!(
                    "OpenVPN --{what} {want} is above {key} = {cap}: a daemon without CAP_NET_ADMIN gets at most {cap} (doubled){seen}"
                ),
                Fix::Set(want.to_string()),
                source,
            ),
            (Some(want), Some(cap)) => finding(
                "vpn-socket-buffer-fits",
                Severity::Info,
                key,
                Some(cap.to_string()),
                format!("OpenVPN --{what} {want} fits under {key} = {cap}{seen}"),
                Fix::None,
                source,
            ),
            (None, cap) => finding(
                "vpn-socket-buffer-default",
                Severity::Info,
                key,
                cap.map(|c| c.to_string()),
                format!(
                    "the measured tunnel set no --{what}: its socket kept the kernel's default{seen}; whether a larger one helps is measured by sweeping tunnel.{what} in an experiment"
                ),
                Fix::None,
                source,
            ),
            (Some(want), None) => finding(
                "vpn-socket-buffer-unknown",
                Severity::Info,
                key,
                None,
                format!("OpenVPN --{what} {want} was used; {key} is not in the audited values{seen}"),
                Fix::None,
                source,
            ),
        });
    }
    out
}

/// The tun device's transmit queue: drops mean packets waited for the daemon longer than the
/// queue holds.
fn tun_queue(run: &TunnelRun) -> Finding {
    let cite = run.cite();
    let qlen = run.observed(|o| o.txqueuelen).map(u64::from);
    let qlen_text = qlen.map_or_else(|| "the OS default".to_owned(), |q| q.to_string());
    let at_qlen = qlen.map_or_else(
        || "at the OS default txqueuelen".to_owned(),
        |q| format!("at txqueuelen {q}"),
    );
    match (
        run.observed(|o| o.tx_dropped),
        run.observed(|o| o.tx_packets),
    ) {
        (Some(dropped), Some(sent)) if dropped > 0 => finding(
            "vpn-tun-queue-drops",
            Severity::Warning,
            "tun txqueuelen",
            Some(qlen_text),
            format!(
                "the tun device dropped {dropped} packets on transmit (sent {sent}) {at_qlen}: the daemon did not read them in time; a longer queue (OpenVPN --txqueuelen) absorbs bursts, a CPU-bound daemon needs more CPU"
            ),
            Fix::Set(format!(
                "txqueuelen {}",
                qlen.map_or(1000, |q| (q * 2).max(1000))
            )),
            cite,
        ),
        (Some(_), Some(sent)) => finding(
            "vpn-tun-queue-ok",
            Severity::Info,
            "tun txqueuelen",
            Some(qlen_text),
            format!("the tun device dropped nothing on transmit ({sent} packets) {at_qlen}"),
            Fix::None,
            cite,
        ),
        _ => finding(
            "vpn-tun-queue-unknown",
            Severity::Info,
            "tun txqueuelen",
            None,
            "the stored tunnel run has no tun counters (stored before linerate recorded them)"
                .into(),
            Fix::None,
            cite,
        ),
    }
}

/// MTU and MSS: calc tunnel's prediction against the interface and the measured MSS.
fn mtu(run: &TunnelRun) -> Option<Finding> {
    let t = &run.tunnel;
    let predicted = run.observed(|o| o.predicted_inner_mtu)?;
    let mtu = t.interface_mtu?;
    let encap = t
        .observed
        .as_ref()
        .and_then(|o| o.encap.as_deref())
        .unwrap_or("the tunnel");
    let link = t.link_mtu.unwrap_or(0);
    let mss_text = t
        .tcp_maxseg
        .map_or_else(String::new, |m| format!(", measured MSS {m}"));
    let source = format!(
        "calc tunnel --encap {encap} on link MTU {link}; {}",
        run.cite()
    );
    Some(if mtu > predicted {
        let pmss = run.observed(|o| o.predicted_mss);
        finding(
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
        )
    } else {
        finding(
            "vpn-mtu-fits",
            Severity::Info,
            "tunnel mtu",
            Some(mtu.to_string()),
            format!(
                "the tunnel MTU {mtu} fits link MTU {link} ({encap}; calc tunnel: {predicted}){mss_text}"
            ),
            Fix::None,
            source,
        )
    })
}

#[cfg(test)]
mod tests;

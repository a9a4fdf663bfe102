//! Human output close to iperf3's: a header, one line per stream per interval (and a SUM line
//! with several streams), then sender and receiver totals.
//!
//! One unit family: transfers and windows in SI bytes (kB, MB, GB) beside rates in SI bits
//! (Mbit/s, Gbit/s), so Transfer × 8 ÷ Interval is the Bitrate shown, and `linerate show`
//! prints a stored run the same way. (iperf3 mixes binary KBytes/GBytes with decimal rates.)

use std::fmt::Write as _;
use std::io::Write;

use linerate_traffic::config::Direction;
use linerate_traffic::result::{Interval, PeerKind, RunResult, StartInfo};
use linerate_traffic::{ClientConfig, Event, Protocol};
use linerate_units::human::{Digits, Family, number};
use linerate_units::{BitRate, ByteSize};

/// `1.25 GB`: three significant digits in SI prefixes, the family of the rates beside it.
pub fn bytes(b: u64) -> String {
    ByteSize::from_bytes(b)
        .human()
        .family(Family::Si)
        .digits(Digits::Significant(3))
        .to_string()
}

/// `9.41 Gbit/s`: three significant digits, as iperf3 prints rates.
pub fn rate(bps: f64) -> String {
    BitRate::from_bps_f64(bps)
        .human()
        .digits(Digits::Significant(3))
        .to_string()
}

fn tag(bidir: bool, d: Direction) -> &'static str {
    match (bidir, d) {
        (false, _) => "",
        (true, Direction::Send) => "[TX-C]",
        (true, Direction::Receive) => "[RX-C]",
    }
}

/// Renders live events and the summary.
pub struct Renderer {
    protocol: Protocol,
    bidir: bool,
    header: bool,
}

/// Which directions the client's own streams carry: the columns follow them (a receiving
/// stream has no congestion window of its own; a sending UDP stream counts datagrams, the
/// receiving one measures jitter and loss).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sides {
    send: bool,
    receive: bool,
}

impl Sides {
    fn of(iv: &Interval) -> Sides {
        Sides {
            send: iv.streams.iter().any(|s| s.direction == Direction::Send),
            receive: iv.streams.iter().any(|s| s.direction == Direction::Receive),
        }
    }
}

impl Renderer {
    pub fn new(cfg: &ClientConfig) -> Renderer {
        Renderer {
            protocol: cfg.protocol,
            bidir: cfg.bidir,
            header: false,
        }
    }

    pub fn event(&mut self, ev: Event<'_>) {
        let text = match ev {
            Event::Start(s) => start(s),
            Event::Interval(iv) => {
                let mut t = String::new();
                if !self.header {
                    t.push_str(&self.header_line(false, Sides::of(iv)));
                    self.header = true;
                }
                t.push_str(&self.interval(iv));
                t
            }
        };
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    fn header_line(&self, summary: bool, sides: Sides) -> String {
        let t = if self.bidir { "      " } else { "" };
        match (self.protocol, summary) {
            // The client's receiving streams have no retransmits or window of their own.
            (Protocol::Tcp, false) if !sides.send => {
                format!("[ ID]{t} Interval           Transfer     Bitrate\n")
            }
            (Protocol::Tcp, false) => {
                format!("[ ID]{t} Interval           Transfer     Bitrate          Retr  Cwnd\n")
            }
            (Protocol::Tcp, true) => {
                format!("[ ID]{t} Interval           Transfer     Bitrate          Retr\n")
            }
            // A sender counts datagrams; jitter and loss are measured where they arrive.
            (Protocol::Udp, false) if !sides.receive => {
                format!(
                    "[ ID]{t} Interval           Transfer     Bitrate          Total Datagrams\n"
                )
            }
            (Protocol::Udp, _) => format!(
                "[ ID]{t} Interval           Transfer     Bitrate          Jitter    Lost/Total Datagrams\n"
            ),
        }
    }

    fn interval(&self, iv: &Interval) -> String {
        let mut t = String::new();
        let om = if iv.omitted { "  (omitted)" } else { "" };
        let range = format!("{:6.2}-{:<6.2} sec", iv.start, iv.end);
        let mut dirs = vec![];
        for d in [Direction::Send, Direction::Receive] {
            if iv.streams.iter().any(|s| s.direction == d) {
                dirs.push(d);
            }
        }
        for d in dirs {
            let mut n = 0;
            for s in iv.streams.iter().filter(|s| s.direction == d) {
                n += 1;
                let mut line = format!(
                    "[{:>3}]{} {range}  {:>10}  {:>13}",
                    s.id,
                    tag(self.bidir, d),
                    bytes(s.bytes),
                    rate(s.bits_per_second)
                );
                if let Some(tcp) = s.tcp {
                    let _ = write!(
                        line,
                        "  {:>5}  {:>10}",
                        tcp.retransmits,
                        bytes(tcp.snd_cwnd)
                    );
                }
                if let Some(u) = s.udp {
                    if d == Direction::Send {
                        let _ = write!(line, "  {:>7}", u.packets);
                    } else {
                        let total = u.packets;
                        let _ = write!(
                            line,
                            "  {:.3} ms  {}/{} ({})",
                            u.jitter_ms,
                            u.lost,
                            total,
                            pct(u.lost, total)
                        );
                    }
                }
                t.push_str(&line);
                t.push_str(om);
                t.push('\n');
            }
            if n > 1 {
                let s = iv.sum(d);
                let mut line = format!(
                    "[SUM]{} {range}  {:>10}  {:>13}",
                    tag(self.bidir, d),
                    bytes(s.bytes),
                    rate(s.bits_per_second)
                );
                if let Some(r) = s.retransmits {
                    let _ = write!(line, "  {r:>5}");
                }
                t.push_str(&line);
                t.push_str(om);
                t.push('\n');
            }
        }
        if iv.streams.len() > 1 || self.bidir {
            t.push_str("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
        }
        t
    }

    pub fn summary(&self, r: &RunResult) -> String {
        let mut t = String::from("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
        let both = Sides {
            send: true,
            receive: true,
        };
        t.push_str(&self.header_line(true, both));
        let e = &r.end;
        for d in e.directions() {
            let mut rows = vec![];
            for s in e.streams.iter().filter(|s| s.direction == d) {
                rows.push((
                    format!("{:>3}", s.id),
                    s.sender.clone(),
                    s.receiver.clone(),
                    s.udp.clone(),
                ));
            }
            if rows.len() > 1 {
                let sum = e.sum(d);
                rows.push(("SUM".to_owned(), sum.sender, sum.receiver, sum.udp));
            }
            for (id, snd, rcv, udp) in rows {
                let tg = tag(self.bidir, d);
                match udp {
                    None => {
                        let retr = snd.retransmits.map_or(String::new(), |r| r.to_string());
                        let _ = writeln!(
                            t,
                            "[{id}]{tg} {:6.2}-{:<6.2} sec  {:>10}  {:>13}  {retr:>5}  sender",
                            0.0,
                            snd.seconds,
                            bytes(snd.bytes),
                            rate(snd.bits_per_second)
                        );
                        let _ = writeln!(
                            t,
                            "[{id}]{tg} {:6.2}-{:<6.2} sec  {:>10}  {:>13}         receiver",
                            0.0,
                            rcv.seconds,
                            bytes(rcv.bytes),
                            rate(rcv.bits_per_second)
                        );
                    }
                    Some(u) => {
                        let _ = writeln!(
                            t,
                            "[{id}]{tg} {:6.2}-{:<6.2} sec  {:>10}  {:>13}  {:.3} ms  0/{} (0%)  sender",
                            0.0,
                            snd.seconds,
                            bytes(snd.bytes),
                            rate(snd.bits_per_second),
                            0.0,
                            u.sent_packets
                        );
                        let mut extra = String::new();
                        if u.out_of_order > 0 {
                            let _ = write!(extra, ", {} out of order", u.out_of_order);
                        }
                        if let Some(dup) = u.duplicates.filter(|d| *d > 0) {
                            let _ = write!(extra, ", {dup} duplicated");
                        }
                        let _ = writeln!(
                            t,
                            "[{id}]{tg} {:6.2}-{:<6.2} sec  {:>10}  {:>13}  {:.3} ms  {}/{} ({})  receiver{extra}",
                            0.0,
                            rcv.seconds,
                            bytes(rcv.bytes),
                            rate(rcv.bits_per_second),
                            u.jitter_ms,
                            u.lost,
                            u.packets,
                            pct(u.lost, u.packets)
                        );
                    }
                }
            }
        }
        let (lc, rc) = (&e.cpu_local, &e.cpu_remote);
        let _ = writeln!(
            t,
            "CPU Utilization: local {:.1}% ({:.1}%u/{:.1}%s), remote {:.1}% ({:.1}%u/{:.1}%s)",
            lc.total, lc.user, lc.system, rc.total, rc.user, rc.system
        );
        if let Some(cc) = &e.congestion_local {
            let remote = e.congestion_remote.as_deref().unwrap_or("?");
            let _ = writeln!(t, "TCP congestion control: local {cc}, remote {remote}");
        }
        if let Some(so) = &e.server_output_text {
            let _ = writeln!(t, "\nServer output:\n{so}");
        }
        t.push_str("\nlinerate Done.\n");
        t
    }
}

fn pct(part: u64, whole: u64) -> String {
    let p = linerate_traffic::result::percent(part, whole);
    if p == 0.0 {
        "0%".to_owned()
    } else {
        format!("{}%", number(p, Digits::Significant(3)))
    }
}

fn start(s: &StartInfo) -> String {
    let mut t = String::new();
    let kind = match s.peer.kind {
        PeerKind::Linerate => format!(
            "linerate server {}",
            s.peer.version.as_deref().unwrap_or("")
        ),
        PeerKind::Iperf3 => "iperf3-compatible server".to_owned(),
    };
    let _ = writeln!(
        t,
        "Connecting to host {}, port {} ({kind})",
        s.peer.host, s.peer.port
    );
    for c in &s.connected {
        let _ = writeln!(
            t,
            "[{:>3}] local {} connected to {}{}",
            c.id,
            c.local,
            c.remote,
            if s.bidir {
                match c.direction {
                    Direction::Send => " (client sends)",
                    Direction::Receive => " (server sends)",
                }
            } else {
                ""
            }
        );
    }
    if s.reverse {
        let _ = writeln!(t, "Reverse mode, remote host {} is sending", s.peer.host);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-stream TCP run as the engine returns it.
    fn tcp_run() -> RunResult {
        let side = |bytes: u64, retr: Option<u64>| {
            serde_json::json!({"bytes": bytes, "seconds": 2.0, "bits_per_second": bytes as f64 * 4.0,
                "retransmits": retr, "max_snd_cwnd": null, "min_rtt": null, "mean_rtt": null, "max_rtt": null})
        };
        let iv = |start: f64, b: u64| {
            serde_json::json!({"start": start, "end": start + 1.0, "omitted": false, "streams": [
                {"id": 1, "direction": "send", "bytes": b, "bits_per_second": b as f64 * 8.0,
                 "tcp": {"retransmits": 3, "snd_cwnd": 1_250_000, "rtt_us": 50, "rttvar_us": 10, "pmtu": 65535}, "udp": null},
                {"id": 3, "direction": "send", "bytes": b / 2, "bits_per_second": (b / 2) as f64 * 8.0,
                 "tcp": {"retransmits": 0, "snd_cwnd": 640_000, "rtt_us": 60, "rttvar_us": 10, "pmtu": 65535}, "udp": null}]})
        };
        serde_json::from_value(serde_json::json!({
            "schema": "linerate.traffic/1",
            "start": {"engine_version": "0.1.0", "timestamp": 0, "cookie": "c",
                "peer": {"host": "example", "addr": "192.0.2.1", "port": 5201, "kind": "iperf3", "version": null},
                "connected": [
                    {"id": 1, "direction": "send", "local": "192.0.2.2:40000", "remote": "192.0.2.1:5201"},
                    {"id": 3, "direction": "send", "local": "192.0.2.2:40002", "remote": "192.0.2.1:5201"}],
                "protocol": "tcp", "mode": "stream", "parallel": 2, "reverse": false, "bidir": false,
                "blksize": 131072, "omit_secs": 0.0, "duration_secs": 2.0, "bytes": 0, "blocks": 0,
                "target_bitrate": 0, "tos": 0, "interval_secs": 1.0, "tcp_mss_default": 1448,
                "sock_bufsize": 0, "sndbuf_actual": 16384, "rcvbuf_actual": 131072, "system_info": "Linux"},
            "intervals": [iv(0.0, 1_170_000_000), iv(1.0, 1_180_000_000)],
            "end": {"streams": [
                    {"id": 1, "direction": "send", "sender": side(2_350_000_000, Some(3)), "receiver": side(2_349_000_000, None), "udp": null},
                    {"id": 3, "direction": "send", "sender": side(1_175_000_000, Some(0)), "receiver": side(1_174_000_000, None), "udp": null}],
                "cpu_local": {"total": 35.5, "user": 1.5, "system": 34.0},
                "cpu_remote": {"total": 20.25, "user": 0.25, "system": 20.0},
                "congestion_local": "cubic", "congestion_remote": "cubic",
                "server_output_text": null, "server_output_json": null}
        }))
        .expect("fixture")
    }

    #[test]
    fn human_output_of_a_parallel_tcp_run() {
        let run = tcp_run();
        let r = Renderer {
            protocol: Protocol::Tcp,
            bidir: false,
            header: false,
        };
        let mut text = start(&run.start);
        text.push_str(&r.header_line(false, Sides::of(&run.intervals[0])));
        for iv in &run.intervals {
            text.push_str(&r.interval(iv));
        }
        text.push_str(&r.summary(&run));
        insta::assert_snapshot!(text);
    }

    /// Issue 23 item 5: a UDP sender's lines are headed "Total Datagrams" (what they print),
    /// and `-R` has no "Retr  Cwnd" over columns it cannot fill.
    #[test]
    fn headers_name_the_columns_each_side_prints() {
        let r = |protocol| Renderer {
            protocol,
            bidir: false,
            header: false,
        };
        let send = Sides {
            send: true,
            receive: false,
        };
        let receive = Sides {
            send: false,
            receive: true,
        };
        let udp_send = r(Protocol::Udp).header_line(false, send);
        assert!(
            udp_send
                .trim_end()
                .ends_with("Bitrate          Total Datagrams")
        );
        assert!(!udp_send.contains("Jitter"));
        let udp_receive = r(Protocol::Udp).header_line(false, receive);
        assert!(udp_receive.contains("Jitter    Lost/Total Datagrams"));
        let tcp_reverse = r(Protocol::Tcp).header_line(false, receive);
        assert!(tcp_reverse.trim_end().ends_with("Bitrate"), "{tcp_reverse}");
        assert!(
            r(Protocol::Tcp)
                .header_line(false, send)
                .contains("Retr  Cwnd")
        );
    }

    #[test]
    fn units_are_one_si_family() {
        assert_eq!(bytes(0), "0.00 B");
        assert_eq!(bytes(1000), "1.00 kB");
        assert_eq!(bytes(3_500_000_000), "3.50 GB");
        assert_eq!(bytes(150_000_000), "150 MB");
        // The transfer of 1 s at 1.25 Gbit/s reads as 156 MB: × 8 = the rate.
        assert_eq!(bytes(156_250_000), "156 MB");
        assert_eq!(rate(9.41e9), "9.41 Gbit/s");
        assert_eq!(rate(1.05e6), "1.05 Mbit/s");
        assert_eq!(rate(25.8e9), "25.8 Gbit/s");
        assert_eq!(rate(0.0), "0.00 bit/s");
    }
}

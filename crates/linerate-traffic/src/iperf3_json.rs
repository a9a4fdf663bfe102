//! [`RunResult`] → iperf3's `--json` document (`start`, `intervals`, `end`; the
//! `--json-stream` events are built from the same [`start`] and [`interval`]), plus a
//! `linerate` object for what iperf3 does not have: typed by `linerate-iperf3`, so the client
//! prints it and the results store keeps it without a JSON round trip.

use linerate_iperf3::linerate::{Linerate, StreamNote};
use linerate_iperf3::{
    Connected, CpuUtilization, Document, End, EndReport, EndStream, HostPort, IntervalReport,
    Start, TestStart, Timestamp,
};

use crate::config::{Direction, Protocol};
use crate::result::{DirectionSum, Interval, RunResult, SideTotals, StartInfo, StreamInterval};

fn split(addr: &str) -> (String, u16) {
    match addr.parse::<std::net::SocketAddr>() {
        Ok(a) => (a.ip().to_string(), a.port()),
        Err(_) => (addr.to_owned(), 0),
    }
}

/// iperf3's `start` object.
pub fn start(s: &StartInfo) -> Start {
    let connected = s
        .connected
        .iter()
        .map(|c| {
            let (local_host, lp) = split(&c.local);
            let (remote_host, rp) = split(&c.remote);
            Connected {
                socket: Some(c.id),
                local_host,
                local_port: Some(lp.into()),
                remote_host,
                remote_port: Some(rp.into()),
                ..Connected::default()
            }
        })
        .collect();
    Start {
        connected,
        version: Some(format!("linerate {}", s.engine_version)),
        system_info: Some(s.system_info.clone()),
        timestamp: Some(Timestamp {
            time: Some(http_date(s.timestamp)),
            timesecs: Some(s.timestamp),
            ..Timestamp::default()
        }),
        connecting_to: Some(HostPort {
            host: s.peer.host.clone(),
            port: Some(s.peer.port.into()),
        }),
        accepted_connection: None,
        cookie: Some(s.cookie.clone()),
        tcp_mss_default: Some(s.tcp_mss_default.map_or(0, u64::from)),
        target_bitrate: Some(s.target_bitrate),
        fq_rate: Some(0),
        sock_bufsize: Some(s.sock_bufsize),
        sndbuf_actual: Some(s.sndbuf_actual),
        rcvbuf_actual: Some(s.rcvbuf_actual),
        test_start: Some(TestStart {
            protocol: Some(s.protocol.iperf3_name().to_owned()),
            num_streams: Some(s.parallel.into()),
            blksize: Some(s.blksize),
            omit: Some(s.omit_secs),
            duration: Some(s.duration_secs),
            bytes: Some(s.bytes),
            blocks: Some(s.blocks),
            reverse: Some(u64::from(s.reverse)),
            tos: Some(s.tos.into()),
            target_bitrate: Some(s.target_bitrate),
            bidir: Some(u64::from(s.bidir)),
            fqrate: Some(0),
            interval: Some(s.interval_secs),
            ..TestStart::default()
        }),
        extra: serde_json::Map::new(),
    }
}

fn interval_stream(iv: &Interval, s: &StreamInterval) -> IntervalReport {
    let sender = s.direction == Direction::Send;
    let mut r = IntervalReport {
        socket: Some(s.id),
        start: iv.start,
        end: iv.end,
        seconds: Some(iv.seconds()),
        bytes: s.bytes,
        bits_per_second: s.bits_per_second,
        omitted: Some(iv.omitted),
        sender: Some(sender),
        ..IntervalReport::default()
    };
    if let Some(t) = s.tcp {
        r.retransmits = Some(t.retransmits);
        r.snd_cwnd = Some(t.snd_cwnd);
        r.snd_wnd = Some(0);
        r.rtt = Some(t.rtt_us.into());
        r.rttvar = Some(t.rttvar_us.into());
        // FreeBSD's TCP_INFO has no path MTU (0): the key is left out rather than made up.
        r.pmtu = (t.pmtu > 0).then(|| t.pmtu.into());
    }
    if let Some(u) = s.udp {
        r.packets = Some(u.packets);
        if !sender {
            r.jitter_ms = Some(u.jitter_ms);
            r.lost_packets = Some(u.lost);
            r.lost_percent = Some(crate::result::percent(
                u.lost,
                u.packets.saturating_add(u.lost),
            ));
            r.out_of_order = Some(u.out_of_order);
            r.duplicates = Some(u.duplicates);
        }
    }
    r
}

fn interval_sum(iv: &Interval, dir: Direction, udp: bool) -> IntervalReport {
    let s = iv.sum(dir);
    let mut r = IntervalReport {
        start: iv.start,
        end: iv.end,
        seconds: Some(iv.seconds()),
        bytes: s.bytes,
        bits_per_second: s.bits_per_second,
        retransmits: s.retransmits,
        omitted: Some(iv.omitted),
        sender: Some(dir == Direction::Send),
        ..IntervalReport::default()
    };
    if udp {
        r.packets = Some(s.packets);
        if dir == Direction::Receive {
            r.jitter_ms = Some(s.jitter_ms);
            r.lost_packets = Some(s.lost);
            r.lost_percent = Some(crate::result::percent(
                s.lost,
                s.packets.saturating_add(s.lost),
            ));
        }
    }
    r
}

/// One element of iperf3's `intervals` array.
pub fn interval(iv: &Interval) -> linerate_iperf3::Interval {
    let udp = iv.streams.iter().any(|s| s.udp.is_some());
    let has = |d: Direction| iv.streams.iter().any(|s| s.direction == d);
    let (sum, sum_bidir_reverse) = match (has(Direction::Send), has(Direction::Receive)) {
        (true, true) => (
            interval_sum(iv, Direction::Send, udp),
            Some(interval_sum(iv, Direction::Receive, udp)),
        ),
        (false, true) => (interval_sum(iv, Direction::Receive, udp), None),
        _ => (interval_sum(iv, Direction::Send, udp), None),
    };
    linerate_iperf3::Interval {
        streams: iv.streams.iter().map(|s| interval_stream(iv, s)).collect(),
        sum: Some(sum),
        sum_bidir_reverse,
        extra: serde_json::Map::new(),
    }
}

fn side(t: &SideTotals, id: Option<i64>, sender: bool) -> EndReport {
    let mut r = EndReport {
        socket: id,
        start: Some(0.0),
        end: Some(t.seconds),
        seconds: Some(t.seconds),
        bytes: t.bytes,
        bits_per_second: t.bits_per_second,
        sender: Some(sender),
        ..EndReport::default()
    };
    if sender {
        r.retransmits = t.retransmits;
        r.max_snd_cwnd = t.max_snd_cwnd;
        r.max_rtt = t.max_rtt.map(u64::from);
        r.min_rtt = t.min_rtt.map(u64::from);
        r.mean_rtt = t.mean_rtt.map(u64::from);
    }
    r
}

fn udp_sum(d: &DirectionSum, sender: bool) -> EndReport {
    let u = d.udp.clone().unwrap_or_default();
    let t = if sender { &d.sender } else { &d.receiver };
    EndReport {
        start: Some(0.0),
        end: Some(t.seconds),
        seconds: Some(t.seconds),
        bytes: t.bytes,
        bits_per_second: t.bits_per_second,
        jitter_ms: Some(u.jitter_ms),
        lost_packets: Some(u.lost),
        packets: Some(if sender { u.sent_packets } else { u.packets }),
        lost_percent: Some(u.lost_percent),
        sender: Some(sender),
        ..EndReport::default()
    }
}

fn end(r: &RunResult) -> End {
    let udp = r.start.protocol == Protocol::Udp;
    let c = &r.end;
    let streams = c
        .streams
        .iter()
        .map(|s| match &s.udp {
            Some(u) => EndStream {
                udp: Some(EndReport {
                    socket: Some(s.id),
                    start: Some(0.0),
                    end: Some(s.sender.seconds),
                    seconds: Some(s.sender.seconds),
                    bytes: s.sender.bytes,
                    bits_per_second: s.sender.bits_per_second,
                    jitter_ms: Some(u.jitter_ms),
                    lost_packets: Some(u.lost),
                    packets: Some(u.packets),
                    lost_percent: Some(u.lost_percent),
                    out_of_order: Some(u.out_of_order),
                    sender: Some(s.direction == Direction::Send),
                    ..EndReport::default()
                }),
                ..EndStream::default()
            },
            None => EndStream {
                sender: Some(side(&s.sender, Some(s.id), true)),
                receiver: Some(side(&s.receiver, Some(s.id), false)),
                ..EndStream::default()
            },
        })
        .collect();
    let mut out = End {
        streams,
        cpu_utilization_percent: Some(CpuUtilization {
            host_total: Some(c.cpu_local.total),
            host_user: Some(c.cpu_local.user),
            host_system: Some(c.cpu_local.system),
            remote_total: Some(c.cpu_remote.total),
            remote_user: Some(c.cpu_remote.user),
            remote_system: Some(c.cpu_remote.system),
            ..CpuUtilization::default()
        }),
        ..End::default()
    };
    let dirs = c.directions();
    for (i, d) in dirs.iter().enumerate() {
        let sum = c.sum(*d);
        let (sent, received) = if udp {
            (udp_sum(&sum, true), udp_sum(&sum, false))
        } else {
            (
                side(&sum.sender, None, true),
                side(&sum.receiver, None, false),
            )
        };
        if dirs.len() == 2 && i == 1 {
            out.sum_sent_bidir_reverse = Some(sent);
            out.sum_received_bidir_reverse = Some(received);
        } else {
            out.sum_sent = Some(sent);
            out.sum_received = Some(received);
        }
        if udp && i == 0 {
            // iperf3's UDP `sum`: the sender's bytes with the receiver's loss and jitter.
            let mut s = udp_sum(&sum, true);
            s.packets = Some(sum.udp.as_ref().map_or(0, |u| u.packets));
            s.sender = Some(*d == Direction::Send);
            out.sum = Some(s);
        }
    }
    if !udp {
        let client_sends = dirs.first() == Some(&Direction::Send);
        let (snd, rcv) = if client_sends {
            (&c.congestion_local, &c.congestion_remote)
        } else {
            (&c.congestion_remote, &c.congestion_local)
        };
        out.sender_tcp_congestion.clone_from(snd);
        out.receiver_tcp_congestion.clone_from(rcv);
    }
    out
}

/// The `linerate` object: the mode and peer, per-stream facts, and the modes' figures (the
/// headline pps and rr figures also at its top level, for scripts).
fn linerate(r: &RunResult) -> Linerate {
    let mut l = Linerate {
        schema: Some(r.schema.clone()),
        mode: Some(r.start.mode.name().to_owned()),
        peer: Some(r.start.peer.clone()),
        streams: r
            .end
            .streams
            .iter()
            .map(|s| StreamNote {
                id: s.id,
                direction: s.direction,
                duplicates: s.udp.as_ref().and_then(|u| u.duplicates),
                sent_packets: s.udp.as_ref().map(|u| u.sent_packets),
            })
            .collect(),
        evidence: r.evidence.clone(),
        ..Linerate::default()
    };
    if let Some(m) = &r.modes {
        if let Some(p) = &m.pps {
            l.sent_pps = Some(p.sent_pps);
            l.received_pps = Some(p.received_pps);
            l.lost_packets = Some(p.lost_packets);
            l.reordered_packets = Some(p.reordered_packets);
            l.duplicate_packets = Some(p.duplicate_packets);
        }
        l.transactions_per_second = m.rr.as_ref().map(|rr| rr.transactions_per_second);
        l.pps.clone_from(&m.pps);
        l.rr.clone_from(&m.rr);
        l.threads = Some(m.threads.clone());
        l.server_threads.clone_from(&m.server_threads);
        l.zerocopy.clone_from(&m.zerocopy);
    }
    l
}

/// The whole result as iperf3's `--json` document, plus `linerate`.
pub fn document(r: &RunResult) -> Document {
    let mut doc = Document {
        start: start(&r.start),
        intervals: r.intervals.iter().map(interval).collect(),
        end: end(r),
        server_output_text: r.end.server_output_text.clone(),
        server_output_json: r.end.server_output_json.clone(),
        error: None,
        schema: Some(r.schema.clone()),
        linerate: Some(linerate(r)),
        extra: serde_json::Map::new(),
    };
    // The cost of a bit is read off the finished document, as it is for iperf3's own.
    let cost = linerate_iperf3::cost::TestCost::of(&doc);
    if let Some(l) = doc.linerate.as_mut() {
        l.cost = cost;
    }
    doc
}

/// `Sat, 21 Nov 2026 23:30:25 GMT` from Unix seconds (as iperf3's `timestamp.time`).
pub fn http_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    const WD: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MO: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        WD[(days.rem_euclid(7)) as usize],
        d,
        MO[(m - 1) as usize],
        y,
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Howard Hinnant's days → (year, month, day) for the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_match_known_values() {
        assert_eq!(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http_date(1_795_822_225), "Fri, 27 Nov 2026 23:30:25 GMT");
        assert_eq!(http_date(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
    }
}

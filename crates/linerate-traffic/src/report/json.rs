//! [`RunResult`] → iperf3's `--json` schema (`start`, `intervals`, `end`), plus a `linerate`
//! object for what iperf3 does not have. Tools that parse iperf3's output (and the results
//! store) read this.

use serde_json::{Value, json};

use crate::config::{Direction, Protocol};
use crate::result::{DirectionSum, Interval, RunResult, SideTotals, StartInfo, StreamInterval};

fn split(addr: &str) -> (String, u16) {
    match addr.parse::<std::net::SocketAddr>() {
        Ok(a) => (a.ip().to_string(), a.port()),
        Err(_) => (addr.to_owned(), 0),
    }
}

/// iperf3's `start` object.
pub fn start_json(s: &StartInfo) -> Value {
    let connected: Vec<Value> = s
        .connected
        .iter()
        .map(|c| {
            let (lh, lp) = split(&c.local);
            let (rh, rp) = split(&c.remote);
            json!({
                "socket": c.id,
                "local_host": lh,
                "local_port": lp,
                "remote_host": rh,
                "remote_port": rp,
            })
        })
        .collect();
    json!({
        "connected": connected,
        "version": format!("linerate {}", s.engine_version),
        "system_info": s.system_info,
        "timestamp": {"time": http_date(s.timestamp), "timesecs": s.timestamp},
        "connecting_to": {"host": s.peer.host, "port": s.peer.port},
        "cookie": s.cookie,
        "tcp_mss_default": s.tcp_mss_default.unwrap_or(0),
        "target_bitrate": s.target_bitrate,
        "fq_rate": 0,
        "sock_bufsize": s.sock_bufsize,
        "sndbuf_actual": s.sndbuf_actual,
        "rcvbuf_actual": s.rcvbuf_actual,
        "test_start": {
            "protocol": s.protocol.iperf3_name(),
            "num_streams": s.parallel,
            "blksize": s.blksize,
            "omit": s.omit_secs,
            "duration": s.duration_secs,
            "bytes": s.bytes,
            "blocks": s.blocks,
            "reverse": i32::from(s.reverse),
            "tos": s.tos,
            "target_bitrate": s.target_bitrate,
            "bidir": i32::from(s.bidir),
            "fqrate": 0,
            "interval": s.interval_secs,
        },
    })
}

fn interval_stream(iv: &Interval, s: &StreamInterval) -> Value {
    let sender = s.direction == Direction::Send;
    let mut v = json!({
        "socket": s.id,
        "start": iv.start,
        "end": iv.end,
        "seconds": iv.seconds(),
        "bytes": s.bytes,
        "bits_per_second": s.bits_per_second,
        "omitted": iv.omitted,
        "sender": sender,
    });
    if let Some(t) = s.tcp {
        v["retransmits"] = json!(t.retransmits);
        v["snd_cwnd"] = json!(t.snd_cwnd);
        v["snd_wnd"] = json!(0);
        v["rtt"] = json!(t.rtt_us);
        v["rttvar"] = json!(t.rttvar_us);
        v["pmtu"] = json!(t.pmtu);
    }
    if let Some(u) = s.udp {
        v["packets"] = json!(u.packets);
        if !sender {
            v["jitter_ms"] = json!(u.jitter_ms);
            v["lost_packets"] = json!(u.lost);
            v["lost_percent"] = json!(crate::result::percent(
                u.lost,
                u.packets.saturating_add(u.lost)
            ));
            v["out_of_order"] = json!(u.out_of_order);
            v["duplicates"] = json!(u.duplicates);
        }
    }
    v
}

fn interval_sum(iv: &Interval, dir: Direction, udp: bool) -> Value {
    let s = iv.sum(dir);
    let mut v = json!({
        "start": iv.start,
        "end": iv.end,
        "seconds": iv.seconds(),
        "bytes": s.bytes,
        "bits_per_second": s.bits_per_second,
        "omitted": iv.omitted,
        "sender": dir == Direction::Send,
    });
    if let Some(r) = s.retransmits {
        v["retransmits"] = json!(r);
    }
    if udp {
        v["packets"] = json!(s.packets);
        if dir == Direction::Receive {
            v["jitter_ms"] = json!(s.jitter_ms);
            v["lost_packets"] = json!(s.lost);
            v["lost_percent"] = json!(crate::result::percent(
                s.lost,
                s.packets.saturating_add(s.lost)
            ));
        }
    }
    v
}

/// One element of iperf3's `intervals` array.
pub fn interval_json(iv: &Interval) -> Value {
    let udp = iv.streams.iter().any(|s| s.udp.is_some());
    let streams: Vec<Value> = iv.streams.iter().map(|s| interval_stream(iv, s)).collect();
    let has = |d: Direction| iv.streams.iter().any(|s| s.direction == d);
    let mut v = json!({ "streams": streams });
    match (has(Direction::Send), has(Direction::Receive)) {
        (true, true) => {
            v["sum"] = interval_sum(iv, Direction::Send, udp);
            v["sum_bidir_reverse"] = interval_sum(iv, Direction::Receive, udp);
        }
        (false, true) => v["sum"] = interval_sum(iv, Direction::Receive, udp),
        _ => v["sum"] = interval_sum(iv, Direction::Send, udp),
    }
    v
}

fn side(t: &SideTotals, id: Option<i64>, sender: bool) -> Value {
    let mut v = json!({
        "start": 0,
        "end": t.seconds,
        "seconds": t.seconds,
        "bytes": t.bytes,
        "bits_per_second": t.bits_per_second,
        "sender": sender,
    });
    if let Some(id) = id {
        v["socket"] = json!(id);
    }
    if sender {
        if let Some(r) = t.retransmits {
            v["retransmits"] = json!(r);
        }
        for (k, x) in [
            ("max_snd_cwnd", t.max_snd_cwnd),
            ("max_rtt", t.max_rtt.map(u64::from)),
            ("min_rtt", t.min_rtt.map(u64::from)),
            ("mean_rtt", t.mean_rtt.map(u64::from)),
        ] {
            if let Some(x) = x {
                v[k] = json!(x);
            }
        }
    }
    v
}

fn udp_sum(d: &DirectionSum, sender: bool) -> Value {
    let u = d.udp.clone().unwrap_or_default();
    let t = if sender { &d.sender } else { &d.receiver };
    json!({
        "start": 0,
        "end": t.seconds,
        "seconds": t.seconds,
        "bytes": t.bytes,
        "bits_per_second": t.bits_per_second,
        "jitter_ms": u.jitter_ms,
        "lost_packets": u.lost,
        "packets": if sender { u.sent_packets } else { u.packets },
        "lost_percent": u.lost_percent,
        "sender": sender,
    })
}

/// The whole result in iperf3's `--json` schema, plus `linerate`.
pub fn iperf3_json(r: &RunResult) -> Value {
    let udp = r.start.protocol == Protocol::Udp;
    let streams: Vec<Value> = r
        .end
        .streams
        .iter()
        .map(|s| {
            let client_sends = s.direction == Direction::Send;
            if let Some(u) = &s.udp {
                json!({"udp": {
                    "socket": s.id,
                    "start": 0,
                    "end": s.sender.seconds,
                    "seconds": s.sender.seconds,
                    "bytes": s.sender.bytes,
                    "bits_per_second": s.sender.bits_per_second,
                    "jitter_ms": u.jitter_ms,
                    "lost_packets": u.lost,
                    "packets": u.packets,
                    "lost_percent": u.lost_percent,
                    "out_of_order": u.out_of_order,
                    "sender": client_sends,
                }})
            } else {
                json!({
                    "sender": side(&s.sender, Some(s.id), true),
                    "receiver": side(&s.receiver, Some(s.id), false),
                })
            }
        })
        .collect();
    let mut end = json!({ "streams": streams });
    let dirs = r.end.directions();
    let bidir = dirs.len() == 2;
    for (i, d) in dirs.iter().enumerate() {
        let sum = r.end.sum(*d);
        let suffix = if bidir && i == 1 {
            "_bidir_reverse"
        } else {
            ""
        };
        end[format!("sum_sent{suffix}")] = side(&sum.sender, None, true);
        end[format!("sum_received{suffix}")] = side(&sum.receiver, None, false);
        if udp {
            end[format!("sum_sent{suffix}")] = udp_sum(&sum, true);
            end[format!("sum_received{suffix}")] = udp_sum(&sum, false);
            if i == 0 {
                // iperf3's UDP `sum`: the sender's bytes with the receiver's loss and jitter.
                let mut s = udp_sum(&sum, true);
                s["packets"] = json!(sum.udp.as_ref().map_or(0, |u| u.packets));
                s["sender"] = json!(*d == Direction::Send);
                end["sum"] = s;
            }
        }
    }
    let c = &r.end;
    end["cpu_utilization_percent"] = json!({
        "host_total": c.cpu_local.total,
        "host_user": c.cpu_local.user,
        "host_system": c.cpu_local.system,
        "remote_total": c.cpu_remote.total,
        "remote_user": c.cpu_remote.user,
        "remote_system": c.cpu_remote.system,
    });
    if !udp {
        let client_sends = dirs.first() == Some(&Direction::Send);
        let (snd, rcv) = if client_sends {
            (&c.congestion_local, &c.congestion_remote)
        } else {
            (&c.congestion_remote, &c.congestion_local)
        };
        if let Some(cc) = snd {
            end["sender_tcp_congestion"] = json!(cc);
        }
        if let Some(cc) = rcv {
            end["receiver_tcp_congestion"] = json!(cc);
        }
    }
    let mut out = json!({
        "schema": r.schema,
        "start": start_json(&r.start),
        "intervals": r.intervals.iter().map(interval_json).collect::<Vec<_>>(),
        "end": end,
        "linerate": {
            "schema": r.schema,
            "mode": r.start.mode,
            "peer": r.start.peer,
            "streams": r.end.streams.iter().map(|s| json!({
                "id": s.id,
                "direction": s.direction,
                "duplicates": s.udp.as_ref().and_then(|u| u.duplicates),
                "sent_packets": s.udp.as_ref().map(|u| u.sent_packets),
            })).collect::<Vec<_>>(),
        },
    });
    if let Some(m) = &r.modes {
        crate::modes::result::add_to_json(&mut out["linerate"], m);
    }
    if let Some(t) = &c.server_output_text {
        out["server_output_text"] = json!(t);
    }
    if let Some(j) = &c.server_output_json {
        out["server_output_json"] = j.clone();
    }
    out
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

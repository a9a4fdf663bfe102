//! Why a TCP test moved what it moved: each stream's sender-side `TCP_INFO` limit clocks
//! (`tcpi_rwnd_limited`, `tcpi_sndbuf_limited` against `tcpi_busy_time`), its loss, each side's
//! CPU and the path's ceiling (`linerate_calc::bdp::path_report` at the path's rate, the least
//! RTT measured and the MSS and MTU the stream used) turned into one limit per stream and per
//! test, each with its figures and the share of the test it held.
//!
//! The order of the tests, and why:
//! 1. within 10 % of the ceiling: at the ceiling, nothing to lift;
//! 2. a `-b` target reached: the application asked for no more;
//! 3. the kernel's own clocks: a stream blocked on its send buffer (≥ 50 % of its busy time)
//!    is send-buffer-limited, one waiting for the peer's window is receive-window-limited —
//!    unless that side's core was full, which makes the same clock a CPU limit (a starved
//!    reader's window closes too);
//!    The clock counts only while the sender has nothing queued; a buffer that holds the
//!    flight and a queue behind it is full too: when the bytes in flight and those queued
//!    fill ≥ 75 % of the send buffer, the flight is the larger part (a loss-limited flow
//!    queues far more than it has in flight) and it stays below the path's BDP, the send
//!    buffer holds the window (the 1 Gbit/s, 20 ms path: 2.2 MB in flight, 1.1 MB
//!    queued, a 4 MiB buffer);
//!    Likewise a flight that fills the peer's advertised window (≥ 90 % of it on average)
//!    below the BDP is the receive window;
//! 4. a full core (the stream's thread ≥ 90 % of one core, or the CPU it is pinned to ≥ 95 %
//!    busy) on either side: CPU;
//! 5. retransmissions: congestion or loss, the Mathis bound at the measured loss beside it;
//! 6. the stack marked the flow application-limited most of the time: the application;
//! 7. otherwise unknown, with the figures.
//!
//! A settings limit gets its prescription from `linerate_tuning::buffers::linux`, the code
//! behind `calc bdp` and `tune`, for this path (rate, least RTT) and kernel.

use linerate_calc::bdp::{LINUX_WINDOW_SHARE, PathInput, PathReport, path_report};
use linerate_iperf3::Document;
use linerate_iperf3::evidence::{CpuEvidence, Evidence, Role, Side, TcpStreamEvidence};
use linerate_iperf3::limit::{
    Ceiling, CpuLimit, Figure, LimitKind, Prescription, StreamLimit, TcpLimit,
};
use linerate_iperf3::udp_limit::SettingChange;
use linerate_tuning::buffers::{BufferInput, linux};
use linerate_tuning::os::Version;
use linerate_units::{BitRate, ByteSize, Duration, Percent};

/// A result this close to the ceiling is at it.
const AT_CEILING: f64 = 0.9;
/// A limit clock holding at least this share of the busy time names the limit.
const CLOCK_SHARE: f64 = 0.5;
/// A send buffer this full (bytes in flight and queued, of its size) is full.
const BUFFER_FULL: f64 = 0.75;
/// Bytes in flight this close to the peer's window fill it.
const WINDOW_FULL: f64 = 0.9;
/// A thread this busy (percent of one core) is a full core.
const THREAD_FULL: f64 = 90.0;
/// A CPU this busy is full.
const CPU_FULL: f64 = 95.0;

/// The path's rate and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct PathRate {
    /// The rate.
    pub rate: BitRate,
    /// Where it came from (`--path-rate`, `the lab's link l0`).
    pub source: String,
}

/// The hosts' facts the prescription needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostFacts {
    /// The kernel release (`6.1.0-18-amd64`) whose defaults apply.
    pub kernel: Option<String>,
    /// The host's memory.
    pub ram: Option<ByteSize>,
}

/// One stream as the sender saw it.
struct Seen<'a> {
    tcp: &'a TcpStreamEvidence,
    bps: f64,
}

/// The verdict of a TCP test's document; `None` for a test that is not TCP.
pub fn explain(doc: &Document, path: Option<&PathRate>, host: &HostFacts) -> Option<TcpLimit> {
    let ts = doc.start.test_start.as_ref()?;
    if !ts.protocol.as_deref()?.eq_ignore_ascii_case("tcp") {
        return None;
    }
    let total_bps = doc.end.sum_sent.as_ref().map_or(0.0, |s| s.bits_per_second);
    let sender_side = if ts.reverse.unwrap_or(0) == 1 {
        Side::Server
    } else {
        Side::Client
    };
    let mut unseen = Vec::new();
    let Some(ev) = doc.linerate.as_ref().and_then(|l| l.evidence.as_ref()) else {
        return Some(unknown(
            total_bps,
            "no evidence was sampled (--evidence-hz 0, or a peer that is not linerate)",
        ));
    };
    let by_side = |s: Side| {
        std::iter::once(&ev.local)
            .chain(ev.remote.as_ref())
            .find(|e| e.side == s)
    };
    let receiver_side = sender_side.other();
    let sender = by_side(sender_side);
    let receiver = by_side(receiver_side);
    if receiver.is_none() {
        unseen.push(format!(
            "the receiver ({}): {}",
            receiver_side.name(),
            ev.remote_missing
                .as_ref()
                .map_or("its evidence was not returned", |m| m.explanation.as_str())
        ));
    }
    let Some(sender) = sender else {
        unseen.push(format!(
            "the sender ({}): its TCP_INFO was not returned, so no limit clock was read",
            sender_side.name()
        ));
        let mut l = unknown(total_bps, "the sender's TCP_INFO was not seen");
        l.unseen = unseen;
        return Some(l);
    };
    let streams: Vec<Seen<'_>> = sender
        .tcp
        .iter()
        .filter(|t| t.role == Role::Sender)
        .map(|t| Seen {
            tcp: t,
            bps: stream_bps(doc, t.id, sender.tcp.len(), total_bps),
        })
        .collect();
    if streams.is_empty() {
        let mut l = unknown(total_bps, "no sending stream was sampled");
        l.unseen = unseen;
        return Some(l);
    }
    let min_rtt_us = streams.iter().filter_map(|s| s.tcp.min_rtt_us).min();
    let mss = streams.iter().filter_map(|s| s.tcp.mss_bytes).max();
    let mtu = streams
        .iter()
        .filter_map(|s| s.tcp.pmtu_bytes)
        .max()
        .unwrap_or(1500);
    let loss = loss_fraction(&streams);
    let report = |rate: BitRate, window: Option<ByteSize>| -> Option<PathReport> {
        let rtt = Duration::from_micros(min_rtt_us?.max(1));
        path_report(&PathInput {
            rate,
            rtt,
            window,
            loss: (loss > 0.0).then(|| Percent::from_fraction(loss)),
            mss: ByteSize::from_bytes(mss?),
            mtu: ByteSize::from_bytes(mtu),
            transfer: None,
        })
        .ok()
    };
    let ceiling_report = path.and_then(|p| report(p.rate, None));
    let ceiling = match (path, &ceiling_report) {
        (Some(p), Some(r)) => Some(Ceiling {
            path_rate_bps: p.rate.as_f64(),
            source: p.source.clone(),
            min_rtt_us: min_rtt_us.unwrap_or(0),
            mtu,
            mss: mss.unwrap_or(0),
            goodput_bps: r.goodput_at_line_rate.as_f64(),
            bdp_bytes: r.bdp.bytes(),
        }),
        _ => {
            unseen.push(match path {
                None => "the path's rate: give --path-rate to compare with its ceiling".into(),
                Some(_) => "the least RTT or the MSS, so the ceiling was not computed".into(),
            });
            None
        }
    };
    let mathis_bps = (loss > 0.0)
        .then(|| {
            let rate = path.map_or(BitRate::from_bps_f64(total_bps.max(1.0)), |p| p.rate);
            report(rate, None)?.mathis?.throughput.map(|t| t.as_f64())
        })
        .flatten();

    let at_ceiling = ceiling
        .as_ref()
        .is_some_and(|c| total_bps >= AT_CEILING * c.goodput_bps);
    let target = ts.target_bitrate.filter(|&b| b > 0).map(|b| b as f64);
    let n = streams.len() as f64;
    let mut verdicts: Vec<(StreamLimit, Option<CpuLimit>)> = streams
        .iter()
        .map(|s| {
            let (kind, share, cpu) = if at_ceiling {
                (LimitKind::AtCeiling, None, None)
            } else {
                let bdp = ceiling.as_ref().map(|c| c.bdp_bytes);
                judge(s, target.map(|t| t / n), bdp, sender, receiver)
            };
            (
                StreamLimit {
                    id: s.tcp.id,
                    kind,
                    share_percent: share.map(|f| f * 100.0),
                    bits_per_second: s.bps,
                    figures: figures(s.tcp),
                },
                cpu,
            )
        })
        .collect();
    // The test's limit: the one that held the streams carrying the most bytes.
    let mut weight: Vec<(LimitKind, f64)> = Vec::new();
    for (v, _) in &verdicts {
        match weight.iter_mut().find(|(k, _)| *k == v.kind) {
            Some((_, w)) => *w += v.bits_per_second.max(1.0),
            None => weight.push((v.kind, v.bits_per_second.max(1.0))),
        }
    }
    let kind = weight
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(LimitKind::Unknown, |w| w.0);
    let held: Vec<&StreamLimit> = verdicts
        .iter()
        .map(|(v, _)| v)
        .filter(|v| v.kind == kind)
        .collect();
    let bytes_of = |v: &StreamLimit| v.bits_per_second.max(1.0);
    let share_percent = {
        let known: Vec<_> = held
            .iter()
            .filter_map(|v| v.share_percent.map(|s| (s, bytes_of(v))))
            .collect();
        let w: f64 = known.iter().map(|k| k.1).sum();
        (w > 0.0).then(|| known.iter().map(|k| k.0 * k.1).sum::<f64>() / w)
    };
    let cpu = verdicts
        .iter_mut()
        .filter(|(v, _)| v.kind == kind)
        .find_map(|(_, c)| c.take());
    let prescription = match kind {
        LimitKind::SendBuffer => prescribe(
            BufferKind::Send,
            sender_side,
            path,
            ceiling_report.as_ref(),
            host,
            &mut unseen,
        ),
        LimitKind::ReceiveWindow => prescribe(
            BufferKind::Receive,
            receiver_side,
            path,
            ceiling_report.as_ref(),
            host,
            &mut unseen,
        ),
        _ => None,
    };
    let why = why(
        kind,
        total_bps,
        share_percent,
        ceiling.as_ref(),
        mathis_bps,
        cpu.as_ref(),
        loss,
    );
    Some(TcpLimit {
        kind,
        why,
        share_percent,
        bits_per_second: total_bps,
        ceiling,
        mathis_bps,
        cpu,
        streams: verdicts.into_iter().map(|(v, _)| v).collect(),
        prescription,
        unseen,
    })
}

fn unknown(bps: f64, why: &str) -> TcpLimit {
    TcpLimit {
        kind: LimitKind::Unknown,
        why: why.to_owned(),
        share_percent: None,
        bits_per_second: bps,
        ceiling: None,
        mathis_bps: None,
        cpu: None,
        streams: Vec::new(),
        prescription: None,
        unseen: Vec::new(),
    }
}

/// The rate stream `id` moved: its own sender report, else an equal share of the test's.
fn stream_bps(doc: &Document, id: i64, n: usize, total: f64) -> f64 {
    doc.end
        .streams
        .iter()
        .filter_map(|s| s.sender.as_ref())
        .find(|s| s.socket == Some(id))
        .map_or(total / n.max(1) as f64, |s| s.bits_per_second)
}

/// Retransmitted over sent, in bytes where both are known, else in segments.
fn loss_fraction(streams: &[Seen<'_>]) -> f64 {
    let (mut lost, mut sent) = (0.0, 0.0);
    for s in streams {
        let t = s.tcp;
        match (
            t.bytes_retransmitted,
            t.bytes_sent,
            t.retransmits,
            t.mss_bytes,
        ) {
            (Some(r), Some(b), _, _) if b > 0 => {
                lost += r as f64;
                sent += b as f64;
            }
            (_, _, Some(r), Some(m)) if m > 0 => {
                let b = t.bytes_acked.or(t.bytes_sent).unwrap_or(0) as f64;
                lost += r as f64 * m as f64;
                sent += b;
            }
            _ => {}
        }
    }
    if sent > 0.0 { lost / sent } else { 0.0 }
}

/// Share of the stream's busy time a clock held.
fn clock_share(clock: Option<u64>, busy: Option<u64>) -> Option<f64> {
    let busy = busy.filter(|&b| b > 0)?;
    Some((clock? as f64 / busy as f64).min(1.0))
}

/// One stream's limit, its share and the CPU behind it.
fn judge(
    s: &Seen<'_>,
    target: Option<f64>,
    bdp: Option<u64>,
    sender: &Evidence,
    receiver: Option<&Evidence>,
) -> (LimitKind, Option<f64>, Option<CpuLimit>) {
    let t = s.tcp;
    if target.is_some_and(|b| s.bps >= AT_CEILING * b) {
        return (LimitKind::ApplicationLimited, None, None);
    }
    let sender_cpu = full_core(sender, t.id);
    let receiver_cpu = receiver.and_then(|r| full_core(r, t.id));
    if let Some(share) = clock_share(t.sndbuf_limited_us, t.busy_us).filter(|&f| f >= CLOCK_SHARE) {
        return match sender_cpu {
            Some(c) => (LimitKind::Cpu, Some(share), Some(c)),
            None => (LimitKind::SendBuffer, Some(share), None),
        };
    }
    if let Some(share) = clock_share(t.rwnd_limited_us, t.busy_us).filter(|&f| f >= CLOCK_SHARE) {
        return match receiver_cpu {
            Some(c) => (LimitKind::Cpu, Some(share), Some(c)),
            None => (LimitKind::ReceiveWindow, Some(share), None),
        };
    }
    if let (Some(bdp), Some(flight), Some(queued), Some(buffer)) =
        (bdp, &t.unacked_bytes, &t.notsent_bytes, &t.sndbuf_bytes)
        && flight.mean + queued.mean >= BUFFER_FULL * buffer.max
        && queued.mean < flight.mean
        && flight.mean < 0.95 * bdp as f64
    {
        return match sender_cpu {
            Some(c) => (LimitKind::Cpu, None, Some(c)),
            None => (LimitKind::SendBuffer, None, None),
        };
    }
    // The peer's window full on average, below the BDP: the clock runs only while the sender
    // finds it closed at transmit time, so a window filled by each ACK's opening shows here.
    if let (Some(bdp), Some(flight), Some(window)) = (bdp, &t.unacked_bytes, &t.peer_window_bytes)
        && flight.mean >= WINDOW_FULL * window.mean
        && flight.mean < 0.95 * bdp as f64
    {
        return match receiver_cpu {
            Some(c) => (LimitKind::Cpu, None, Some(c)),
            None => (LimitKind::ReceiveWindow, None, None),
        };
    }
    if let Some(c) = receiver_cpu.or(sender_cpu) {
        return (LimitKind::Cpu, None, Some(c));
    }
    if t.retransmits.unwrap_or(0) > 0 {
        let limited = t.rwnd_limited_us.unwrap_or(0) + t.sndbuf_limited_us.unwrap_or(0);
        let share = t
            .busy_us
            .filter(|&b| b > 0)
            .map(|b| (b.saturating_sub(limited)) as f64 / b as f64);
        return (LimitKind::Congestion, share, None);
    }
    if let Some(app) = t.app_limited_percent.filter(|&p| p >= CLOCK_SHARE * 100.0) {
        return (LimitKind::ApplicationLimited, Some(app / 100.0), None);
    }
    (LimitKind::Unknown, None, None)
}

/// The full core behind stream `id` on one side: its thread at ≥ 90 % of a core, or the CPU
/// it is pinned to ≥ 95 % busy. An unpinned thread's last CPU being busy says nothing (the
/// CPU figures are system-wide, and the scheduler moves a thread that waits), so only a
/// pinned thread is held by its core.
fn full_core(e: &Evidence, id: i64) -> Option<CpuLimit> {
    let cpu: &CpuEvidence = &e.cpu;
    let thread = cpu
        .threads
        .as_ref()?
        .iter()
        .find(|t| t.stream_id == Some(id))?;
    let core = thread.pinned_cpu.or(thread.last_cpu);
    let share = core.and_then(|c| cpu.cpus.as_ref()?.iter().find(|s| s.cpu == c));
    let thread_busy = thread.user_percent + thread.system_percent;
    let core_busy = share.map(|s| s.busy_percent);
    let pinned_full = thread.pinned_cpu.is_some() && core_busy.is_some_and(|b| b >= CPU_FULL);
    let full = thread_busy >= THREAD_FULL || pinned_full;
    full.then(|| CpuLimit {
        side: e.side,
        thread: Some(thread.name.clone()),
        cpu: core,
        user_percent: thread.user_percent,
        system_percent: thread.system_percent,
        cpu_busy_percent: core_busy,
        softirq_percent: share.and_then(|s| s.softirq_percent),
        one_core_full: core_busy.is_some_and(|b| b >= CPU_FULL),
    })
}

fn figures(t: &TcpStreamEvidence) -> Vec<Figure> {
    let f = |name: &str, value: f64, unit: &str| Figure {
        name: name.to_owned(),
        value,
        unit: unit.to_owned(),
    };
    let mut out = Vec::new();
    if let Some(s) = clock_share(t.sndbuf_limited_us, t.busy_us) {
        out.push(f("sndbuf_limited", s * 100.0, "%"));
    }
    if let Some(s) = clock_share(t.rwnd_limited_us, t.busy_us) {
        out.push(f("rwnd_limited", s * 100.0, "%"));
    }
    if let Some(v) = t.min_rtt_us {
        out.push(f("min_rtt", v as f64, "us"));
    }
    if let Some(g) = &t.cwnd_bytes {
        out.push(f("cwnd_mean", g.mean, "bytes"));
    }
    if let Some(g) = &t.notsent_bytes {
        out.push(f("notsent_mean", g.mean, "bytes"));
    }
    if let Some(g) = &t.unacked_bytes {
        out.push(f("unacked_mean", g.mean, "bytes"));
    }
    if let Some(g) = &t.sndbuf_bytes {
        out.push(f("sndbuf_max", g.max, "bytes"));
        if let Some(u) = &t.unacked_bytes {
            let queued = t.notsent_bytes.as_ref().map_or(0.0, |q| q.mean);
            out.push(f(
                "sndbuf_used",
                (u.mean + queued) * 100.0 / g.max.max(1.0),
                "%",
            ));
        }
    }
    if let Some(g) = &t.peer_window_bytes {
        out.push(f("peer_window_max", g.max, "bytes"));
    }
    if let Some(r) = t.retransmits {
        out.push(f("retransmits", r as f64, "segments"));
    }
    if let Some(a) = t.app_limited_percent {
        out.push(f("app_limited", a, "%"));
    }
    out
}

#[derive(Clone, Copy)]
enum BufferKind {
    Send,
    Receive,
}

/// The settings that lift a buffer limit: `buffers::linux` for the path's rate, the least RTT
/// and the kernel; the ceiling after it is calc's with the new buffer's window.
fn prescribe(
    kind: BufferKind,
    side: Side,
    path: Option<&PathRate>,
    ceiling: Option<&PathReport>,
    host: &HostFacts,
    unseen: &mut Vec<String>,
) -> Option<Prescription> {
    let (Some(path), Some(report)) = (path, ceiling) else {
        unseen.push(
            "the buffer that lifts it: the path's rate and RTT size it (give --path-rate)".into(),
        );
        return None;
    };
    let Some(release) = host.kernel.as_deref() else {
        unseen.push("the kernel's release, whose defaults the buffer values start from".into());
        return None;
    };
    let version: Version = release.parse().ok()?;
    let advice = linux(&BufferInput {
        rate: path.rate,
        rtt: report.rtt,
        version,
        ram: host.ram,
        page_size: ByteSize::from_kib(4),
    })
    .ok()?;
    let (tcp_key, core_key) = match kind {
        BufferKind::Send => ("net.ipv4.tcp_wmem", "net.core.wmem_max"),
        BufferKind::Receive => ("net.ipv4.tcp_rmem", "net.core.rmem_max"),
    };
    let tcp = advice.key(tcp_key)?;
    let max = advice.max(tcp_key)?;
    let mut settings = vec![SettingChange {
        key: tcp_key.to_owned(),
        value: tcp.value.clone(),
    }];
    if let Some(core) = advice.key(core_key).filter(|k| k.change) {
        settings.push(SettingChange {
            key: core_key.to_owned(),
            value: core.value.clone(),
        });
    }
    let window = ByteSize::from_bytes_f64(max as f64 * LINUX_WINDOW_SHARE);
    let predicted = path_report(&PathInput {
        rate: path.rate,
        rtt: report.rtt,
        window: Some(window),
        loss: None,
        mss: report.mss,
        mtu: report.rfc6349.mtu,
        transfer: None,
    })
    .ok()?
    .ceiling;
    let sets: Vec<String> = settings
        .iter()
        .map(|s| {
            if s.value.contains(' ') {
                format!("--set '{}={}'", s.key, s.value)
            } else {
                format!("--set {}={}", s.key, s.value)
            }
        })
        .collect();
    Some(Prescription {
        side,
        kernel: release.to_owned(),
        predicted_bps: predicted.as_f64(),
        apply: format!("linerate tune {} --apply", sets.join(" ")),
        rollback: "linerate tune --rollback".into(),
        prove: format!(
            "run the test 5 times before and 5 after, interleaved (a `linerate lab run` \
             experiment with a variant setting {tcp_key}, or [hosts] in one for real hosts), \
             then `linerate compare --experiment NAME --confidence 95`"
        ),
        settings,
    })
}

fn why(
    kind: LimitKind,
    bps: f64,
    share: Option<f64>,
    ceiling: Option<&Ceiling>,
    mathis: Option<f64>,
    cpu: Option<&CpuLimit>,
    loss: f64,
) -> String {
    let rate = BitRate::from_bps_f64(bps).human();
    let of_ceiling = ceiling.map_or(String::new(), |c| {
        format!(
            " ({:.0} % of the path's {} goodput)",
            bps * 100.0 / c.goodput_bps.max(1.0),
            BitRate::from_bps_f64(c.goodput_bps).human()
        )
    });
    let held = share.map_or(String::new(), |s| format!(", {s:.0} % of the time"));
    match kind {
        LimitKind::AtCeiling => format!("{rate}{of_ceiling}: the path is full"),
        LimitKind::SendBuffer => match share {
            Some(_) => format!(
                "{rate}{of_ceiling}: the sender had nothing left to send, waiting for room in \
                 its socket buffer{held}"
            ),
            None => format!(
                "{rate}{of_ceiling}: the sender's socket buffer was full, its bytes in flight \
                 below the path's BDP: the buffer, not the path, held the window"
            ),
        },
        LimitKind::ReceiveWindow => match share {
            Some(_) => {
                format!("{rate}{of_ceiling}: the sender waited for the receiver's window{held}")
            }
            None => format!(
                "{rate}{of_ceiling}: the bytes in flight filled the receiver's advertised \
                 window, below the path's BDP"
            ),
        },
        LimitKind::Congestion => format!(
            "{rate}{of_ceiling}: loss ({:.3} % of the bytes retransmitted) held the congestion \
             window{}",
            loss * 100.0,
            mathis.map_or(String::new(), |m| format!(
                "; the Mathis bound at that loss is {}",
                BitRate::from_bps_f64(m).human()
            ))
        ),
        LimitKind::Cpu => match cpu {
            Some(c) => format!(
                "{rate}{of_ceiling}: the {} side's CPU — {} at {:.0} % user, {:.0} % system{}{}",
                c.side.name(),
                c.thread.as_deref().unwrap_or("its stream thread"),
                c.user_percent,
                c.system_percent,
                c.cpu.map_or(String::new(), |n| format!(
                    " on CPU {n}{}",
                    c.cpu_busy_percent
                        .map_or(String::new(), |b| format!(" ({b:.0} % busy)"))
                )),
                if c.one_core_full {
                    ": one core at 100 %"
                } else {
                    ""
                }
            ),
            None => format!("{rate}{of_ceiling}: a CPU"),
        },
        LimitKind::ApplicationLimited => {
            format!("{rate}{of_ceiling}: the application sent no more (-b or pacing){held}")
        }
        LimitKind::Unknown => format!(
            "{rate}{of_ceiling}: no clock, CPU or loss names a limit{}",
            if ceiling.is_none() {
                " (the path's ceiling is unknown)"
            } else {
                ""
            }
        ),
    }
}

/// The limit most runs of a variant name, with how many named it: what `lab run`, `compare`
/// and `report` print beside the variant's mean (`None` when no run has a verdict).
pub fn dominant(kinds: &[LimitKind]) -> Option<(LimitKind, usize)> {
    let mut counts: Vec<(LimitKind, usize)> = Vec::new();
    for k in kinds {
        match counts.iter_mut().find(|(c, _)| c == k) {
            Some((_, n)) => *n += 1,
            None => counts.push((*k, 1)),
        }
    }
    // The most named; among equals the first named.
    counts
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.1.cmp(&b.1.1).then(b.0.cmp(&a.0)))
        .map(|(_, c)| *c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(evidence: serde_json::Value, bps: f64) -> Document {
        Document::from_value(&json!({
            "start": {"test_start": {"protocol": "TCP", "num_streams": 1}},
            "end": {"sum_sent": {"bytes": 1, "bits_per_second": bps},
                    "streams": [{"sender": {"socket": 1, "bytes": 1, "bits_per_second": bps}}]},
            "linerate": {"evidence": evidence}
        }))
        .unwrap()
    }

    fn sender(tcp: serde_json::Value) -> serde_json::Value {
        json!({"local": {"side": "client", "sample_hz": 100, "seconds": 2.0,
            "streams": [{"id": 1, "role": "sender"}], "tcp": [tcp],
            "cpu": {"seconds": 2.0, "process": {"user_percent": 1.0, "system_percent": 20.0}}},
            "remote_missing": {"reason": "iperf3_peer", "explanation": "an iperf3 server"}})
    }

    fn path(rate: f64) -> PathRate {
        PathRate {
            rate: BitRate::from_bps_f64(rate),
            source: "--path-rate".into(),
        }
    }

    fn host() -> HostFacts {
        HostFacts {
            kernel: Some("6.1.0-18-amd64".into()),
            ram: None,
        }
    }

    #[test]
    fn a_sender_blocked_on_its_buffer_is_send_buffer_with_calc_s_prescription() {
        let d = doc(
            sender(
                json!({"id": 1, "role": "sender", "samples": 200, "busy_us": 2_000_000,
                "sndbuf_limited_us": 1_500_000, "min_rtt_us": 20_000, "mss_bytes": 1448,
                "pmtu_bytes": 1500}),
            ),
            7.0e8,
        );
        let l = explain(&d, Some(&path(1e9)), &host()).unwrap();
        assert_eq!(l.kind, LimitKind::SendBuffer);
        assert_eq!(l.share_percent, Some(75.0));
        let p = l.prescription.unwrap();
        assert_eq!(p.side, Side::Client);
        // calc bdp --rate 1G --rtt 20ms: 2 × 2.5 MB rounded up to a power of two.
        assert_eq!(p.settings[0].key, "net.ipv4.tcp_wmem");
        assert!(
            p.settings[0].value.ends_with(" 8388608"),
            "{:?}",
            p.settings
        );
        assert!(p.predicted_bps > 9.4e8);
        assert!(
            l.unseen.iter().any(|u| u.contains("iperf3")),
            "{:?}",
            l.unseen
        );
    }

    #[test]
    fn near_the_ceiling_is_at_it_and_loss_gives_the_mathis_bound() {
        let tcp = json!({"id": 1, "role": "sender", "samples": 200, "busy_us": 2_000_000,
            "min_rtt_us": 20_000, "mss_bytes": 1448, "pmtu_bytes": 1500,
            "retransmits": 100, "bytes_retransmitted": 144_800, "bytes_sent": 144_800_000});
        let at = explain(&doc(sender(tcp.clone()), 9.3e8), Some(&path(1e9)), &host()).unwrap();
        assert_eq!(at.kind, LimitKind::AtCeiling);
        assert!(at.prescription.is_none());
        let lossy = explain(&doc(sender(tcp), 3.0e7), Some(&path(1e9)), &host()).unwrap();
        assert_eq!(lossy.kind, LimitKind::Congestion);
        // 0.1 % loss, MSS 1448, 20 ms: 1448 × 8 / 0.02 × 1.2247 / √0.001 ≈ 22.4 Mbit/s.
        let m = lossy.mathis_bps.unwrap();
        assert!((m - 22.43e6).abs() < 0.1e6, "{m}");
    }

    #[test]
    fn without_the_path_s_rate_nothing_is_sized_and_that_is_said() {
        let d = doc(
            sender(
                json!({"id": 1, "role": "sender", "samples": 200, "busy_us": 2_000_000,
                "rwnd_limited_us": 1_800_000, "min_rtt_us": 20_000, "mss_bytes": 1448}),
            ),
            1.0e8,
        );
        let l = explain(&d, None, &host()).unwrap();
        assert_eq!(l.kind, LimitKind::ReceiveWindow);
        assert!(l.ceiling.is_none() && l.prescription.is_none());
        assert!(
            l.unseen.iter().any(|u| u.contains("--path-rate")),
            "{:?}",
            l.unseen
        );
    }

    #[test]
    fn the_dominant_limit_is_the_most_named() {
        use LimitKind::*;
        assert_eq!(dominant(&[]), None);
        assert_eq!(
            dominant(&[Cpu, SendBuffer, SendBuffer]),
            Some((SendBuffer, 2))
        );
        assert_eq!(dominant(&[Cpu, SendBuffer]), Some((Cpu, 1)));
    }
}

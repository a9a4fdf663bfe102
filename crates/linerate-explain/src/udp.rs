//! Why a UDP test lost datagrams: the sender's count, the receiver's loss count and each
//! side's drop counters (`linerate_iperf3::udp_limit::UdpCounters` in its evidence) turned
//! into where the datagrams went — the sender's socket buffer or interface, the receiver's
//! interface/ring or socket buffer, or, what no counter explains, the path — with each side's
//! CPU, and the settings that lift the limit: the receive buffer that would have held what
//! overflowed (offered rate × drain gap, through `-w` and `net.core.rmem_max` with the
//! `linerate tune` commands that apply and roll it back), more receive queues or RPS, and
//! `--affinity` when the receiver cannot keep up on average.
//!
//! Counters are namespace-wide: on a busy host other sockets add to them, so each place is
//! capped at the datagrams actually lost.

use linerate_iperf3::Document;
use linerate_iperf3::evidence::{Evidence, Side};
use linerate_iperf3::udp_limit::{
    LossCount, LossPlace, SettingChange, SideCpu, UdpLimit, UdpPrescription,
};
use linerate_units::{BitRate, ByteSize};

/// Below this share of the offered rate, on average over the test, the receiver does not keep
/// up: a larger buffer only delays the loss.
const KEEPS_UP: f64 = 0.9;

/// The smallest buffer worth prescribing: Linux's default `rmem_max` (208 KiB).
const MIN_BUFFER: u64 = 212_992;

/// The largest `SO_RCVBUF` Linux takes (an `int`).
const MAX_BUFFER: u64 = i32::MAX as u64;

/// The verdict of a UDP test's document; `None` for a test that is not UDP or has no UDP
/// totals.
pub fn explain(doc: &Document) -> Option<UdpLimit> {
    let ts = doc.start.test_start.as_ref()?;
    if !ts.protocol.as_deref()?.eq_ignore_ascii_case("udp") {
        return None;
    }
    let udp: Vec<_> = doc
        .end
        .streams
        .iter()
        .filter_map(|s| s.udp.as_ref())
        .collect();
    if udp.is_empty() {
        return None;
    }
    let reported: u64 = udp.iter().filter_map(|u| u.packets).sum();
    let lost: u64 = udp.iter().filter_map(|u| u.lost_packets).sum();
    let lr = doc.linerate.as_ref();
    // The sender's own count when it is linerate's; otherwise the receiver's highest number.
    let sent = lr
        .map(|l| l.streams.iter().filter_map(|s| s.sent_packets).sum::<u64>())
        .filter(|&n| n > 0)
        .unwrap_or(reported);
    let received = reported.saturating_sub(lost);
    let lost = sent.saturating_sub(received).max(lost);
    let seconds = udp
        .iter()
        .filter_map(|u| u.seconds)
        .fold(0.0_f64, f64::max)
        .max(1e-9);
    let len = ts.blksize.unwrap_or(0);
    let offered_bps = (sent * len * 8) as f64 / seconds;
    let received_bps = (received * len * 8) as f64 / seconds;

    let sender_side = if ts.reverse.unwrap_or(0) == 1 {
        Side::Server
    } else {
        Side::Client
    };
    let ev = lr.and_then(|l| l.evidence.as_ref());
    let side = |s: Side| {
        ev.and_then(|e| {
            std::iter::once(&e.local)
                .chain(e.remote.as_ref())
                .find(|x| x.side == s)
        })
    };
    let other = |s: Side| match s {
        Side::Client => Side::Server,
        Side::Server => Side::Client,
    };
    let sender = side(sender_side);
    let receiver = side(other(sender_side));
    let input = Counted {
        sent,
        received,
        lost,
        len,
        offered_bps,
        received_bps,
    };
    Some(verdict(&input, sender_side, sender, receiver, ev))
}

/// The figures of the test.
#[derive(Debug, Clone, Copy)]
struct Counted {
    sent: u64,
    received: u64,
    lost: u64,
    len: u64,
    offered_bps: f64,
    received_bps: f64,
}

fn verdict(
    c: &Counted,
    sender_side: Side,
    sender: Option<&Evidence>,
    receiver: Option<&Evidence>,
    ev: Option<&linerate_iperf3::evidence::TestEvidence>,
) -> UdpLimit {
    let mut unseen = Vec::new();
    let su = sender.and_then(|e| e.udp.as_ref());
    let ru = receiver.and_then(|e| e.udp.as_ref());
    if su.is_none() {
        unseen.push(format!(
            "the sender's ({}) drop counters were not read",
            sender_side.name()
        ));
    }
    if ru.is_none() {
        let why = ev
            .and_then(|e| e.remote_missing.as_ref())
            .map_or("they were not read", |m| m.explanation.as_str());
        unseen.push(format!("the receiver's drop counters: {why}"));
    }
    // Each place capped at what is left to explain: namespace-wide counters may hold others'.
    let mut left = c.lost;
    let mut losses = Vec::new();
    let mut count = |place: LossPlace, n: Option<u64>| {
        if let Some(n) = n.map(|n| n.min(left)).filter(|&n| n > 0) {
            left -= n;
            losses.push(LossCount {
                place,
                datagrams: n,
            });
        }
    };
    count(LossPlace::ReceiverSocketBuffer, ru.map(|u| u.rcvbuf_errors));
    // A qdisc drop of a UDP send is also a SndbufErrors (ENOBUFS): counted once, at the qdisc.
    let qdisc = su.map(|u| u.interfaces.iter().map(|i| i.qdisc_dropped).sum::<u64>());
    count(LossPlace::SenderQdisc, qdisc);
    count(
        LossPlace::SenderSocket,
        su.map(|u| u.sndbuf_errors.saturating_sub(qdisc.unwrap_or(0))),
    );
    count(
        LossPlace::SenderInterface,
        su.map(|u| u.interfaces.iter().map(|i| i.tx_dropped).sum()),
    );
    count(
        LossPlace::ReceiverInterface,
        // The driver's counters and /proc/net/dev's may count the same packets: the larger.
        ru.map(|u| {
            u.interfaces
                .iter()
                .map(|i| i.rx_dropped.max(i.ring_dropped))
                .sum()
        }),
    );
    if left > 0 {
        let place = if ru.is_some() {
            LossPlace::Path
        } else {
            LossPlace::Unknown
        };
        losses.push(LossCount {
            place,
            datagrams: left,
        });
    }
    losses.sort_by_key(|l| std::cmp::Reverse(l.datagrams));
    let place = losses.first().map_or(LossPlace::None, |l| l.place);
    let cpu: Vec<SideCpu> = [sender, receiver]
        .into_iter()
        .flatten()
        .map(side_cpu)
        .collect();
    let dropped = losses.first().map_or(0, |l| l.datagrams);
    let receiver_cpu = receiver.map(side_cpu);
    UdpLimit {
        place,
        sent: c.sent,
        received: c.received,
        lost: c.lost,
        prescription: prescribe(c, place, dropped, sender_side.other(), receiver_cpu),
        losses,
        offered_bps: c.offered_bps,
        received_bps: c.received_bps,
        cpu,
        unseen,
    }
}

fn side_cpu(e: &Evidence) -> SideCpu {
    let p = &e.cpu.process;
    let busiest = e.cpu.busiest.as_ref().and_then(|b| {
        b.iter().map(|i| i.busiest).reduce(|a, b| {
            if b.busy_percent > a.busy_percent {
                b
            } else {
                a
            }
        })
    });
    SideCpu {
        busiest_cpu_percent: busiest.map(|c| c.busy_percent),
        busiest_cpu_softirq_percent: busiest.and_then(|c| c.softirq_percent),
        side: e.side,
        user_percent: p.user_percent,
        system_percent: p.system_percent,
        busiest_thread_percent: e.cpu.threads.as_ref().and_then(|t| {
            t.iter()
                .filter(|t| t.stream_id.is_some())
                .map(|t| t.user_percent + t.system_percent)
                .reduce(f64::max)
        }),
    }
}

/// What lifts a limit at `place` where `dropped` datagrams were lost.
fn prescribe(
    c: &Counted,
    place: LossPlace,
    dropped: u64,
    receiver_side: Side,
    receiver_cpu: Option<SideCpu>,
) -> Option<UdpPrescription> {
    let keeps_up = c.sent > 0 && c.received as f64 >= KEEPS_UP * c.sent as f64;
    let pinned_busy = receiver_cpu
        .and_then(|r| r.busiest_thread_percent)
        .is_some_and(|p| p >= 90.0);
    match place {
        LossPlace::ReceiverSocketBuffer => {
            // The receiver fell behind for the time it took the offered rate to bring what
            // overflowed: that time at that rate is the buffer that would have held it.
            let offered = BitRate::from_bps_f64(c.offered_bps);
            let gap = if c.offered_bps > 0.0 {
                (dropped * c.len * 8) as f64 / c.offered_bps
            } else {
                0.0
            };
            let need = offered.bytes_in(gap).bytes();
            let buffer = need.max(MIN_BUFFER).next_power_of_two().min(MAX_BUFFER);
            let set = format!("net.core.rmem_max={buffer}");
            let mut advice = Vec::new();
            if !keeps_up {
                advice.push(format!(
                    "the receiver drained {:.0} % of what was offered over the whole test: it \
                     cannot keep up on average, so a larger buffer only delays the loss; spread \
                     the receive work (more receive queues, or RPS: \
                     /sys/class/net/IFACE/queues/rx-*/rps_cpus) and pin the receiving thread \
                     away from the CPU that takes the interrupts (--affinity on the receiver)",
                    c.received as f64 * 100.0 / c.sent.max(1) as f64
                ));
            }
            advice.push(format!(
                "the receiver's socket buffer overflowed {dropped} times: it fell behind for \
                 {gap:.3} s in all, {} at the offered {}; a receive buffer of {} (-w {buffer} \
                 on the receiver, within net.core.rmem_max) would have held it{}",
                ByteSize::from_bytes(need).human(),
                offered.human(),
                ByteSize::from_bytes(buffer).human(),
                if keeps_up {
                    ""
                } else {
                    " for this test's length, not a longer one's"
                },
            ));
            if pinned_busy {
                advice.push(
                    "the receiving thread was ≥ 90 % of one core: the receiver is CPU-bound; \
                     --affinity to an idle core, or more streams (-P) on more cores"
                        .to_owned(),
                );
            }
            Some(UdpPrescription {
                buffer_bytes: Some(buffer),
                drain_gap_seconds: Some(gap),
                settings: vec![SettingChange {
                    key: "net.core.rmem_max".to_owned(),
                    value: buffer.to_string(),
                }],
                side: receiver_side,
                flags: vec![format!("-w {buffer}")],
                apply: Some(format!("linerate tune --set {set} --apply")),
                rollback: Some("linerate tune --rollback".to_owned()),
                advice,
            })
        }
        LossPlace::ReceiverInterface => Some(UdpPrescription {
            buffer_bytes: None,
            drain_gap_seconds: None,
            settings: vec![],
            side: receiver_side,
            flags: vec!["--affinity".to_owned()],
            apply: None,
            rollback: None,
            advice: vec![format!(
                "the receiver's interface dropped {dropped} packets on arrival: larger rings \
                 (ethtool -G IFACE rx N), more receive queues (ethtool -L) or RPS, and the \
                 receiving thread pinned off the interrupt CPU (--affinity)"
            )],
        }),
        LossPlace::SenderQdisc => Some(UdpPrescription {
            buffer_bytes: None,
            drain_gap_seconds: None,
            settings: vec![],
            side: receiver_side.other(),
            flags: vec![],
            apply: None,
            rollback: None,
            advice: vec![format!(
                "the sender's qdisc dropped {dropped} datagrams: its queue is full or shapes \
                 below the offered rate (tc -s qdisc show dev IFACE); pace at or below its rate \
                 (-b) or raise its limit"
            )],
        }),
        LossPlace::SenderSocket | LossPlace::SenderInterface => Some(UdpPrescription {
            buffer_bytes: None,
            drain_gap_seconds: None,
            settings: vec![],
            side: receiver_side.other(),
            flags: vec![],
            apply: None,
            rollback: None,
            advice: vec![format!(
                "the sender dropped {dropped} datagrams before they left: its socket buffer or \
                 transmit queue was full; pace lower (-b) or lengthen the queue (ip link set \
                 IFACE txqueuelen N)"
            )],
        }),
        LossPlace::None | LossPlace::Path | LossPlace::Unknown => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn counters(rcvbuf: u64, sndbuf: u64, rx_drop: u64) -> serde_json::Value {
        json!({"in_datagrams": 1, "out_datagrams": 1, "rcvbuf_errors": rcvbuf,
               "sndbuf_errors": sndbuf,
               "interfaces": [{"name": "veth0", "rx_packets": 5, "tx_packets": 5,
                               "rx_dropped": rx_drop, "tx_dropped": 0}]})
    }

    fn side(name: &str, udp: Option<serde_json::Value>, thread_busy: f64) -> serde_json::Value {
        let mut v = json!({"side": name, "sample_hz": 100, "seconds": 2.0,
            "streams": [{"id": 1, "role": "sender"}], "tcp": [],
            "cpu": {"seconds": 2.0, "process": {"user_percent": 2.0, "system_percent": 40.0},
                    "threads": [{"name": "lr-stream-1", "stream_id": 1,
                                 "user_percent": 1.0, "system_percent": thread_busy}],
                    "busiest": [{"start": 0.0, "end": 1.0, "busiest": {"cpu": 1,
                        "busy_percent": 80.0, "user_percent": 5.0, "system_percent": 30.0,
                        "irq_percent": 0.0, "softirq_percent": 45.0}},
                                {"start": 1.0, "end": 2.0, "busiest": {"cpu": 0,
                        "busy_percent": 99.0, "user_percent": 5.0, "system_percent": 30.0,
                        "irq_percent": 0.0, "softirq_percent": 64.0}}]}});
        if let Some(u) = udp {
            v["udp"] = u;
        }
        v
    }

    /// A 2 s UDP test of 1000-byte datagrams: `sent` sent, `lost` lost by the receiver's count.
    fn doc(sent: u64, lost: u64, evidence: serde_json::Value) -> Document {
        Document::from_value(&json!({
            "start": {"test_start": {"protocol": "UDP", "blksize": 1000, "reverse": 0}},
            "end": {"streams": [{"udp": {"bytes": sent * 1000, "bits_per_second": 0.0,
                "seconds": 2.0, "packets": sent, "lost_packets": lost}}]},
            "linerate": {"streams": [{"id": 1, "direction": "send", "sent_packets": sent}],
                         "evidence": evidence}
        }))
        .unwrap()
    }

    #[test]
    fn receiver_overflow_is_the_place_with_its_count_and_buffer() {
        let ev = json!({"local": side("client", Some(counters(0, 0, 0)), 50.0),
                        "remote": side("server", Some(counters(4000, 0, 0)), 30.0)});
        let l = explain(&doc(10_000, 5_000, ev)).unwrap();
        assert_eq!(l.place, LossPlace::ReceiverSocketBuffer);
        assert_eq!((l.sent, l.received, l.lost), (10_000, 5_000, 5_000));
        assert_eq!(
            l.losses,
            [
                LossCount {
                    place: LossPlace::ReceiverSocketBuffer,
                    datagrams: 4000
                },
                LossCount {
                    place: LossPlace::Path,
                    datagrams: 1000
                }
            ]
        );
        assert!((l.offered_bps - 40e6).abs() < 1.0, "{}", l.offered_bps);
        let p = l.prescription.unwrap();
        assert_eq!(p.side, Side::Server);
        // 4000 datagrams of 1000 bytes at 40 Mbit/s: 0.8 s behind, 4 MB, rounded up to 4 MiB.
        assert!((p.drain_gap_seconds.unwrap() - 0.8).abs() < 1e-9);
        assert_eq!(p.buffer_bytes, Some(4 << 20));
        assert_eq!(p.settings[0].value, (4u64 << 20).to_string());
        assert_eq!(
            p.apply.as_deref(),
            Some("linerate tune --set net.core.rmem_max=4194304 --apply")
        );
        assert_eq!(p.flags, ["-w 4194304"]);
        // Half drained over the whole test: the receiver does not keep up, said so.
        assert!(p.advice.iter().any(|a| a.contains("RPS")), "{:?}", p.advice);
        assert_eq!(l.cpu.len(), 2);
        assert_eq!(l.cpu[1].busiest_thread_percent, Some(31.0));
        assert_eq!(l.cpu[1].busiest_cpu_percent, Some(99.0));
        assert_eq!(l.cpu[1].busiest_cpu_softirq_percent, Some(64.0));
        assert!(l.unseen.is_empty());
    }

    #[test]
    fn counters_of_others_are_capped_at_what_was_lost() {
        let ev = json!({"local": side("client", Some(counters(0, 0, 0)), 5.0),
                        "remote": side("server", Some(counters(9_999_999, 0, 0)), 5.0)});
        let l = explain(&doc(1000, 10, ev)).unwrap();
        assert_eq!(l.losses.len(), 1);
        assert_eq!(l.losses[0].datagrams, 10);
        // A short overflow, drained on average: the buffer, no word of RPS.
        let p = l.prescription.unwrap();
        assert_eq!(p.buffer_bytes, Some(262_144));
        assert!(!p.advice.iter().any(|a| a.contains("RPS")));
    }

    #[test]
    fn qdisc_drops_are_the_sender_s_qdisc_not_its_socket() {
        // 400 sends refused: 300 by the qdisc (also counted in SndbufErrors), 100 by the
        // socket buffer itself.
        let sender = json!({"in_datagrams": 0, "out_datagrams": 600, "rcvbuf_errors": 0,
                            "sndbuf_errors": 400,
                            "interfaces": [{"name": "v0", "rx_packets": 0, "tx_packets": 600,
                                            "rx_dropped": 0, "tx_dropped": 0,
                                            "qdisc_dropped": 300}]});
        let ev = json!({"local": side("client", Some(sender), 5.0),
                        "remote": side("server", Some(counters(0, 0, 0)), 5.0)});
        let l = explain(&doc(1000, 400, ev)).unwrap();
        assert_eq!(l.place, LossPlace::SenderQdisc);
        assert_eq!(l.losses[0].datagrams, 300);
        assert_eq!(l.losses[1].place, LossPlace::SenderSocket);
        assert_eq!(l.losses[1].datagrams, 100);
        let p = l.prescription.unwrap();
        assert!(p.advice[0].contains("qdisc dropped 300"), "{p:?}");
    }

    #[test]
    fn interface_drops_and_the_path_and_no_loss() {
        let ev = json!({"local": side("client", Some(counters(0, 0, 0)), 5.0),
                        "remote": side("server", Some(counters(0, 0, 70)), 5.0)});
        let l = explain(&doc(1000, 100, ev)).unwrap();
        assert_eq!(l.place, LossPlace::ReceiverInterface);
        assert_eq!(l.losses[1].place, LossPlace::Path);
        assert_eq!(l.losses[1].datagrams, 30);

        let ev = json!({"local": side("client", Some(counters(0, 0, 0)), 5.0),
                        "remote": side("server", Some(counters(0, 0, 0)), 5.0)});
        let l = explain(&doc(1000, 100, ev.clone())).unwrap();
        assert_eq!(l.place, LossPlace::Path);
        assert_eq!(l.prescription, None);
        let l = explain(&doc(1000, 0, ev)).unwrap();
        assert_eq!((l.place, l.losses.len()), (LossPlace::None, 0));
    }

    #[test]
    fn the_driver_s_ring_drops_are_the_receiver_s_interface_counted_once() {
        let remote = |rx: u64, ring: u64| {
            json!({"in_datagrams": 1, "out_datagrams": 1, "rcvbuf_errors": 0,
                   "sndbuf_errors": 0,
                   "interfaces": [{"name": "eth0", "rx_packets": 5, "tx_packets": 5,
                                   "rx_dropped": rx, "tx_dropped": 0, "ring_dropped": ring}]})
        };
        // Only the driver saw them (a ring overrun /proc/net/dev does not count).
        let ev = json!({"local": side("client", Some(counters(0, 0, 0)), 5.0),
                        "remote": side("server", Some(remote(0, 60)), 5.0)});
        let l = explain(&doc(1000, 100, ev)).unwrap();
        assert_eq!(l.place, LossPlace::ReceiverInterface);
        assert_eq!(l.losses[0].datagrams, 60);
        // Both counted the same drops: the larger, not the sum.
        let ev = json!({"local": side("client", Some(counters(0, 0, 0)), 5.0),
                        "remote": side("server", Some(remote(40, 60)), 5.0)});
        let l = explain(&doc(1000, 100, ev)).unwrap();
        assert_eq!(l.losses[0].datagrams, 60);
        assert_eq!(l.losses[1].place, LossPlace::Path);
        assert_eq!(l.losses[1].datagrams, 40);
    }

    #[test]
    fn with_an_iperf3_server_the_receiver_is_unknown_and_said_so() {
        let ev = json!({"local": side("client", Some(counters(0, 0, 0)), 5.0),
                        "remote_missing": {"reason": "iperf3_peer",
                                           "explanation": "the server is iperf3"}});
        let l = explain(&doc(1000, 100, ev)).unwrap();
        assert_eq!(l.place, LossPlace::Unknown);
        assert_eq!(l.unseen.len(), 1);
        assert!(
            l.unseen[0].contains("the server is iperf3"),
            "{:?}",
            l.unseen
        );
        assert_eq!(l.prescription, None);
    }

    #[test]
    fn tcp_tests_have_no_udp_verdict() {
        let d =
            Document::from_value(&json!({"start": {"test_start": {"protocol": "TCP"}}})).unwrap();
        assert_eq!(explain(&d), None);
    }
}

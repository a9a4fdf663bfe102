//! `--json` of known results, kept in golden files byte for byte: the shape users' iperf3
//! parsers read, in the order it is printed. `LINERATE_BLESS=1` rewrites the files.
//!
//! (When the writer moved from `serde_json::Value` to the typed schema, these files were first
//! written by the old writer and the new one gave the same keys and values.)

use linerate_traffic::config::{Direction, Mode, Protocol};
use linerate_traffic::cpu::CpuUtil;
use linerate_traffic::latency::{HistogramDump, LatencySummary};
use linerate_traffic::modes::result::{ModeResult, PpsResult, RrInterval, RrResult, ThreadReport};
use linerate_traffic::result::*;

fn start(protocol: Protocol, mode: Mode, bidir: bool) -> StartInfo {
    StartInfo {
        engine_version: "0.1.0".into(),
        timestamp: 1_795_822_225,
        cookie: "abcdefghijklmnopqrstuvwxyz234567abcd".into(),
        peer: PeerInfo {
            host: "127.0.0.1".into(),
            addr: "127.0.0.1".into(),
            port: 5201,
            kind: PeerKind::Linerate,
            version: Some("0.1.0".into()),
        },
        connected: vec![
            Connection {
                id: 1,
                direction: Direction::Send,
                local: "127.0.0.1:40000".into(),
                remote: "127.0.0.1:5201".into(),
            },
            Connection {
                id: 3,
                direction: Direction::Receive,
                local: "127.0.0.1:40002".into(),
                remote: "127.0.0.1:5201".into(),
            },
        ],
        protocol,
        mode,
        parallel: 1,
        reverse: false,
        bidir,
        blksize: 1448,
        omit_secs: 0.0,
        duration_secs: 2.0,
        bytes: 0,
        blocks: 0,
        target_bitrate: 1_000_000,
        tos: 0,
        interval_secs: 1.0,
        tcp_mss_default: Some(1448),
        sock_bufsize: 0,
        sndbuf_actual: 16384,
        rcvbuf_actual: 131_072,
        system_info: "Linux test 6.1 x86_64".into(),
    }
}

fn tcp() -> RunResult {
    let iv = |s: f64| Interval {
        start: s,
        end: s + 1.0,
        omitted: false,
        streams: vec![
            StreamInterval {
                id: 1,
                direction: Direction::Send,
                bytes: 1_000_000,
                bits_per_second: 8e6,
                tcp: Some(TcpSample {
                    retransmits: 2,
                    snd_cwnd: 65_000,
                    rtt_us: 40,
                    rttvar_us: 5,
                    pmtu: 65_535,
                }),
                udp: None,
            },
            StreamInterval {
                id: 3,
                direction: Direction::Receive,
                bytes: 500_000,
                bits_per_second: 4e6,
                tcp: None,
                udp: None,
            },
        ],
    };
    let mut sender = SideTotals::new(2_000_000, 2.0);
    sender.retransmits = Some(4);
    sender.max_snd_cwnd = Some(70_000);
    sender.min_rtt = Some(30);
    sender.mean_rtt = Some(40);
    sender.max_rtt = Some(55);
    RunResult {
        schema: SCHEMA.into(),
        start: start(Protocol::Tcp, Mode::Stream, true),
        intervals: vec![iv(0.0), iv(1.0)],
        end: EndInfo {
            streams: vec![
                StreamSummary {
                    id: 1,
                    direction: Direction::Send,
                    sender,
                    receiver: SideTotals::new(1_999_000, 2.001),
                    udp: None,
                },
                StreamSummary {
                    id: 3,
                    direction: Direction::Receive,
                    sender: SideTotals::new(1_000_000, 2.0),
                    receiver: SideTotals::new(1_000_000, 2.0),
                    udp: None,
                },
            ],
            cpu_local: CpuUtil {
                total: 1.5,
                user: 0.5,
                system: 1.0,
            },
            cpu_remote: CpuUtil {
                total: 2.5,
                user: 1.0,
                system: 1.5,
            },
            congestion_local: Some("cubic".into()),
            congestion_remote: Some("bbr".into()),
            server_output_text: Some("linerate server test 1: fine\n".into()),
            server_output_json: None,
        },
        modes: None,
        evidence: None,
    }
}

fn udp_pps() -> RunResult {
    let udp = |lost| {
        Some(UdpSample {
            packets: 1000,
            lost,
            out_of_order: 1,
            duplicates: 2,
            jitter_ms: 0.25,
        })
    };
    let iv = Interval {
        start: 0.0,
        end: 1.0,
        omitted: false,
        streams: vec![StreamInterval {
            id: 1,
            direction: Direction::Send,
            bytes: 18_000,
            bits_per_second: 144_000.0,
            tcp: None,
            udp: udp(0),
        }],
    };
    let mut rx = iv.clone();
    rx.streams[0].direction = Direction::Receive;
    rx.streams[0].udp = udp(3);
    let totals = UdpTotals {
        sent_packets: 1000,
        packets: 1000,
        lost: 3,
        lost_percent: 0.3,
        out_of_order: 1,
        duplicates: Some(2),
        jitter_ms: 0.25,
    };
    let mut s = start(Protocol::Udp, Mode::Pps, false);
    s.connected.truncate(1);
    RunResult {
        schema: SCHEMA.into(),
        start: s,
        intervals: vec![iv, rx],
        end: EndInfo {
            streams: vec![StreamSummary {
                id: 1,
                direction: Direction::Send,
                sender: SideTotals::new(18_000, 1.0),
                receiver: SideTotals::new(17_946, 1.0),
                udp: Some(totals),
            }],
            cpu_local: CpuUtil::default(),
            cpu_remote: CpuUtil::default(),
            congestion_local: None,
            congestion_remote: None,
            server_output_text: None,
            server_output_json: None,
        },
        modes: Some(ModeResult {
            pps: Some(PpsResult {
                frame: "64".into(),
                payload_bytes: 18.0,
                sent_packets: 1000,
                received_packets: 997,
                lost_packets: 3,
                lost_percent: 0.3,
                lost_in_gaps: 3,
                sent_pps: 1000.0,
                received_pps: 997.0,
                ..PpsResult::default()
            }),
            rr: Some(RrResult {
                protocol: "TCP".into(),
                request_bytes: 1,
                response_bytes: 1,
                transactions: 10,
                seconds: 1.0,
                transactions_per_second: 10.0,
                latency: LatencySummary {
                    count: 10,
                    p50_us: 12.0,
                    ..LatencySummary::default()
                },
                histogram: HistogramDump {
                    unit: "ns".into(),
                    significant_digits: 3,
                    buckets: vec![[12_000, 10]],
                },
                intervals: vec![RrInterval {
                    start: 0.0,
                    end: 1.0,
                    transactions: 10,
                    transactions_per_second: 10.0,
                }],
                ..RrResult::default()
            }),
            threads: vec![thread(1, Some(0))],
            server_threads: vec![thread(1, None)],
            zerocopy: vec![],
        }),
        evidence: None,
    }
}

fn golden(name: &str, got: &linerate_iperf3::Document) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden")
        .join(name);
    let text = format!("{}\n", serde_json::to_string_pretty(got).expect("json"));
    if std::env::var_os("LINERATE_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
        std::fs::write(&path, &text).expect("write golden");
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (LINERATE_BLESS=1 writes it)", path.display()));
    assert_eq!(text, want, "{name} differs from its golden file");
}

#[test]
fn tcp_bidir_json_matches_its_golden_file() {
    golden("tcp-bidir.json", &golden_value(&tcp()));
}

#[test]
fn udp_pps_json_matches_its_golden_file() {
    golden("udp-pps.json", &golden_value(&udp_pps()));
}

fn thread(id: i64, pinned: Option<usize>) -> ThreadReport {
    ThreadReport {
        id,
        direction: Some(Direction::Send),
        placement: linerate_traffic::result::PlacementReport {
            pinned,
            ran_on: vec![0],
        },
    }
}

fn golden_value(r: &RunResult) -> linerate_iperf3::Document {
    linerate_traffic::iperf3_json::document(r)
}

//! The iperf3 stand-in load: `iperf3 -s` in `recv` (killed after the run), `iperf3 -c` in `gen` (JSON output).
//! tcp → received bit/s; udp → received bit/s at the target rate; pps → received packets/s
//! of `frame`-byte Ethernet frames (UDP payload = frame − 42 bytes of headers). rr needs the
//! linerate traffic engine.

use std::process::{Command, Stdio};
use std::time::Duration;

use super::{Load, Measure, wait_bounded};
use crate::experiment::{Workload, WorkloadMode};
use crate::netns::Netns;
use crate::state::LabState;
use crate::{LabError, control};

/// Ethernet + IPv4 + UDP header bytes in front of a UDP payload.
const UDP_FRAME_OVERHEAD: u64 = 14 + 20 + 8;

/// Load from iperf3 (Debian package `iperf3`).
#[derive(Debug, Default)]
pub struct Iperf3;

fn missing() -> LabError {
    LabError::MissingTool {
        tool: "iperf3".into(),
        package: "iperf3".into(),
    }
}

impl Load for Iperf3 {
    fn name(&self) -> &'static str {
        "iperf3"
    }

    fn check(&self, w: &Workload) -> Result<(), LabError> {
        if w.mode == WorkloadMode::Rr {
            return Err(LabError::Io {
                what: "workload mode rr (request/response) needs the linerate traffic engine; iperf3 cannot do it".into(),
                source: std::io::Error::from(std::io::ErrorKind::Unsupported),
            });
        }
        let ok = Command::new("iperf3")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
        if ok { Ok(()) } else { Err(missing()) }
    }

    fn run(
        &self,
        lab: &LabState,
        w: &Workload,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Measure, LabError> {
        let recv = Netns::open(control::node_netns(lab, "recv")?)?;
        let gen_ns = Netns::open(control::node_netns(lab, "gen")?)?;
        let dst = lab
            .nodes
            .iter()
            .find(|n| n.name == "recv")
            .and_then(|n| n.interfaces.first())
            .and_then(|i| i.address.split('/').next())
            .ok_or_else(|| LabError::NoSuchNode {
                lab: lab.name.clone(),
                node: "recv".into(),
                nodes: String::new(),
            })?
            .to_owned();
        let secs = w.duration.as_secs_f64();
        let mut args: Vec<String> = vec![
            "-c".into(),
            dst,
            "-J".into(),
            "-t".into(),
            format!("{secs}"),
            "-P".into(),
            w.streams.to_string(),
        ];
        match w.mode {
            WorkloadMode::Tcp => {
                if let Some(l) = w.length {
                    args.extend(["-l".into(), l.bytes().to_string()]);
                }
            }
            WorkloadMode::Udp => {
                args.extend([
                    "-u".into(),
                    "-b".into(),
                    w.rate
                        .map_or("1G".into(), |r| format!("{}", r.as_f64() as u64)),
                ]);
                if let Some(l) = w.length {
                    args.extend(["-l".into(), l.bytes().to_string()]);
                }
            }
            WorkloadMode::Pps => {
                let frame = w.frame.map_or(64, |f| f.bytes());
                let payload = frame.saturating_sub(UDP_FRAME_OVERHEAD).max(16);
                args.extend([
                    "-u".into(),
                    "-b".into(),
                    "0".into(),
                    "-l".into(),
                    payload.to_string(),
                ]);
            }
            WorkloadMode::Rr => return Err(missing()),
        }
        // Children start in the namespace of the thread that spawns them.
        let mut server = recv.run(|| {
            Command::new("iperf3")
                .args(["-s"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        missing()
                    } else {
                        LabError::Io {
                            what: "start iperf3 -s".into(),
                            source: e,
                        }
                    }
                })
        })?;
        let limit = Duration::from_secs_f64(secs * 2.0 + 10.0);
        let mut last_err = String::new();
        let mut measure = None;
        let mut failures = 0;
        for _attempt in 0..40 {
            let mut client = gen_ns.run(|| {
                Command::new("iperf3")
                    .args(&args)
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .spawn()
                    .map_err(|e| LabError::Io {
                        what: "start iperf3 -c".into(),
                        source: e,
                    })
            })?;
            let mut stdout = client.stdout.take();
            let reader = std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(s) = stdout.as_mut() {
                    let _ = std::io::Read::read_to_end(s, &mut buf);
                }
                buf
            });
            let status = wait_bounded(&mut client, limit, interrupted);
            let out = reader.join().unwrap_or_default();
            let status = match status {
                Ok(s) => s,
                Err(e) => {
                    let _ = server.kill();
                    let _ = server.wait();
                    return Err(e);
                }
            };
            let v: serde_json::Value = serde_json::from_slice(&out).unwrap_or_default();
            if status.success()
                && let Some(mut m) = parse(&v, w.mode)
            {
                m.document = Some(v);
                measure = Some(m);
                break;
            }
            last_err = v["error"]
                .as_str()
                .unwrap_or("iperf3 ended without results")
                .to_owned();
            failures += 1;
            if failures > 3 && !last_err.contains("connect") {
                break;
            }
            // The server may not listen yet: try again shortly.
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = server.kill();
        let _ = server.wait();
        measure.ok_or_else(|| LabError::Io {
            what: format!("iperf3: {last_err}"),
            source: std::io::Error::other(last_err.clone()),
        })
    }
}

fn parse(v: &serde_json::Value, mode: WorkloadMode) -> Option<Measure> {
    let end = &v["end"];
    match mode {
        WorkloadMode::Tcp => {
            let s = &end["sum_received"];
            Some(Measure {
                value: s["bits_per_second"].as_f64()?,
                unit: "bit/s",
                seconds: s["seconds"].as_f64()?,
                document: None,
            })
        }
        WorkloadMode::Udp | WorkloadMode::Pps => {
            let s = &end["sum"];
            let seconds = s["seconds"].as_f64()?;
            let packets = s["packets"].as_f64()?;
            let lost = s["lost_packets"].as_f64().unwrap_or(0.0);
            if seconds <= 0.0 {
                return None;
            }
            if mode == WorkloadMode::Pps {
                Some(Measure {
                    value: (packets - lost) / seconds,
                    unit: "packet/s",
                    seconds,
                    document: None,
                })
            } else {
                let bps = s["bits_per_second"].as_f64()?;
                let delivered = if packets > 0.0 {
                    (packets - lost) / packets
                } else {
                    0.0
                };
                Some(Measure {
                    value: bps * delivered,
                    unit: "bit/s",
                    seconds,
                    document: None,
                })
            }
        }
        WorkloadMode::Rr => None,
    }
}

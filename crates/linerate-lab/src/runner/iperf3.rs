//! The iperf3 stand-in load: `iperf3 -s` in `recv` (killed after the run), `iperf3 -c` in `gen` (JSON output).
//! tcp → received bit/s; udp → received bit/s at the target rate; pps → received packets/s
//! of `frame`-byte Ethernet frames (UDP payload = frame − 42 bytes of headers). rr needs the
//! linerate traffic engine.

use std::process::{Command, Stdio};
use std::time::Duration;

use linerate_iperf3::{Document, EndReport};

use super::{Load, Measure, wait_bounded};
use crate::bed::{NetnsNode, Node};
use crate::experiment::{Workload, WorkloadMode};
use crate::netns::Netns;
use crate::state::LabState;
use crate::{LabError, control};

/// Ethernet + IPv4 + UDP header bytes in front of a UDP payload.
pub(crate) const UDP_FRAME_OVERHEAD: u64 = 14 + 20 + 8;

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
        if w.mode == WorkloadMode::Rfc2544 {
            return Err(LabError::Io {
                what: "workload mode rfc2544 needs linerate's frame generator (--load linerate); iperf3 cannot do it".into(),
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
        let dst = receiver_address(lab)?;
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
            WorkloadMode::Rr | WorkloadMode::Rfc2544 => return Err(missing()),
        }
        let (recv, gen_node) = lab_nodes(lab)?;
        run_pair(
            (&recv, ("iperf3", &["-s".to_owned()])),
            (&gen_node, ("iperf3", &args)),
            secs,
            interrupted,
            |v| parse(v, w.mode),
        )
    }
}

/// Where the load is sent: `recv`'s tunnel address when the lab has a tunnel, else the
/// address of its first interface.
pub(crate) fn receiver_address(lab: &LabState) -> Result<String, LabError> {
    if let Some(t) = &lab.tunnel
        && let Some(addr) = t.recv_address.split('/').next()
    {
        return Ok(addr.to_owned());
    }
    lab.nodes
        .iter()
        .find(|n| n.name == "recv")
        .and_then(|n| n.interfaces.first())
        .and_then(|i| i.address.split('/').next())
        .map(str::to_owned)
        .ok_or_else(|| LabError::NoSuchNode {
            lab: lab.name.clone(),
            node: "recv".into(),
            nodes: String::new(),
        })
}

/// The `recv` and `gen` nodes of `lab`.
pub(crate) fn lab_nodes(lab: &LabState) -> Result<(NetnsNode, NetnsNode), LabError> {
    let node = |name: &str| -> Result<NetnsNode, LabError> {
        Ok(NetnsNode {
            name: name.to_owned(),
            ns: Netns::open(control::node_netns(lab, name)?)?,
        })
    };
    Ok((node("recv")?, node("gen")?))
}

/// Runs a server (`program args`) on `recv` and a client on `gen` that prints one JSON
/// document, retrying while the server is not listening yet; the server is killed afterwards.
/// `parse` turns the client's document into a measure (`None`: the run did not count).
pub(crate) fn run_pair(
    (recv, server): (&dyn Node, (&str, &[String])),
    (gen_node, client): (&dyn Node, (&str, &[String])),
    secs: f64,
    interrupted: &dyn Fn() -> bool,
    parse: impl Fn(&Document) -> Option<Measure>,
) -> Result<Measure, LabError> {
    let tool = client.0.to_owned();
    let mut server = recv.spawn(server.0, server.1, Stdio::null())?;
    let limit = Duration::from_secs_f64(secs * 2.0 + 10.0);
    let mut last_err = String::new();
    let mut measure = None;
    let mut failures = 0;
    for _attempt in 0..40 {
        let mut client = match gen_node.spawn(client.0, client.1, Stdio::piped()) {
            Ok(c) => c,
            Err(e) => {
                let _ = server.kill();
                let _ = server.wait();
                return Err(e);
            }
        };
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
        let doc = Document::from_slice(&out);
        if status.success()
            && let Ok(d) = &doc
            && let Some(mut m) = parse(d)
        {
            m.document = doc.ok().map(|d| super::RunDocument::Iperf3(Box::new(d)));
            measure = Some(m);
            break;
        }
        last_err = match doc {
            Ok(Document { error: Some(e), .. }) => e,
            Ok(_) => "the client ended without results".to_owned(),
            Err(_) if out.iter().all(u8::is_ascii_whitespace) => {
                "the client ended without results".to_owned()
            }
            Err(e) => format!("the client's output is not a usable iperf3 document: {e}"),
        };
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
        what: format!("{tool}: {last_err}"),
        source: std::io::Error::other(last_err.clone()),
    })
}

fn parse(d: &Document, mode: WorkloadMode) -> Option<Measure> {
    match mode {
        WorkloadMode::Tcp => received_bit_rate(d),
        WorkloadMode::Udp | WorkloadMode::Pps => parse_udp(d, mode == WorkloadMode::Pps),
        WorkloadMode::Rr | WorkloadMode::Rfc2544 => None,
    }
}

/// TCP: the receivers' bit rate (`end.sum_received`).
pub(crate) fn received_bit_rate(d: &Document) -> Option<Measure> {
    let s: &EndReport = d.end.sum_received.as_ref()?;
    Some(Measure {
        value: s.bits_per_second,
        unit: "bit/s",
        seconds: s.seconds?,
        document: None,
    })
}

/// iperf3-schema UDP results (`end.sum`): delivered packets/s when `packet_rate`, else the
/// delivered bit rate (sent rate × share delivered).
pub(crate) fn parse_udp(d: &Document, packet_rate: bool) -> Option<Measure> {
    let s = d.end.sum.as_ref()?;
    let seconds = s.seconds?;
    let packets = s.packets? as f64;
    let lost = s.lost_packets.unwrap_or(0) as f64;
    if seconds <= 0.0 {
        return None;
    }
    if packet_rate {
        Some(Measure {
            value: (packets - lost) / seconds,
            unit: "packet/s",
            seconds,
            document: None,
        })
    } else {
        let bps = s.bits_per_second;
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

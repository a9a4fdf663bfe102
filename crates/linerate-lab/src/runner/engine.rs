//! The linerate traffic engine as the load: `linerate server` in `recv`, `linerate client
//! --json` in `gen` (the same binary, found by the caller). tcp → received bit/s; udp →
//! delivered bit/s at the target rate; pps → received packets/s of `frame`-byte Ethernet frames
//! (sendmmsg batches, several streams with `streams`); rr → TCP transactions/s.

use std::path::PathBuf;

use linerate_iperf3::{Document, EndReport};

use super::iperf3::{UDP_FRAME_OVERHEAD, parse_udp, received_bit_rate, receiver_address, run_pair};
use super::{Load, Measure};
use crate::LabError;
use crate::experiment::{PpsGenerator, Workload, WorkloadMode};
use crate::state::{LabState, StateDir};

/// Load from linerate's own traffic engine.
#[derive(Debug, Clone)]
pub struct Engine {
    /// The `linerate` binary to run in the nodes.
    pub binary: PathBuf,
    /// Where the labs' state is (the frame generator's path checks it for an interrupted
    /// ceiling measurement to repair).
    pub state_dir: StateDir,
}

impl Load for Engine {
    fn name(&self) -> &'static str {
        "linerate"
    }

    fn check(&self, _w: &Workload) -> Result<(), LabError> {
        if self.binary.is_file() {
            Ok(())
        } else {
            Err(LabError::MissingTool {
                tool: self.binary.display().to_string(),
                package: "linerate (cargo install --path crates/linerate)".into(),
            })
        }
    }

    fn run(
        &self,
        lab: &LabState,
        w: &Workload,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Measure, LabError> {
        match (w.mode, w.generator) {
            (WorkloadMode::Pps, Some(PpsGenerator::Frames)) => {
                return super::frames::pps(lab, w, &self.binary, &self.state_dir, interrupted);
            }
            (WorkloadMode::Rfc2544, _) => {
                return super::frames::rfc2544(lab, w, &self.binary, &self.state_dir, interrupted);
            }
            _ => {}
        }
        let (recv, gen_node) = super::iperf3::lab_nodes(lab)?;
        let binary = self.binary.display().to_string();
        run_client_server(
            (&recv, (&binary, &["server".to_owned()])),
            (&gen_node, &binary),
            receiver_address(lab)?,
            w,
            lab.l0_rate(),
            interrupted,
        )
    }
}

/// Runs `workload` (a tcp, udp, socket-pps or rr one) with the traffic engine: the server
/// (`linerate server`, as the bed starts it) on `recv`, `linerate client --json` on `gen`
/// towards `dst`, told the path's rate when it is known. The lab and real hosts
/// both run their engine loads through here.
pub(crate) fn run_client_server(
    (recv, server): (&dyn crate::bed::Node, (&str, &[String])),
    (gen_node, client_program): (&dyn crate::bed::Node, &str),
    dst: String,
    w: &Workload,
    path_rate: Option<linerate_units::BitRate>,
    interrupted: &dyn Fn() -> bool,
) -> Result<Measure, LabError> {
    let secs = w.duration.as_secs_f64();
    let mut args: Vec<String> = vec![
        "client".into(),
        dst,
        "--json".into(),
        // The runner stores each run itself, as a repetition of its variant.
        "--no-store".into(),
        "-t".into(),
        format!("{secs}s"),
        "-P".into(),
        w.streams.to_string(),
    ];
    let length = w.length.map(|l| l.bytes().to_string());
    match w.mode {
        WorkloadMode::Tcp => {
            // The path's ceiling the client's limit is judged against (a lab's emulated link).
            if let Some(rate) = path_rate {
                args.extend(["--path-rate".into(), format!("{}bit/s", rate.bps())]);
            }
        }
        WorkloadMode::Udp => {
            let rate = w.rate.map_or(1_000_000_000, |r| r.bps());
            args.extend(["-u".into(), "-b".into(), rate.to_string()]);
        }
        WorkloadMode::Pps => {
            let frame = w.frame.map_or(64, |f| f.bytes());
            let payload = frame.saturating_sub(UDP_FRAME_OVERHEAD).max(18);
            // --no-gso: a router forwards (and a firewall judges) each datagram, not a
            // GSO super-packet, so the packet rate is the one the guides mean.
            args.extend(["--mode".into(), "pps".into(), "--no-gso".into()]);
            args.extend(["-l".into(), payload.to_string()]);
        }
        WorkloadMode::Rr => args.extend(["--mode".into(), "rr".into()]),
        WorkloadMode::Rfc2544 => {}
    }
    if let (Some(l), WorkloadMode::Tcp | WorkloadMode::Udp) = (length, w.mode) {
        args.extend(["-l".into(), l]);
    }
    run_pair(
        (recv, server),
        (gen_node, (client_program, &args)),
        secs,
        interrupted,
        |v| parse(v, w.mode),
    )
}

fn parse(d: &Document, mode: WorkloadMode) -> Option<Measure> {
    let extension = d.linerate.as_ref();
    let seconds = |s: &Option<EndReport>| s.as_ref().and_then(|s| s.seconds);
    match mode {
        WorkloadMode::Tcp => received_bit_rate(d),
        WorkloadMode::Udp => parse_udp(d, false),
        WorkloadMode::Pps => Some(Measure {
            value: extension?.received_pps?,
            unit: "packet/s",
            seconds: seconds(&d.end.sum)
                .or_else(|| seconds(&d.end.sum_received))
                .unwrap_or(0.0),
            document: None,
        }),
        WorkloadMode::Rfc2544 => None,
        WorkloadMode::Rr => Some(Measure {
            value: extension?.transactions_per_second?,
            unit: "transaction/s",
            seconds: seconds(&d.end.sum_received)
                .or_else(|| seconds(&d.end.sum_sent))
                .unwrap_or(0.0),
            document: None,
        }),
    }
}

//! The stored side of `lab rfc2544`: an experiment named `rfc2544-LAB` with one variant per
//! frame size and one run each. A run's mode is `rfc2544`, its headline rate NDR at L2, and its
//! document the frame size's `linerate.rfc2544/1` result (with the lab and settings), which
//! `linerate report` reads to chart NDR and PDR against frame size. No schema change: the
//! store's existing run and experiment tables hold it.

use anyhow::Context as _;
use linerate_store::{
    Direction, ExperimentPlan, ExperimentRef, ExperimentStatus, RunContext, RunRecord, RunSource,
    RunSummary,
};

use super::Report;
use crate::cmd::history::db::{StoreRunArgs, command_line};

/// Stores `report` (unless `--no-store`); returns the experiment's id.
pub fn record(args: &StoreRunArgs, report: &Report) -> anyhow::Result<Option<String>> {
    if args.no_store || report.results.is_empty() {
        return Ok(None);
    }
    let mut store = args.db.open()?;
    let name = format!("rfc2544-{}", report.lab);
    let plan = ExperimentPlan {
        variants: report.results.iter().map(|r| r.frame.clone()).collect(),
        repetitions: 1,
    };
    let exp = store
        .begin_experiment(&name, &plan)
        .with_context(|| format!("storing experiment {name} in {}", store.path().display()))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    for r in &report.results {
        let mut doc = serde_json::json!({
            "schema": super::SCHEMA,
            "lab": report.lab,
            "link_bps": report.link_bps,
            "settings": report.settings,
        });
        doc["result"] = serde_json::to_value(r)?;
        let mut context = RunContext::new(RunSource::Lab);
        context.command_line = Some(command_line(std::env::args()));
        context.tool = Some(format!("linerate {}", env!("CARGO_PKG_VERSION")));
        let run = RunRecord {
            started_at: now,
            source: RunSource::Lab,
            source_path: None,
            command_line: context.command_line.clone(),
            tool: context.tool.clone().unwrap_or_default(),
            mode: "rfc2544".into(),
            direction: Direction::Send,
            peer: None,
            streams: u32::from(report.settings.threads),
            duration_s: r.search_seconds,
            params: serde_json::to_value(&report.settings)?,
            summary: RunSummary {
                bytes_sent: 0,
                bytes_received: 0,
                sent_bps: r.ndr.l2_bps,
                received_bps: r.ndr.l2_bps,
                reverse_received_bps: None,
                retransmits: None,
                jitter_ms: None,
                lost_packets: None,
                packets: None,
                lost_percent: None,
                cpu_local_percent: None,
                cpu_remote_percent: None,
                mean_rtt_us: None,
                transactions_per_second: None,
            },
            intervals: Vec::new(),
            stream_results: Vec::new(),
            latency: None,
            host: None,
            experiment: Some(ExperimentRef {
                experiment: exp.id.clone(),
                variant: r.frame.clone(),
                repetition: 1,
                sweep_value: Some(r.frame_bytes),
                sweep_label: Some("frame (bytes)".into()),
            }),
            partial: false,
            document: doc,
        };
        store.insert_run(&run).with_context(|| {
            format!(
                "storing frame {}'s result in {}",
                r.frame,
                store.path().display()
            )
        })?;
    }
    store
        .finish_experiment(&exp.id, ExperimentStatus::Complete)
        .with_context(|| format!("marking experiment {} complete", exp.id))?;
    Ok(Some(exp.id))
}

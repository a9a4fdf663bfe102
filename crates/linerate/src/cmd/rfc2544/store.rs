//! The stored side of RFC 2544 results: one run per frame size, of mode `rfc2544`, its
//! document the frame size's `linerate.rfc2544/1` result (`linerate_store::rfc2544`), which
//! `linerate report` reads back to chart NDR and PDR against frame size. `lab rfc2544` stores
//! its frame sizes as an experiment named `rfc2544-LAB`, `rfc2544` as `rfc2544-TX-RX` or its
//! `--name` (one variant per size); `lab run` stores its `rfc2544` runs through [`store_run`]
//! as repetitions of their variants, the same shape.

use anyhow::Context as _;
use linerate_lab::rfc2544::procedure::Throughput;
use linerate_store::rfc2544::Rfc2544Run;
use linerate_store::{
    ExperimentPlan, ExperimentRef, ExperimentStatus, RunContext, RunId, RunSource,
};

use crate::cmd::history::db::{StoreRunArgs, command_line};

/// Stores `t` (unless `--no-store`) as the experiment `name`; returns its id.
pub fn record(args: &StoreRunArgs, t: &Throughput, name: &str) -> anyhow::Result<Option<String>> {
    if args.no_store || t.results.is_empty() {
        return Ok(None);
    }
    let mut store = args.db.open()?;
    let plan = ExperimentPlan {
        variants: t.results.iter().map(|r| r.frame.clone()).collect(),
        repetitions: 1,
    };
    let exp = store
        .begin_experiment(name, &plan)
        .with_context(|| format!("storing experiment {name} in {}", store.path().display()))?;
    for doc in t.documents() {
        let frame = doc.result.frame.clone();
        let experiment = ExperimentRef {
            experiment: exp.id.clone(),
            variant: frame.clone(),
            repetition: 1,
            sweep_value: Some(doc.result.frame_bytes),
            sweep_label: Some("frame (bytes)".into()),
        };
        let run = doc.record(context(experiment), now())?;
        store.insert_run(&run).with_context(|| {
            format!(
                "storing frame {frame}'s result in {}",
                store.path().display()
            )
        })?;
    }
    store
        .finish_experiment(&exp.id, ExperimentStatus::Complete)
        .with_context(|| format!("marking experiment {} complete", exp.id))?;
    Ok(Some(exp.id))
}

/// Stores one RFC 2544 result as a run of `experiment` (unless `--no-store`): what `lab run`
/// does with an `rfc2544` workload's run, with the host's snapshot when one was taken.
pub fn store_run(
    args: &StoreRunArgs,
    doc: &Rfc2544Run,
    host: Option<serde_json::Value>,
    experiment: ExperimentRef,
) -> anyhow::Result<Option<RunId>> {
    if args.no_store {
        return Ok(None);
    }
    let mut context = context(experiment);
    context.host = host.map(linerate_store::HostRef::of_snapshot);
    let run = doc.record(context, now())?;
    let mut store = args.db.open()?;
    let id = store
        .insert_run(&run)
        .with_context(|| format!("storing the run in {}", store.path().display()))?;
    Ok(Some(id))
}

/// A run's context: this command line and linerate's version (the source is `lab` for every
/// RFC 2544 test bed, the lab's namespaces or real ports).
fn context(experiment: ExperimentRef) -> RunContext {
    let mut context = RunContext::new(RunSource::Lab);
    context.command_line = Some(command_line(std::env::args()));
    context.tool = Some(format!("linerate {}", env!("CARGO_PKG_VERSION")));
    context.experiment = Some(experiment);
    context
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

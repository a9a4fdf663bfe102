//! `lab run` on real hosts (an experiment file with `[hosts]`): the hosts checked before
//! anything is stored or changed (and what an earlier, killed run left rolled back, said so),
//! the store begun with their facts. The bed itself is `linerate_lab::hosts`.

use linerate_lab::bed::TestBed as _;
use linerate_lab::experiment::{Experiment, HostsSpec};
use linerate_lab::hosts::HostsBed;
use linerate_lab::record::Recorder;

use super::{LoadTool, RunArgs};
use crate::cmd::history::db::StoreRunArgs;

/// This linerate's `--version` line: every host must print the same.
fn version_line() -> String {
    format!("linerate {}", env!("CARGO_PKG_VERSION"))
}

/// Checks every host of `spec` for `exp`; tells what an earlier run left and this one undid.
pub(super) fn prepare(spec: &HostsSpec, exp: &Experiment, a: &RunArgs) -> anyhow::Result<HostsBed> {
    if a.load == LoadTool::Iperf3 {
        anyhow::bail!("--load iperf3: on real hosts the load is linerate's own traffic engine");
    }
    if a.profile {
        anyhow::bail!(
            "--profile samples this machine's CPUs; on real hosts it would profile neither"
        );
    }
    let mut bed = HostsBed::new(spec, &version_line());
    bed.check(exp)?;
    for line in &bed.recovered {
        eprintln!("linerate: an earlier run did not finish; rolled back on {line}");
    }
    Ok(bed)
}

/// Begins `exp` in the store with the hosts' facts (the `gen` host's snapshot as the runs'
/// host, every host's facts with each run).
pub(super) fn begin(
    store: &StoreRunArgs,
    exp: &Experiment,
    bed: &HostsBed,
) -> anyhow::Result<Recorder> {
    let at = crate::cmd::history::db::store_at(store)?;
    let snapshot = bed
        .facts
        .first()
        .and_then(|f| f.snapshot.as_ref())
        .and_then(|s| serde_json::to_value(s).ok());
    let mut recorder = Recorder::begin(at, exp, snapshot)?;
    recorder.on_hosts(bed.name(), &bed.facts);
    Ok(recorder)
}

/// The hosts' facts under the results.
pub(super) fn facts_text(bed: &HostsBed) -> String {
    let mut out = String::from("\nhosts:\n");
    for f in &bed.facts {
        out.push_str(&format!("  {}\n", f.line()));
    }
    out
}

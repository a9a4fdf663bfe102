//! The stored side of `lab run`, as the command line asks for it: where the database is (or
//! `--no-store`), the host's snapshot and each run's profile handed to the lab's recorder
//! (`linerate_lab::record`), and what to tell the user about it: the stored name, the next
//! commands, and what an interruption kept and how to remove it.

use anyhow::Context as _;
use linerate_lab::experiment::Experiment as LabExperiment;
use linerate_lab::record::Recorder;
use linerate_store::RunProfile;

use crate::cmd::history::db::{StoreRunArgs, host_snapshot, store_at};

/// Begins `exp` in the store `args` name (unless `--no-store`).
pub fn begin(args: &StoreRunArgs, exp: &LabExperiment) -> anyhow::Result<Recorder> {
    let at = store_at(args)?;
    let host = at.as_ref().and_then(|_| host_snapshot());
    Ok(Recorder::begin(at, exp, host)?)
}

/// A run's profile as the store keeps it.
pub fn profile(p: &linerate_profile::Captured, frequency_hz: u64) -> anyhow::Result<RunProfile> {
    linerate_lab::profiled::stored(p, frequency_hz).context("the run's profile")
}

/// The closing lines of a finished experiment: where it is stored and what to run next.
/// The name stands for the newest instance; when another run of the same name started
/// since, the id is named instead.
pub fn closing(r: &Recorder) -> String {
    let (Some(exp), Some(at)) = (r.experiment(), r.store()) else {
        return "not stored (--no-store)\n".to_owned();
    };
    let newest = linerate_store::Store::open(&at.path)
        .ok()
        .and_then(|s| s.resolve_experiment(&exp.name).ok())
        .is_some_and(|e| e.id == exp.id);
    let name = if newest { &exp.name } else { &exp.id };
    format!(
        "stored {} run(s) as experiment {} ({})\n\
         next: linerate compare --experiment {name}\n      \
         linerate report --experiment {name} -o {}.html\n      \
         linerate experiments {}\n",
        r.stored, exp.id, exp.status, exp.id, exp.name
    )
}

/// What an interruption after `done` of `planned` runs kept, and how to remove it.
pub fn interrupted(r: &Recorder, signal: &str, done: usize, planned: usize) -> String {
    let head = format!(
        "interrupted by {signal} after {done} of {planned} runs (the run under way does \
         not count); the lab was removed"
    );
    match r.experiment() {
        Some(exp) if r.stored > 0 => format!(
            "{head}.\nkept: {} run(s) as experiment {}, marked interrupted: `linerate compare` \
             refuses it unless --allow-incomplete.\nremove them: linerate experiments \
             --remove {}\n",
            r.stored, exp.id, exp.id
        ),
        Some(exp) => format!(
            "{head}; no run was finished, so nothing was kept (experiment {} is empty, \
             marked interrupted: linerate experiments --remove {} drops it).\n",
            exp.id, exp.id
        ),
        None => format!("{head}; nothing was stored (--no-store).\n"),
    }
}

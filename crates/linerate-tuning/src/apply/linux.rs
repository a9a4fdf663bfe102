//! The Linux entry points: settings through `/proc/sys` ([`ProcSys`]) on the host or inside a
//! named network namespace, with the shared journal, read-back and restore.

use std::path::Path;

use super::{
    Applied, ApplyError, ApplyOptions, Journal, NetnsId, ProcSys, RolledBack, Where, execute,
    journal, netns, plan, restore_files, rollback,
};

/// Applies `wanted` key=value pairs through `/proc/sys` in `place`, with journal, read-back and
/// full restore on failure. This is the entry point the lab uses (`lab set NODE KEY=VALUE`).
pub fn apply_in(
    place: &Where,
    wanted: &[(String, String)],
    opts: &ApplyOptions,
) -> Result<Applied, ApplyError> {
    let work = |netns: Option<NetnsId>| -> Result<Applied, ApplyError> {
        let mut backend = ProcSys::new();
        let plan = plan(&mut backend, wanted, netns.is_some(), opts.explicit)?;
        if opts.dry_run || plan.changes.is_empty() {
            return Ok(Applied {
                plan,
                journal: None,
                netns,
                boot_file: None,
            });
        }
        let path = journal::new_path(&opts.journal_dir, journal::now_unix())?;
        execute(&mut backend, &plan, netns.clone(), Some(&path))?;
        Ok(Applied {
            plan,
            journal: Some(path),
            netns,
            boot_file: None,
        })
    };
    match place {
        Where::Host => work(None),
        Where::Netns(name) => netns::run_in(name, None, |id| work(Some(id.clone())))?,
    }
}

/// Rolls back the journal at `path` into the namespace it recorded. `given` (from `--netns`)
/// must match the recorded namespace when present.
pub fn rollback_file(path: &Path, given: Option<&str>) -> Result<RolledBack, ApplyError> {
    let mut journal = Journal::load(path)?;
    let recorded = journal.netns.clone();
    match (&recorded, given) {
        (Some(r), Some(g)) if r.name != g => {
            return Err(ApplyError::WrongNamespace {
                recorded: format!("namespace `{}`", r.name),
                given: format!("namespace `{g}`"),
            });
        }
        (None, Some(g)) => {
            return Err(ApplyError::WrongNamespace {
                recorded: "the host namespace".into(),
                given: format!("namespace `{g}`"),
            });
        }
        _ => {}
    }
    let restored = match &recorded {
        None => rollback(&mut ProcSys::new(), &mut journal)?,
        Some(id) => netns::run_in(&id.name, Some(id), |_| {
            rollback(&mut ProcSys::new(), &mut journal)
        })??,
    };
    // Linux applies write no whole files; a journal that lists some is restored all the same.
    let files = restore_files(&journal)?;
    journal.save(path)?;
    Ok(RolledBack {
        journal: path.to_path_buf(),
        netns: recorded,
        restored,
        files,
    })
}

//! The database options every store command shares (and `linerate client` uses to store runs).

use std::path::PathBuf;

use anyhow::{Context, bail};
use linerate_store::Store;

/// Where the results database is.
#[derive(Debug, Clone, clap::Args)]
pub struct DbArgs {
    /// The results database [default: $XDG_DATA_HOME/linerate/linerate.db, else
    /// ~/.local/share/linerate/linerate.db]
    #[arg(long, value_name = "PATH", env = "LINERATE_DB")]
    pub db: Option<PathBuf>,
}

impl DbArgs {
    /// The database file these options name.
    pub fn path(&self) -> anyhow::Result<PathBuf> {
        // An empty LINERATE_DB means "not set" (SQLite would open a throw-away database).
        match self.db.as_ref().filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => Ok(p.clone()),
            None => Ok(Store::default_path()?),
        }
    }

    /// Opens (creating and migrating if needed) the database: for commands that store runs.
    pub fn open(&self) -> anyhow::Result<Store> {
        let path = self.path()?;
        Store::open(&path).context("cannot open the results database")
    }

    /// Opens the database for a command that only reads runs (`show`, `compare`, `report`):
    /// a missing file is an error and is not created, so a mistyped `--db` does not leave an
    /// empty database (and its directories) behind.
    pub fn open_existing(&self) -> anyhow::Result<Store> {
        match self.open_if_exists()? {
            Some(store) => Ok(store),
            None => bail!(
                "no results database at {}: runs are stored there by `linerate client` and `linerate import` (choose another with --db or LINERATE_DB)",
                self.path()?.display()
            ),
        }
    }

    /// Opens the database if the file exists; `None` (nothing created) when it does not.
    pub fn open_if_exists(&self) -> anyhow::Result<Option<Store>> {
        let path = self.path()?;
        if !path.exists() {
            return Ok(None);
        }
        Store::open(&path)
            .context("cannot open the results database")
            .map(Some)
    }
}

/// The store options of a measuring command: where to store, or not at all.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreRunArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not store this run in the results database
    #[arg(long)]
    pub no_store: bool,
}

/// Stores a run that linerate just measured (`linerate client`, `linerate lab`), unless
/// `--no-store`, and returns its id (print it: "stored as run N").
///
/// `document` is the run's iperf3-schema document (what `--json` prints), typed: it is stored
/// as it is, without a JSON text in between; `host_snapshot` the `linerate-probe` snapshot as
/// JSON, if one was taken. The store does the work (`linerate_store::store_measured_run`);
/// this adds the command line, linerate's version and where the database is.
pub fn store_measured_run(
    args: &StoreRunArgs,
    document: &linerate_iperf3::Document,
    host_snapshot: Option<serde_json::Value>,
    experiment: Option<linerate_store::ExperimentRef>,
) -> anyhow::Result<Option<linerate_store::RunId>> {
    if args.no_store {
        return Ok(None);
    }
    let run = linerate_store::MeasuredRun {
        document,
        command_line: command_line(std::env::args()),
        tool: format!("linerate {}", env!("CARGO_PKG_VERSION")),
        host_snapshot,
        experiment,
    };
    let id = linerate_store::store_measured_run(&args.db.path()?, run)?;
    Ok(Some(id))
}

// `lab rfc2544`'s store still names it here; `linerate_store::command_line` is its home.
pub use linerate_store::command_line;

#[cfg(target_os = "linux")]
/// Where `args` stores runs: `None` with `--no-store`.
pub fn store_at(args: &StoreRunArgs) -> anyhow::Result<Option<linerate_lab::record::StoreAt>> {
    if args.no_store {
        return Ok(None);
    }
    Ok(Some(linerate_lab::record::StoreAt {
        path: args.db.path()?,
        command_line: command_line(std::env::args()),
        tool: format!("linerate {}", env!("CARGO_PKG_VERSION")),
    }))
}

/// This host's snapshot, as every stored run carries it.
#[cfg(target_os = "linux")]
pub fn host_snapshot() -> Option<serde_json::Value> {
    serde_json::to_value(linerate_probe::HostSnapshot::capture(
        &linerate_probe::ProbeRoots::live(),
    ))
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measured_run_is_stored_with_its_command_line_unless_no_store() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("runs.db");
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/store/tcp.json");
        let doc = linerate_iperf3::Document::from_slice(&std::fs::read(path)?)?;
        let args = StoreRunArgs {
            db: DbArgs {
                db: Some(db.clone()),
            },
            no_store: false,
        };
        let Some(id) = store_measured_run(&args, &doc, None, None)? else {
            anyhow::bail!("not stored")
        };
        let run = Store::open(&db)?.run(id)?;
        assert_eq!(run.source, linerate_store::RunSource::Client);
        assert_eq!(run.tool, format!("linerate {}", env!("CARGO_PKG_VERSION")));
        assert!(run.command_line.is_some());
        let skipped = StoreRunArgs {
            no_store: true,
            ..args
        };
        assert_eq!(store_measured_run(&skipped, &doc, None, None)?, None);
        Ok(())
    }
}

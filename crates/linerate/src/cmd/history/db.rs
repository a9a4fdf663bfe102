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
#[allow(dead_code)] // used by `linerate client` once the traffic engine lands
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
/// JSON, if one was taken.
pub fn store_measured_run(
    args: &StoreRunArgs,
    document: &linerate_iperf3::Document,
    host_snapshot: Option<serde_json::Value>,
    experiment: Option<linerate_store::ExperimentRef>,
) -> anyhow::Result<Option<linerate_store::RunId>> {
    use linerate_store::{RunContext, RunRecord, RunSource};
    if args.no_store {
        return Ok(None);
    }
    let mut context = RunContext::new(if experiment.is_some() {
        RunSource::Lab
    } else {
        RunSource::Client
    });
    context.command_line = Some(command_line(std::env::args()));
    context.tool = Some(format!("linerate {}", env!("CARGO_PKG_VERSION")));
    context.host = host_snapshot.map(host_ref);
    context.experiment = experiment;
    let run = RunRecord::from_iperf3(document, context)
        .context("the run's document does not have what the store needs")?;
    let mut store = args.db.open()?;
    let id = store
        .insert_run(&run)
        .with_context(|| format!("storing the run in {}", store.path().display()))?;
    Ok(Some(id))
}

/// A host snapshot as the store keeps it: hashed without its volatile parts (capture time,
/// softnet counters), so every run on an unchanged host shares one stored snapshot.
pub fn host_ref(snapshot: serde_json::Value) -> linerate_store::HostRef {
    let mut stable = snapshot.clone();
    if let Some(o) = stable.as_object_mut() {
        o.remove("captured_at");
        o.remove("softnet");
    }
    linerate_store::HostRef {
        hash: linerate_store::snapshot_hash(&stable),
        snapshot: Some(snapshot),
    }
}

/// The command line as a shell would take it back: arguments with spaces or quotes quoted.
pub fn command_line(args: impl IntoIterator<Item = String>) -> String {
    args.into_iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c))
            {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_quote_what_needs_it() {
        let args = [
            "linerate",
            "client",
            "-c",
            "198.18.0.2",
            "--title",
            "it's a test",
            "",
        ];
        assert_eq!(
            command_line(args.map(String::from)),
            "linerate client -c 198.18.0.2 --title 'it'\\''s a test' ''"
        );
    }

    #[test]
    fn a_measured_run_is_stored_with_its_context() -> anyhow::Result<()> {
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
        let snapshot = serde_json::json!({"captured_at": 1, "host": {"kernel": "6.1"}});
        let id = store_measured_run(&args, &doc, Some(snapshot.clone()), None)?;
        let Some(id) = id else {
            anyhow::bail!("not stored")
        };
        let run = Store::open(&db)?.run(id)?;
        assert_eq!(run.source, linerate_store::RunSource::Client);
        assert!(run.tool.starts_with("linerate "));
        assert!(run.command_line.is_some());
        // The capture time does not change the host's identity.
        let mut later = snapshot;
        later["captured_at"] = 2.into();
        assert_eq!(run.host.map(|h| h.hash), Some(host_ref(later).hash));
        let skipped = StoreRunArgs {
            no_store: true,
            ..args
        };
        assert_eq!(store_measured_run(&skipped, &doc, None, None)?, None);
        Ok(())
    }
}

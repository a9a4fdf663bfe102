//! Storing a run linerate just measured (`linerate client`, `lab run`, the agent): the context
//! a measuring command adds to its document (its command line, the tool and version, the host
//! snapshot, the experiment), then one insert. Commands call [`store_measured_run`] with plain
//! values; where the database is and whether to store at all are theirs to decide.

use std::path::{Path, PathBuf};

use crate::record::{ExperimentRef, HostRef, RunContext, RunId, RunRecord, RunSource};
use crate::{Iperf3Error, Store, StoreError, snapshot_hash};

/// A run linerate just measured, and what its document does not carry.
#[derive(Debug, Clone)]
pub struct MeasuredRun<'a> {
    /// The run's iperf3-schema document (what `--json` prints), typed: stored as it is,
    /// without a JSON text in between.
    pub document: &'a linerate_iperf3::Document,
    /// The command line that measured it ([`command_line`] quotes one).
    pub command_line: String,
    /// The measuring tool and its version (`linerate 0.1.0`).
    pub tool: String,
    /// The `linerate-probe` host snapshot as JSON, if one was taken (see [`HostRef::of_snapshot`]).
    pub host_snapshot: Option<serde_json::Value>,
    /// The experiment, variant and repetition (`lab run`); `None` for a lone client run.
    pub experiment: Option<ExperimentRef>,
}

/// Why a measured run was not stored.
#[derive(Debug, thiserror::Error)]
pub enum MeasuredRunError {
    /// The document lacks what a stored run needs.
    #[error("the run's document does not have what the store needs")]
    Document(#[source] Iperf3Error),
    /// The database could not be opened.
    #[error("cannot open the results database")]
    Open(#[source] StoreError),
    /// The insert failed.
    #[error("storing the run in {}", path.display())]
    Insert {
        /// The database file.
        path: PathBuf,
        /// What the store said.
        #[source]
        error: StoreError,
    },
}

/// Stores `run` in the database at `path` (created and migrated if needed) and returns its
/// id. A run with an experiment is stored as a lab run, else as a client run. The document is
/// checked before the database is opened, so a bad one leaves no new file behind.
pub fn store_measured_run(path: &Path, run: MeasuredRun<'_>) -> Result<RunId, MeasuredRunError> {
    let mut context = RunContext::new(if run.experiment.is_some() {
        RunSource::Lab
    } else {
        RunSource::Client
    });
    context.command_line = Some(run.command_line);
    context.tool = Some(run.tool);
    context.host = run.host_snapshot.map(HostRef::of_snapshot);
    context.experiment = run.experiment;
    let record =
        RunRecord::from_iperf3(run.document, context).map_err(MeasuredRunError::Document)?;
    let mut store = Store::open(path).map_err(MeasuredRunError::Open)?;
    store
        .insert_run(&record)
        .map_err(|error| MeasuredRunError::Insert {
            path: store.path().to_owned(),
            error,
        })
}

impl HostRef {
    /// A host snapshot as the store keeps it: hashed without its volatile parts (capture time,
    /// softnet counters), so every run on an unchanged host shares one stored snapshot.
    pub fn of_snapshot(snapshot: serde_json::Value) -> HostRef {
        let mut stable = snapshot.clone();
        if let Some(o) = stable.as_object_mut() {
            o.remove("captured_at");
            o.remove("softnet");
        }
        HostRef {
            hash: snapshot_hash(&stable),
            snapshot: Some(snapshot),
        }
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

    fn document() -> Result<linerate_iperf3::Document, Box<dyn std::error::Error>> {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../linerate/tests/data/store/tcp.json");
        Ok(linerate_iperf3::Document::from_slice(&std::fs::read(
            path,
        )?)?)
    }

    #[test]
    fn a_measured_run_is_stored_with_its_context() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("runs.db");
        let doc = document()?;
        let snapshot = serde_json::json!({"captured_at": 1, "host": {"kernel": "6.1"}});
        let id = store_measured_run(
            &db,
            MeasuredRun {
                document: &doc,
                command_line: "linerate client -c 198.18.0.2".into(),
                tool: "linerate 9.9.9".into(),
                host_snapshot: Some(snapshot.clone()),
                experiment: None,
            },
        )?;
        let run = Store::open(&db)?.run(id)?;
        assert_eq!(run.source, RunSource::Client);
        assert_eq!(run.tool, "linerate 9.9.9");
        assert_eq!(
            run.command_line.as_deref(),
            Some("linerate client -c 198.18.0.2")
        );
        // The capture time does not change the host's identity.
        let mut later = snapshot;
        later["captured_at"] = 2.into();
        assert_eq!(
            run.host.map(|h| h.hash),
            Some(HostRef::of_snapshot(later).hash)
        );
        Ok(())
    }

    #[test]
    fn a_bad_document_leaves_no_database_behind() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("sub/runs.db");
        let mut doc = document()?;
        doc.error = Some("unable to connect to server".into());
        let err = store_measured_run(
            &db,
            MeasuredRun {
                document: &doc,
                command_line: String::new(),
                tool: "linerate".into(),
                host_snapshot: None,
                experiment: None,
            },
        );
        assert!(matches!(err, Err(MeasuredRunError::Document(_))), "{err:?}");
        assert!(!db.exists());
        Ok(())
    }
}

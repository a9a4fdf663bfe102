//! The results store: every run linerate measures or imports, kept in SQLite with its context
//! so any two runs can be compared and charted later.
//!
//! - [`record`]: the run model ([`RunRecord`]) and its context.
//! - [`iperf3`]: iperf3-schema documents (`--json`, `--json-stream`, `linerate client
//!   --json`, typed by `linerate-iperf3`) → [`RunRecord`], with errors that name the place in
//!   the document.
//! - [`import`]: `linerate import`'s files read into runs, placed in an experiment.
//! - [`schema`]: tables and forward migrations (`user_version` is the schema version).
//! - [`Store`]: open (validate, migrate, WAL), insert in one transaction, query.
//! - [`store_measured_run`]: a run linerate just measured, with its command line, tool, host
//!   snapshot and experiment, stored in one call (what `client`, `lab run` and the agent use).
//! - [`rfc2544`]: RFC 2544 results (one run per frame size) as they are stored and read back.
//! - [`lab_run`]: what `lab run` stores with each run (its test bed and the value it compared).
//! - [`experiment`]: experiments by name and instance, with their plan and status (running,
//!   complete, interrupted), started and finished through the [`Store`].
//!
//! ```no_run
//! # fn demo(doc: &linerate_iperf3::Document) -> Result<(), Box<dyn std::error::Error>> {
//! use linerate_store::{RunContext, RunRecord, RunSource, Store};
//! let mut store = Store::open_default()?;
//! let mut context = RunContext::new(RunSource::Client);
//! context.command_line = Some("linerate client -c 198.18.0.2".into());
//! let run = RunRecord::from_iperf3(doc, context)?;
//! let id = store.insert_run(&run)?;
//! println!("stored as run {id}");
//! # Ok(()) }
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod experiment;
pub mod import;
pub mod iperf3;
pub mod lab_run;
mod measured;
pub mod record;
pub mod rfc2544;
pub mod schema;
mod store;

pub use experiment::{Experiment, ExperimentPlan, ExperimentStatus, VariantRuns};
pub use iperf3::Iperf3Error;
pub use measured::{MeasuredRun, MeasuredRunError, command_line, store_measured_run};
pub use record::{
    Direction, ExperimentRef, HostRef, IntervalSample, Latency, LatencyBucket, RunContext, RunId,
    RunRecord, RunSource, RunSummary, StreamResult, snapshot_hash,
};
pub use store::{RunFilter, RunListing, RunProfile, Store, StoreError};

impl RunRecord {
    /// Builds a record from a typed document: the run linerate just measured (no JSON text in
    /// between). The record keeps the document as the schema writes it.
    pub fn from_iperf3(
        document: &linerate_iperf3::Document,
        context: RunContext,
    ) -> Result<RunRecord, Iperf3Error> {
        iperf3::record(document, context)
    }

    /// Builds a record from one iperf3-schema JSON document as it was written (kept verbatim) (what `iperf3 --json` and
    /// `linerate client --json` print) and the context the document does not carry.
    pub fn from_iperf3_json(
        document: &serde_json::Value,
        context: RunContext,
    ) -> Result<RunRecord, Iperf3Error> {
        iperf3::record_from_document(document, context)
    }

    /// Builds records from a file's text: one `--json` document, several concatenated, or a
    /// `--json-stream` event sequence.
    pub fn from_iperf3_text(
        text: &str,
        context: &RunContext,
    ) -> Result<Vec<RunRecord>, Iperf3Error> {
        let docs = iperf3::parse_documents(text)?;
        let many = docs.len() > 1;
        docs.iter()
            .enumerate()
            .map(|(i, doc)| {
                iperf3::record_from_document(doc, context.clone()).map_err(|e| {
                    if many {
                        Iperf3Error {
                            place: format!("document {} of {}: {}", i + 1, docs.len(), e.place),
                            message: e.message,
                        }
                    } else {
                        e
                    }
                })
            })
            .collect()
    }
}

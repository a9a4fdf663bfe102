//! `linerate import`: iperf3 `--json` / `--json-stream` files (or standard input, `-`) read and
//! checked into runs before any is stored, and their place in an experiment (variant,
//! repetitions numbered on from what is stored, the swept value).

use std::path::Path;

use crate::iperf3::Iperf3Error;
use crate::{ExperimentRef, RunContext, RunRecord, RunSource, Store, StoreError};

/// Why a file could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Standard input could not be read.
    #[error("reading standard input")]
    Stdin(#[source] std::io::Error),
    /// A file could not be read.
    #[error("cannot read {name}")]
    Read {
        /// The file.
        name: String,
        /// The OS's reason.
        source: std::io::Error,
    },
    /// A file that is not iperf3 output linerate can use.
    #[error("{name} is not usable iperf3 output")]
    NotIperf3 {
        /// The file.
        name: String,
        /// Where and what.
        source: Iperf3Error,
    },
}

/// The runs of the iperf3 output in `file` (`-`: standard input), recorded as imported from
/// it (its canonical path, or `(stdin)`).
///
/// # Errors
/// A file that cannot be read or is not iperf3 output.
pub fn read(file: &Path) -> Result<Vec<RunRecord>, ImportError> {
    let name = file.display().to_string();
    let stdin = name == "-";
    let text = if stdin {
        std::io::read_to_string(std::io::stdin()).map_err(ImportError::Stdin)?
    } else {
        std::fs::read_to_string(file).map_err(|source| ImportError::Read {
            name: name.clone(),
            source,
        })?
    };
    let mut context = RunContext::new(RunSource::Import);
    context.source_path = Some(if stdin {
        "(stdin)".to_owned()
    } else {
        std::fs::canonicalize(file).map_or(name.clone(), |p| p.display().to_string())
    });
    RunRecord::from_iperf3_text(&text, &context)
        .map_err(|source| ImportError::NotIperf3 { name, source })
}

/// Where imported runs go in an experiment.
#[derive(Debug, Clone)]
pub struct Placement {
    /// The experiment.
    pub experiment: String,
    /// The variant.
    pub variant: String,
    /// The first run's repetition (default: one past what the store holds of the variant).
    pub first_repetition: Option<u32>,
    /// The swept value.
    pub sweep_value: Option<f64>,
    /// What the swept value is.
    pub sweep_label: Option<String>,
}

/// Puts `runs` into the experiment as repetitions of the variant, numbered on from
/// `first_repetition` or from what `store` holds.
///
/// # Errors
/// The store's.
pub fn place<'a>(
    store: &Store,
    runs: impl IntoIterator<Item = &'a mut RunRecord>,
    at: &Placement,
) -> Result<(), StoreError> {
    let first = match at.first_repetition {
        Some(n) => n,
        None => store.repetitions(&at.experiment, &at.variant)? + 1,
    };
    for (repetition, run) in (first..).zip(runs) {
        run.experiment = Some(ExperimentRef {
            experiment: at.experiment.clone(),
            variant: at.variant.clone(),
            repetition,
            sweep_value: at.sweep_value,
            sweep_label: at.sweep_label.clone(),
        });
    }
    Ok(())
}

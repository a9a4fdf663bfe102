//! A run's CPU profile (`lab run --profile`): folded stacks kept compressed beside the run, so
//! `compare` and `report` can say which functions' share changed between variants.

use std::io::{Read as _, Write as _};

use rusqlite::{OptionalExtension as _, params};

use super::{Store, StoreError, classify};
use crate::record::RunId;

/// Folded stacks are refused above this size once inflated (a damaged or hostile blob).
const MAX_FOLDED: u64 = 256 << 20;

/// A run's profile.
#[derive(Debug, Clone, PartialEq)]
pub struct RunProfile {
    /// The sampled event (`cpu-clock`, `cycles`).
    pub event: String,
    /// Samples per second per CPU.
    pub frequency_hz: u64,
    /// Samples taken.
    pub samples: u64,
    /// The attribution (per CPU, context, subsystem) as JSON.
    pub breakdown: serde_json::Value,
    /// The folded stacks (`root;…;leaf COUNT` per line).
    pub folded: String,
}

impl Store {
    /// Stores `profile` with run `run` (replacing one stored before).
    pub fn insert_profile(&mut self, run: RunId, profile: &RunProfile) -> Result<(), StoreError> {
        let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        let blob = z
            .write_all(profile.folded.as_bytes())
            .and_then(|()| z.finish())
            .map_err(|error| StoreError::Io {
                path: self.path.clone(),
                error,
            })?;
        self.conn
            .execute(
                "INSERT OR REPLACE INTO run_profiles
                    (run_id, event, frequency_hz, samples, breakdown, folded)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    run.0,
                    profile.event,
                    i64::try_from(profile.frequency_hz).unwrap_or(i64::MAX),
                    i64::try_from(profile.samples).unwrap_or(i64::MAX),
                    profile.breakdown.to_string(),
                    blob
                ],
            )
            .map_err(|e| classify(&self.path, e))?;
        Ok(())
    }

    /// The profile stored with run `run`, if any.
    pub fn profile(&self, run: RunId) -> Result<Option<RunProfile>, StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT event, frequency_hz, samples, breakdown, folded FROM run_profiles
                 WHERE run_id = ?1",
                [run.0],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, Vec<u8>>(4)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| classify(&self.path, e))?;
        let Some((event, frequency_hz, samples, breakdown, blob)) = row else {
            return Ok(None);
        };
        let corrupt = |detail: String| StoreError::Corrupt {
            path: self.path.clone(),
            detail: format!("run {run}'s profile: {detail}"),
        };
        let mut folded = String::new();
        flate2::read::DeflateDecoder::new(blob.as_slice())
            .take(MAX_FOLDED)
            .read_to_string(&mut folded)
            .map_err(|e| corrupt(e.to_string()))?;
        let breakdown = serde_json::from_str(&breakdown).map_err(|e| corrupt(e.to_string()))?;
        Ok(Some(RunProfile {
            event,
            frequency_hz: u64::try_from(frequency_hz).unwrap_or(0),
            samples: u64::try_from(samples).unwrap_or(0),
            breakdown,
            folded,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_is_stored_compressed_and_read_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("r.db")).expect("open");
        let run = store
            .insert_run(&super::super::tests::record("tcp.json"))
            .expect("run stored");
        assert_eq!(store.profile(run).expect("query"), None);
        let folded: String = (0..2000)
            .map(|i| format!("linerate;main;send;f{} {}\n", i % 50, i + 1))
            .collect();
        let p = RunProfile {
            event: "cpu-clock".into(),
            frequency_hz: 99,
            samples: 12345,
            breakdown: serde_json::json!({"by_cpu": [{"name": "cpu0", "samples": 1}]}),
            folded,
        };
        store.insert_profile(run, &p).expect("stored");
        assert_eq!(store.profile(run).expect("query"), Some(p.clone()));
        let blob: Vec<u8> = store
            .conn
            .query_row("SELECT folded FROM run_profiles", [], |r| r.get(0))
            .expect("blob");
        assert!(
            blob.len() * 4 < p.folded.len(),
            "not compressed: {}",
            blob.len()
        );
        // A damaged blob is a clear error, not a panic.
        store
            .conn
            .execute("UPDATE run_profiles SET folded = x'00ff00ff'", [])
            .expect("damage");
        assert!(matches!(
            store.profile(run),
            Err(StoreError::Corrupt { .. })
        ));
    }
}

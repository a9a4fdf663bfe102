//! Reading runs back: listings, whole runs with their samples, experiment lookups.

use rusqlite::OptionalExtension;

use super::{RunFilter, RunListing, Store, StoreError};
use crate::record::{
    Direction, ExperimentRef, HostRef, IntervalSample, Latency, LatencyBucket, RunId, RunRecord,
    RunSource, StreamResult,
};

impl Store {
    /// The newest of the last `last` runs whose document holds an object at `pointer` (a JSON
    /// pointer, `/linerate/tunnel`): its listing and that object.
    ///
    /// # Errors
    /// The store's.
    pub fn newest_with_object(
        &self,
        pointer: &str,
        last: usize,
    ) -> Result<Option<(RunListing, serde_json::Value)>, StoreError> {
        let listed = self.list(&RunFilter {
            last: Some(last),
            ..RunFilter::default()
        })?;
        let mut newest: Option<(RunListing, serde_json::Value)> = None;
        for l in listed {
            if newest
                .as_ref()
                .is_some_and(|(n, _)| (n.started_at, n.id) >= (l.started_at, l.id))
            {
                continue;
            }
            let run = self.run(l.id)?;
            if let Some(object) = run.document.pointer(pointer).filter(|v| v.is_object()) {
                newest = Some((l, object.clone()));
            }
        }
        Ok(newest)
    }

    /// The runs matching `filter`, oldest first.
    pub fn list(&self, filter: &RunFilter) -> Result<Vec<RunListing>, StoreError> {
        let mut sql = format!("SELECT id, received_bps, {HEAD} FROM runs WHERE 1 = 1");
        let mut args: Vec<Box<dyn rusqlite::ToSql>> = Vec::new();
        if let Some(mode) = &filter.mode {
            args.push(Box::new(mode.to_ascii_lowercase()));
            sql.push_str(&format!(" AND mode = ?{}", args.len()));
        }
        if let Some(peer) = &filter.peer {
            args.push(Box::new(peer.clone()));
            let n = args.len();
            // Prefix matches without LIKE, whose `_` and `%` are wildcards.
            args.push(Box::new(format!("{peer}:")));
            let m = args.len();
            args.push(Box::new(format!("[{peer}]:")));
            let k = args.len();
            sql.push_str(&format!(
                " AND (peer = ?{n} OR substr(peer, 1, length(?{m})) = ?{m} OR substr(peer, 1, length(?{k})) = ?{k})"
            ));
        }
        if let Some(exp) = &filter.experiment {
            args.push(Box::new(exp.clone()));
            sql.push_str(&format!(" AND experiment_id = ?{}", args.len()));
        }
        if let Some(t) = filter.since {
            args.push(Box::new(t));
            sql.push_str(&format!(" AND started_at >= ?{}", args.len()));
        }
        sql.push_str(" ORDER BY started_at DESC, id DESC");
        if let Some(n) = filter.last {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let refs: Vec<&dyn rusqlite::ToSql> = args.iter().map(AsRef::as_ref).collect();
        let rows = stmt
            .query_map(refs.as_slice(), |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?, Head::read(r, 2)?))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, received_bps, head) = row.map_err(|e| self.err(e))?;
            out.push(RunListing {
                id: RunId(id),
                started_at: head.started_at,
                source: self.decode_source(&head.source)?,
                tool: head.tool,
                mode: head.mode,
                direction: self.decode_direction(&head.direction)?,
                peer: head.peer,
                streams: head.streams,
                duration_s: head.duration_s,
                received_bps,
                summary: self.decode_json(&head.summary, "runs.summary")?,
                experiment: head.experiment,
                partial: head.partial,
            });
        }
        out.reverse();
        Ok(out)
    }

    /// The ids of an experiment's runs, in the order they were measured.
    pub fn experiment_run_ids(&self, experiment: &str) -> Result<Vec<RunId>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM runs WHERE experiment_id = ?1 ORDER BY started_at, id")
            .map_err(|e| self.err(e))?;
        let ids = stmt
            .query_map([experiment], |r| r.get::<_, i64>(0))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(ids.into_iter().map(RunId).collect())
    }

    /// Whether every stored run is whole: its interval rows match the count written with it.
    /// (An interrupted write must leave nothing; this proves it for tests and `--check`.)
    pub fn incomplete_runs(&self) -> Result<Vec<RunId>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id FROM runs WHERE interval_count !=
                    (SELECT count(*) FROM intervals WHERE run_id = runs.id) ORDER BY id",
            )
            .map_err(|e| self.err(e))?;
        let ids = stmt
            .query_map([], |r| r.get::<_, i64>(0))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(ids.into_iter().map(RunId).collect())
    }

    /// How many runs an experiment's variant has: the next repetition is this plus one.
    pub fn repetitions(&self, experiment: &str, variant: &str) -> Result<u32, StoreError> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM runs WHERE experiment_id = ?1 AND variant = ?2",
                [experiment, variant],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// SQLite's own structural check (`PRAGMA integrity_check`): `ok`, or what is broken.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        let mut stmt = self
            .conn
            .prepare("PRAGMA integrity_check")
            .map_err(|e| self.err(e))?;
        let lines = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(lines.join("\n"))
    }

    /// One run, complete.
    pub fn run(&self, id: RunId) -> Result<RunRecord, StoreError> {
        let row = self
            .conn
            .query_row(
                &format!(
                    "SELECT {HEAD}, source_path, command_line, params, document, host_hash, latency,
                        (SELECT snapshot FROM hosts WHERE hash = runs.host_hash)
                     FROM runs WHERE id = ?1"
                ),
                [id.0],
                |r| {
                    Ok((
                        Head::read(r, 0)?,
                        r.get::<_, Option<String>>(HEAD_COLUMNS)?,
                        r.get::<_, Option<String>>(HEAD_COLUMNS + 1)?,
                        r.get::<_, String>(HEAD_COLUMNS + 2)?,
                        r.get::<_, String>(HEAD_COLUMNS + 3)?,
                        r.get::<_, Option<String>>(HEAD_COLUMNS + 4)?,
                        r.get::<_, Option<String>>(HEAD_COLUMNS + 5)?,
                        r.get::<_, Option<String>>(HEAD_COLUMNS + 6)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?
            .ok_or_else(|| StoreError::RunNotFound(id, self.path.clone()))?;
        let (
            head,
            source_path,
            command_line,
            params_text,
            document,
            host_hash,
            latency_meta,
            snapshot,
        ) = row;
        let host = match host_hash {
            Some(hash) => Some(HostRef {
                hash,
                snapshot: match snapshot {
                    Some(s) => Some(self.decode_json(&s, "hosts.snapshot")?),
                    None => None,
                },
            }),
            None => None,
        };
        let latency = match latency_meta {
            Some(meta) => {
                let meta: serde_json::Value = self.decode_json(&meta, "runs.latency")?;
                let percentiles =
                    serde_json::from_value(meta["percentiles"].clone()).unwrap_or_default();
                Some(Latency {
                    buckets: self.latency_buckets(id)?,
                    percentiles,
                    mean_us: meta["mean_us"].as_f64(),
                })
            }
            None => None,
        };
        Ok(RunRecord {
            started_at: head.started_at,
            source: self.decode_source(&head.source)?,
            source_path,
            command_line,
            tool: head.tool,
            mode: head.mode,
            direction: self.decode_direction(&head.direction)?,
            peer: head.peer,
            streams: head.streams,
            duration_s: head.duration_s,
            params: self.decode_json(&params_text, "runs.params")?,
            summary: self.decode_json(&head.summary, "runs.summary")?,
            intervals: self.intervals(id)?,
            stream_results: self.stream_results(id)?,
            latency,
            host,
            experiment: head.experiment,
            partial: head.partial,
            document: self.decode_json(&document, "runs.document")?,
        })
    }

    /// Every row `sql` selects for run `id` (bound to `?1`), each turned into a `T` by `row`.
    fn rows_of<T>(
        &self,
        sql: &str,
        id: RunId,
        row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.err(e))?;
        stmt.query_map([id.0], row)
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))
    }

    fn intervals(&self, id: RunId) -> Result<Vec<IntervalSample>, StoreError> {
        self.rows_of(
            "SELECT idx, stream, start_s, end_s, bytes, bits_per_second, sender, omitted,
                retransmits, rtt_us, snd_cwnd, packets
             FROM intervals WHERE run_id = ?1 ORDER BY rowid",
            id,
            |r| {
                Ok(IntervalSample {
                    index: r.get(0)?,
                    stream: r.get(1)?,
                    start_s: r.get(2)?,
                    end_s: r.get(3)?,
                    bytes: from_sql_u64(r.get(4)?),
                    bits_per_second: r.get(5)?,
                    sender: r.get(6)?,
                    omitted: r.get(7)?,
                    retransmits: opt_u64(r, 8)?,
                    rtt_us: opt_u64(r, 9)?,
                    snd_cwnd: opt_u64(r, 10)?,
                    packets: opt_u64(r, 11)?,
                })
            },
        )
    }

    fn stream_results(&self, id: RunId) -> Result<Vec<StreamResult>, StoreError> {
        self.rows_of(
            "SELECT stream, sender, bytes_sent, bytes_received, sent_bps, received_bps,
                retransmits, mean_rtt_us, jitter_ms, lost_packets, packets
             FROM stream_results WHERE run_id = ?1 ORDER BY rowid",
            id,
            |r| {
                Ok(StreamResult {
                    stream: r.get(0)?,
                    sender: r.get(1)?,
                    bytes_sent: from_sql_u64(r.get(2)?),
                    bytes_received: from_sql_u64(r.get(3)?),
                    sent_bps: r.get(4)?,
                    received_bps: r.get(5)?,
                    retransmits: opt_u64(r, 6)?,
                    mean_rtt_us: opt_u64(r, 7)?,
                    jitter_ms: r.get(8)?,
                    lost_packets: opt_u64(r, 9)?,
                    packets: opt_u64(r, 10)?,
                })
            },
        )
    }

    fn latency_buckets(&self, id: RunId) -> Result<Vec<LatencyBucket>, StoreError> {
        self.rows_of(
            "SELECT upper_us, count FROM latency_buckets WHERE run_id = ?1 ORDER BY upper_us",
            id,
            |r| {
                Ok(LatencyBucket {
                    upper_us: r.get(0)?,
                    count: from_sql_u64(r.get(1)?),
                })
            },
        )
    }

    fn decode_json<T: serde::de::DeserializeOwned>(
        &self,
        text: &str,
        what: &str,
    ) -> Result<T, StoreError> {
        serde_json::from_str(text).map_err(|e| StoreError::Corrupt {
            path: self.path.clone(),
            detail: format!("{what} does not decode: {e}"),
        })
    }

    fn decode_source(&self, s: &str) -> Result<RunSource, StoreError> {
        RunSource::parse(s).ok_or_else(|| StoreError::Corrupt {
            path: self.path.clone(),
            detail: format!("unknown run source {s:?}"),
        })
    }

    fn decode_direction(&self, s: &str) -> Result<Direction, StoreError> {
        Direction::parse(s).ok_or_else(|| StoreError::Corrupt {
            path: self.path.clone(),
            detail: format!("unknown direction {s:?}"),
        })
    }
}

/// The columns every run query starts with, in this order (`list` and `run` share them).
const HEAD: &str = "started_at, source, tool, mode, direction, peer, streams, duration_s, summary,
    experiment_id, variant, repetition, sweep_value, sweep_label, partial";
/// How many columns [`HEAD`] names.
const HEAD_COLUMNS: usize = 15;

/// The [`HEAD`] columns of one row as stored; decoding them needs the store (for its errors),
/// so it happens outside rusqlite's row closure.
struct Head {
    started_at: i64,
    source: String,
    tool: String,
    mode: String,
    direction: String,
    peer: Option<String>,
    streams: u32,
    duration_s: f64,
    summary: String,
    experiment: Option<ExperimentRef>,
    partial: bool,
}

impl Head {
    /// Reads the [`HEAD`] columns starting at column `first`.
    fn read(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Head> {
        let experiment_id: Option<String> = r.get(first + 9)?;
        let experiment = match experiment_id {
            Some(experiment) => Some(ExperimentRef {
                experiment,
                variant: r.get::<_, Option<String>>(first + 10)?.unwrap_or_default(),
                repetition: r.get::<_, Option<u32>>(first + 11)?.unwrap_or(0),
                sweep_value: r.get(first + 12)?,
                sweep_label: r.get(first + 13)?,
            }),
            None => None,
        };
        Ok(Head {
            started_at: r.get(first)?,
            source: r.get(first + 1)?,
            tool: r.get(first + 2)?,
            mode: r.get(first + 3)?,
            direction: r.get(first + 4)?,
            peer: r.get(first + 5)?,
            streams: r.get(first + 6)?,
            duration_s: r.get(first + 7)?,
            summary: r.get(first + 8)?,
            experiment,
            partial: r.get(first + 14)?,
        })
    }
}

fn from_sql_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// A nullable counter column.
fn opt_u64(r: &rusqlite::Row<'_>, column: usize) -> rusqlite::Result<Option<u64>> {
    Ok(r.get::<_, Option<i64>>(column)?.map(from_sql_u64))
}

#[cfg(test)]
mod head_tests {
    #[test]
    fn head_columns_counts_the_head() {
        assert_eq!(super::HEAD.split(',').count(), super::HEAD_COLUMNS);
    }
}

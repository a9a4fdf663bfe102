//! Storing a run: one transaction per run, so a killed writer leaves no part of it.

use rusqlite::{TransactionBehavior, params};

use super::{Store, StoreError, classify};
use crate::record::{RunId, RunRecord};

impl Store {
    /// Stores a run and everything in it in one transaction: a process killed mid-way leaves
    /// no trace of the run.
    pub fn insert_run(&mut self, run: &RunRecord) -> Result<RunId, StoreError> {
        let path = self.path.clone();
        let err = |e| classify(&path, e);
        let json = |v: &dyn erased::Json| v.to_json();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        if let Some(host) = &run.host {
            tx.execute(
                "INSERT INTO hosts (hash, snapshot, first_seen) VALUES (?1, ?2, ?3)
                 ON CONFLICT(hash) DO UPDATE SET snapshot = coalesce(hosts.snapshot, excluded.snapshot)",
                params![host.hash, host.snapshot.as_ref().map(serde_json::Value::to_string), now],
            )
            .map_err(err)?;
        }
        if let Some(exp) = &run.experiment {
            // An experiment the runner did not start (an import) is named by its id and
            // complete: the user put its runs together.
            tx.execute(
                "INSERT OR IGNORE INTO experiments (id, created_at, name, instance, status)
                 VALUES (?1, ?2, ?1,
                    (SELECT coalesce(max(instance), 0) + 1 FROM experiments WHERE name = ?1),
                    'complete')",
                params![exp.experiment, now],
            )
            .map_err(err)?;
        }
        let latency_meta = run.latency.as_ref().map(|l| {
            serde_json::json!({"percentiles": l.percentiles, "mean_us": l.mean_us}).to_string()
        });
        tx.execute(
            "INSERT INTO runs (started_at, stored_at, source, source_path, command_line, tool,
                mode, direction, peer, streams, duration_s, params, summary, received_bps,
                document, host_hash, experiment_id, variant, repetition, latency, sweep_value,
                sweep_label, interval_count, partial)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                ?18, ?19, ?20, ?21, ?22, ?23, ?24)",
            params![
                run.started_at,
                now,
                run.source.as_str(),
                run.source_path,
                run.command_line,
                run.tool,
                run.mode,
                run.direction.as_str(),
                run.peer,
                run.streams,
                run.duration_s,
                run.params.to_string(),
                json(&run.summary),
                run.summary.received_bps,
                run.document.to_string(),
                run.host.as_ref().map(|h| &h.hash),
                run.experiment.as_ref().map(|e| &e.experiment),
                run.experiment.as_ref().map(|e| &e.variant),
                run.experiment.as_ref().map(|e| e.repetition),
                latency_meta,
                run.experiment.as_ref().and_then(|e| e.sweep_value),
                run.experiment.as_ref().and_then(|e| e.sweep_label.as_ref()),
                i64::try_from(run.intervals.len()).unwrap_or(i64::MAX),
                run.partial,
            ],
        )
        .map_err(err)?;
        let id = tx.last_insert_rowid();
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT INTO intervals (run_id, idx, stream, start_s, end_s, bytes,
                        bits_per_second, sender, omitted, retransmits, rtt_us, snd_cwnd, packets)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                )
                .map_err(err)?;
            for s in &run.intervals {
                stmt.execute(params![
                    id,
                    s.index,
                    s.stream,
                    s.start_s,
                    s.end_s,
                    sql_u64(s.bytes),
                    s.bits_per_second,
                    s.sender,
                    s.omitted,
                    s.retransmits.map(sql_u64),
                    s.rtt_us.map(sql_u64),
                    s.snd_cwnd.map(sql_u64),
                    s.packets.map(sql_u64),
                ])
                .map_err(err)?;
            }
            let mut stmt = tx
                .prepare_cached(
                    "INSERT INTO stream_results (run_id, stream, sender, bytes_sent,
                        bytes_received, sent_bps, received_bps, retransmits, mean_rtt_us,
                        jitter_ms, lost_packets, packets)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                )
                .map_err(err)?;
            for s in &run.stream_results {
                stmt.execute(params![
                    id,
                    s.stream,
                    s.sender,
                    sql_u64(s.bytes_sent),
                    sql_u64(s.bytes_received),
                    s.sent_bps,
                    s.received_bps,
                    s.retransmits.map(sql_u64),
                    s.mean_rtt_us.map(sql_u64),
                    s.jitter_ms,
                    s.lost_packets.map(sql_u64),
                    s.packets.map(sql_u64),
                ])
                .map_err(err)?;
            }
            if let Some(latency) = &run.latency {
                let mut stmt = tx
                    .prepare_cached(
                        "INSERT INTO latency_buckets (run_id, upper_us, count) VALUES (?1, ?2, ?3)",
                    )
                    .map_err(err)?;
                for b in &latency.buckets {
                    stmt.execute(params![id, b.upper_us, sql_u64(b.count)])
                        .map_err(err)?;
                }
            }
        }
        tx.commit().map_err(err)?;
        Ok(RunId(id))
    }
}

/// SQLite integers are signed 64-bit; counters beyond 2⁶³ do not occur in practice and clamp.
fn sql_u64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

mod erased {
    /// Serialises a stored JSON column; our own types always serialise.
    pub trait Json {
        fn to_json(&self) -> String;
    }

    impl<T: serde::Serialize> Json for T {
        fn to_json(&self) -> String {
            serde_json::to_string(self).unwrap_or_else(|_| "null".into())
        }
    }
}

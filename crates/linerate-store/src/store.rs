//! The store: opening (with validation and migration), inserting and querying runs.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::record::{
    Direction, ExperimentRef, HostRef, IntervalSample, Latency, LatencyBucket, RunId, RunRecord,
    RunSource, RunSummary, StreamResult,
};
use crate::schema::{APPLICATION_ID, MIGRATIONS, latest_version};

/// What can go wrong with the store. Every variant names the database file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file exists but is not a linerate database (or is damaged beyond reading).
    #[error(
        "{path}: not a linerate results database ({detail}); it was left untouched. Move it aside or choose another with --db or LINERATE_DB"
    )]
    NotADatabase {
        /// The database file.
        path: PathBuf,
        /// What SQLite or the header check said.
        detail: String,
    },
    /// The file is damaged.
    #[error(
        "{path}: the database is corrupt ({detail}); it was left untouched. Keep a copy and try `sqlite3 {path} .recover`, or choose another with --db or LINERATE_DB"
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        detail: String,
    },
    /// A newer linerate wrote the file; this one does not know its schema.
    #[error(
        "{path}: the database has schema version {found}, newer than this linerate knows ({supported}); it was left untouched. Use a newer linerate, or another database with --db"
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// The file's version.
        found: u32,
        /// The newest version this build knows.
        supported: u32,
    },
    /// Any other SQLite failure.
    #[error("{path}: {error}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        error: rusqlite::Error,
    },
    /// Creating the directory or reading the file failed.
    #[error("{path}: {error}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        error: std::io::Error,
    },
    /// No run has that id.
    #[error("no run {0} in {1} (see `linerate history`)")]
    RunNotFound(RunId, PathBuf),
    /// No default location: neither XDG_DATA_HOME nor HOME is set.
    #[error("no default database location: set XDG_DATA_HOME or HOME, or pass --db PATH")]
    NoDefaultPath,
}

/// A row of `history`: the run without its samples.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunListing {
    /// The run's id.
    pub id: RunId,
    /// Start time, Unix seconds.
    pub started_at: i64,
    /// Where it came from.
    pub source: RunSource,
    /// Tool and version.
    pub tool: String,
    /// Test mode.
    pub mode: String,
    /// Direction.
    pub direction: Direction,
    /// The server.
    pub peer: Option<String>,
    /// Parallel streams.
    pub streams: u32,
    /// Duration, seconds.
    pub duration_s: f64,
    /// Receiver-side throughput, bits/s.
    pub received_bps: f64,
    /// The headline numbers.
    pub summary: RunSummary,
    /// Experiment membership.
    pub experiment: Option<ExperimentRef>,
}

/// Which runs `list` returns.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// Only the N most recent (by start time, then id).
    pub last: Option<usize>,
    /// Only this mode (`tcp`, `udp`, `rr`, …).
    pub mode: Option<String>,
    /// Only this peer: a host (any port) or `host:port`.
    pub peer: Option<String>,
    /// Only this experiment.
    pub experiment: Option<String>,
}

/// An open results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

impl Store {
    /// The default location: `$XDG_DATA_HOME/linerate/linerate.db`, else
    /// `~/.local/share/linerate/linerate.db`. (`LINERATE_DB` and `--db` are the binary's.)
    pub fn default_path() -> Result<PathBuf, StoreError> {
        let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        if let Some(data) = nonempty("XDG_DATA_HOME") {
            return Ok(PathBuf::from(data).join("linerate").join("linerate.db"));
        }
        match nonempty("HOME") {
            Some(home) => Ok(PathBuf::from(home)
                .join(".local/share/linerate")
                .join("linerate.db")),
            None => Err(StoreError::NoDefaultPath),
        }
    }

    /// Opens the database at the default location, creating it if needed.
    pub fn open_default() -> Result<Store, StoreError> {
        Store::open(&Store::default_path()?)
    }

    /// Opens (creating if absent) the database at `path` and brings its schema up to date.
    ///
    /// A file that is not a linerate database, is corrupt, or has a newer schema is refused
    /// with a message and never written to.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let path_buf = path.to_path_buf();
        let exists = path.exists();
        if exists {
            check_header(path)?;
        } else if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|error| StoreError::Io {
                path: parent.to_path_buf(),
                error,
            })?;
        }
        let conn = Connection::open(path).map_err(|e| classify(path, e))?;
        let sql = |e| classify(path, e);
        conn.busy_timeout(Duration::from_secs(30)).map_err(sql)?;
        let mut store = Store {
            conn,
            path: path_buf,
        };
        store.validate()?;
        store
            .conn
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(sql)?;
        store
            .conn
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(sql)?;
        store
            .conn
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(sql)?;
        store.migrate()?;
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        let v: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| self.err(e))?;
        Ok(u32::try_from(v).unwrap_or(u32::MAX))
    }

    /// Reads the header fields and refuses foreign or newer files, before anything is written.
    fn validate(&self) -> Result<(), StoreError> {
        let version = self.schema_version()?;
        let app_id: i32 = self
            .conn
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(|e| self.err(e))?;
        // Reading the schema parses page 1: garbage there shows up now, not mid-write.
        let tables: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if app_id != APPLICATION_ID && (version > 0 || tables > 0) {
            return Err(StoreError::NotADatabase {
                path: self.path.clone(),
                detail: format!(
                    "an SQLite database of another program (application id {app_id:#x})"
                ),
            });
        }
        if version > latest_version() {
            return Err(StoreError::NewerSchema {
                path: self.path.clone(),
                found: version,
                supported: latest_version(),
            });
        }
        Ok(())
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        if self.schema_version()? == latest_version() {
            return Ok(());
        }
        let path = self.path.clone();
        let err = |e| classify(&path, e);
        // IMMEDIATE: two processes opening an old database at once migrate it once.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let current: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(err)?;
        let current = usize::try_from(current).unwrap_or(usize::MAX);
        for migration in MIGRATIONS.iter().skip(current) {
            tx.execute_batch(migration).map_err(err)?;
        }
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(err)?;
        tx.pragma_update(None, "user_version", latest_version())
            .map_err(err)?;
        tx.commit().map_err(err)
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        classify(&self.path, e)
    }

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
            tx.execute(
                "INSERT OR IGNORE INTO experiments (id, created_at) VALUES (?1, ?2)",
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
                sweep_label, interval_count)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                ?18, ?19, ?20, ?21, ?22, ?23)",
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

    /// The runs matching `filter`, oldest first.
    pub fn list(&self, filter: &RunFilter) -> Result<Vec<RunListing>, StoreError> {
        let mut sql = String::from(
            "SELECT id, started_at, source, tool, mode, direction, peer, streams, duration_s,
                received_bps, summary, experiment_id, variant, repetition, sweep_value, sweep_label
             FROM runs WHERE 1 = 1",
        );
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
        sql.push_str(" ORDER BY started_at DESC, id DESC");
        if let Some(n) = filter.last {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let refs: Vec<&dyn rusqlite::ToSql> = args.iter().map(AsRef::as_ref).collect();
        let rows = stmt
            .query_map(refs.as_slice(), |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, Option<String>>(6)?,
                    r.get::<_, u32>(7)?,
                    r.get::<_, f64>(8)?,
                    r.get::<_, f64>(9)?,
                    r.get::<_, String>(10)?,
                    experiment_from_row(r, 11)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (
                id,
                started_at,
                source,
                tool,
                mode,
                direction,
                peer,
                streams,
                duration_s,
                bps,
                summary,
                experiment,
            ) = row.map_err(|e| self.err(e))?;
            out.push(RunListing {
                id: RunId(id),
                started_at,
                source: self.decode_source(&source)?,
                tool,
                mode,
                direction: self.decode_direction(&direction)?,
                peer,
                streams,
                duration_s,
                received_bps: bps,
                summary: self.decode_json(&summary, "runs.summary")?,
                experiment,
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
                "SELECT started_at, source, source_path, command_line, tool, mode, direction, peer,
                    streams, duration_s, params, summary, document, host_hash, latency,
                    (SELECT snapshot FROM hosts WHERE hash = runs.host_hash),
                    experiment_id, variant, repetition, sweep_value, sweep_label
                 FROM runs WHERE id = ?1",
                [id.0],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, Option<String>>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, String>(5)?,
                        r.get::<_, String>(6)?,
                        r.get::<_, Option<String>>(7)?,
                        r.get::<_, u32>(8)?,
                        r.get::<_, f64>(9)?,
                        r.get::<_, String>(10)?,
                        r.get::<_, String>(11)?,
                        r.get::<_, String>(12)?,
                        r.get::<_, Option<String>>(13)?,
                        r.get::<_, Option<String>>(14)?,
                        r.get::<_, Option<String>>(15)?,
                        experiment_from_row(r, 16)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?
            .ok_or_else(|| StoreError::RunNotFound(id, self.path.clone()))?;
        let (
            started_at,
            source,
            source_path,
            command_line,
            tool,
            mode,
            direction,
            peer,
            streams,
            duration_s,
            params_text,
            summary,
            document,
            host_hash,
            latency_meta,
            snapshot,
            experiment,
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
            started_at,
            source: self.decode_source(&source)?,
            source_path,
            command_line,
            tool,
            mode,
            direction: self.decode_direction(&direction)?,
            peer,
            streams,
            duration_s,
            params: self.decode_json(&params_text, "runs.params")?,
            summary: self.decode_json(&summary, "runs.summary")?,
            intervals: self.intervals(id)?,
            stream_results: self.stream_results(id)?,
            latency,
            host,
            experiment,
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

fn experiment_from_row(
    r: &rusqlite::Row<'_>,
    first: usize,
) -> rusqlite::Result<Option<ExperimentRef>> {
    let id: Option<String> = r.get(first)?;
    Ok(match id {
        Some(experiment) => Some(ExperimentRef {
            experiment,
            variant: r.get::<_, Option<String>>(first + 1)?.unwrap_or_default(),
            repetition: r.get::<_, Option<u32>>(first + 2)?.unwrap_or(0),
            sweep_value: r.get(first + 3)?,
            sweep_label: r.get(first + 4)?,
        }),
        None => None,
    })
}

/// SQLite integers are signed 64-bit; counters beyond 2⁶³ do not occur in practice and clamp.
fn sql_u64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn from_sql_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// A nullable counter column.
fn opt_u64(r: &rusqlite::Row<'_>, column: usize) -> rusqlite::Result<Option<u64>> {
    Ok(r.get::<_, Option<i64>>(column)?.map(from_sql_u64))
}

/// Refuses a non-empty file that does not start with SQLite's magic, without opening it.
fn check_header(path: &Path) -> Result<(), StoreError> {
    let mut file = std::fs::File::open(path).map_err(|error| StoreError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let mut head = Vec::with_capacity(16);
    file.by_ref()
        .take(16)
        .read_to_end(&mut head)
        .map_err(|error| StoreError::Io {
            path: path.to_path_buf(),
            error,
        })?;
    if head.is_empty() || head.as_slice() == SQLITE_HEADER {
        Ok(())
    } else {
        Err(StoreError::NotADatabase {
            path: path.to_path_buf(),
            detail: "the file does not start with the SQLite header".into(),
        })
    }
}

fn classify(path: &Path, e: rusqlite::Error) -> StoreError {
    use rusqlite::ffi::ErrorCode;
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => StoreError::NotADatabase {
            path: path.to_path_buf(),
            detail: e.to_string(),
        },
        Some(ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path: path.to_path_buf(),
            detail: e.to_string(),
        },
        _ => StoreError::Sqlite {
            path: path.to_path_buf(),
            error: e,
        },
    }
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

#[cfg(test)]
mod tests;

//! The store: where the database lives, opening it (validation and migration) and its errors;
//! writing runs is in `insert`, reading them in `query`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use crate::record::{Direction, ExperimentRef, RunId, RunSource, RunSummary};
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
    /// No experiment has that name or id.
    #[error("{}", unknown_experiment(wanted, close, path))]
    UnknownExperiment {
        /// What was asked for.
        wanted: String,
        /// Stored names close to it.
        close: Vec<String>,
        /// The database file.
        path: PathBuf,
    },
    /// No default location: neither XDG_DATA_HOME nor HOME is set.
    #[error("no default database location: set XDG_DATA_HOME or HOME, or pass --db PATH")]
    NoDefaultPath,
}

fn unknown_experiment(wanted: &str, close: &[String], path: &Path) -> String {
    let hint = match close {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        many => format!("; close names: {}", many.join(", ")),
    };
    format!(
        "no runs of experiment `{wanted}` in {}: no experiment has that name or id{hint} \
         (`linerate experiments` lists them)",
        path.display()
    )
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
    /// Ended early by a signal: the summary covers only the time it ran.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
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
    /// Only runs started at or after this time (Unix seconds).
    pub since: Option<i64>,
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
        let exists = path.exists();
        if exists {
            check_header(path)?;
        } else if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|error| StoreError::Io {
                path: parent.to_path_buf(),
                error,
            })?;
        }
        // Switching a new file to WAL needs a lock that SQLite's busy handler does not wait for
        // (two `lab run`s creating one database at once got "database is locked"): the whole
        // open is retried, bounded, while another process holds it.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            match Store::open_once(path) {
                Err(StoreError::Sqlite { error, .. })
                    if error.sqlite_error_code()
                        == Some(rusqlite::ffi::ErrorCode::DatabaseBusy)
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => return other,
            }
        }
    }

    /// One attempt of [`Store::open`] after the header check.
    fn open_once(path: &Path) -> Result<Store, StoreError> {
        let path_buf = path.to_path_buf();
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
        // One read transaction, so the three figures are of one moment: read one by one, a
        // migration committed by another process in between (version 0 read before it, its
        // tables after) made a new linerate database look like another program's.
        let snapshot = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
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
        drop(snapshot);
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

mod experiments;
mod insert;
mod profiles;
pub use profiles::RunProfile;
mod query;

#[cfg(test)]
mod tests;

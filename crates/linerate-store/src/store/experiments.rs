//! Experiments: started by the store (which hands out the instance number, so the identity
//! never comes from a clock), marked complete or interrupted by the runner, listed, found by
//! the name the user typed, removed with their runs.

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{Store, StoreError, classify};
use crate::experiment::{Experiment, ExperimentPlan, ExperimentStatus, VariantRuns, close_names};

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

const COLUMNS: &str =
    "id, coalesce(name, id), coalesce(instance, 1), status, created_at, finished_at, plan, pid";

/// An experiments row as stored, decoded outside rusqlite's closure.
struct Row {
    id: String,
    name: String,
    instance: i64,
    status: String,
    created_at: i64,
    finished_at: Option<i64>,
    plan: Option<String>,
    pid: Option<i64>,
}

impl Row {
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
        Ok(Row {
            id: r.get(0)?,
            name: r.get(1)?,
            instance: r.get(2)?,
            status: r.get(3)?,
            created_at: r.get(4)?,
            finished_at: r.get(5)?,
            plan: r.get(6)?,
            pid: r.get(7)?,
        })
    }
}

impl Store {
    /// Starts a new experiment named `name`: the next instance of that name, stored as
    /// `running` with its plan (and this process's id) before any run. Two runners starting
    /// at once get two instances.
    pub fn begin_experiment(
        &mut self,
        name: &str,
        plan: &ExperimentPlan,
    ) -> Result<Experiment, StoreError> {
        let path = self.path.clone();
        let err = |e| classify(&path, e);
        let plan_json = serde_json::to_string(plan).unwrap_or_else(|_| "null".into());
        let created_at = now();
        // IMMEDIATE: the instance is read and taken in one write transaction.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let mut instance: i64 = tx
            .query_row(
                "SELECT coalesce(max(instance), 0) + 1 FROM experiments WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .map_err(err)?;
        // An imported experiment may already be called `name-N`: take the next free id.
        let id = loop {
            let id = format!("{name}-{instance}");
            let taken: bool = tx
                .query_row(
                    "SELECT count(*) > 0 FROM experiments WHERE id = ?1",
                    [&id],
                    |r| r.get(0),
                )
                .map_err(err)?;
            if !taken {
                break id;
            }
            instance += 1;
        };
        tx.execute(
            "INSERT INTO experiments (id, created_at, name, instance, status, plan, pid)
             VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?6)",
            params![
                id,
                created_at,
                name,
                instance,
                plan_json,
                std::process::id()
            ],
        )
        .map_err(err)?;
        tx.commit().map_err(err)?;
        self.experiment(&id)?
            .ok_or_else(|| StoreError::UnknownExperiment {
                wanted: id,
                close: Vec::new(),
                path: self.path.clone(),
            })
    }

    /// Marks an experiment `complete` or `interrupted`, with the time.
    pub fn finish_experiment(
        &mut self,
        id: &str,
        status: ExperimentStatus,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE experiments SET status = ?2, finished_at = ?3 WHERE id = ?1",
                params![id, status.as_str(), now()],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Every experiment, oldest first.
    pub fn experiments(&self) -> Result<Vec<Experiment>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM experiments ORDER BY created_at, rowid"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], Row::read)
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        rows.into_iter().map(|r| self.decode(r)).collect()
    }

    /// One experiment by its stored id.
    pub fn experiment(&self, id: &str) -> Result<Option<Experiment>, StoreError> {
        let row = self
            .conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM experiments WHERE id = ?1"),
                [id],
                Row::read,
            )
            .optional()
            .map_err(|e| self.err(e))?;
        row.map(|r| self.decode(r)).transpose()
    }

    /// The experiment `wanted` names: a name is its newest instance (`window-buffers`), an id
    /// is that experiment (`window-buffers-3`, or an imported id), and `NAME-N` is instance N
    /// of NAME. Anything else is an error that lists the close names.
    pub fn resolve_experiment(&self, wanted: &str) -> Result<Experiment, StoreError> {
        let all = self.experiments()?;
        let newest = all
            .iter()
            .filter(|e| e.name == wanted)
            .max_by_key(|e| e.instance);
        let by_instance = || {
            let (name, n) = wanted.rsplit_once('-')?;
            let n: u32 = n.parse().ok()?;
            all.iter().find(|e| e.name == name && e.instance == n)
        };
        if let Some(found) = newest
            .or_else(|| all.iter().find(|e| e.id == wanted))
            .or_else(by_instance)
        {
            return Ok(found.clone());
        }
        let mut names: Vec<&str> = all.iter().map(|e| e.name.as_str()).collect();
        names.dedup();
        Err(StoreError::UnknownExperiment {
            wanted: wanted.to_owned(),
            close: close_names(wanted, names),
            path: self.path.clone(),
        })
    }

    /// Removes an experiment and its runs (with their samples); returns how many runs went.
    pub fn remove_experiment(&mut self, id: &str) -> Result<u32, StoreError> {
        let path = self.path.clone();
        let err = |e| classify(&path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let runs = tx
            .execute("DELETE FROM runs WHERE experiment_id = ?1", [id])
            .map_err(err)?;
        tx.execute("DELETE FROM experiments WHERE id = ?1", [id])
            .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(u32::try_from(runs).unwrap_or(u32::MAX))
    }

    fn decode(&self, row: Row) -> Result<Experiment, StoreError> {
        let status = ExperimentStatus::parse(&row.status).ok_or_else(|| StoreError::Corrupt {
            path: self.path.clone(),
            detail: format!("experiment {}: unknown status {:?}", row.id, row.status),
        })?;
        let plan = match row.plan {
            Some(text) => serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                path: self.path.clone(),
                detail: format!("experiment {}: the plan does not decode: {e}", row.id),
            })?,
            None => None,
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT variant, count(*) FROM runs WHERE experiment_id = ?1
                 GROUP BY variant ORDER BY min(started_at), min(id)",
            )
            .map_err(|e| self.err(e))?;
        let variants = stmt
            .query_map([&row.id], |r| {
                Ok(VariantRuns {
                    variant: r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                    runs: r.get(1)?,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(Experiment {
            id: row.id,
            name: row.name,
            instance: u32::try_from(row.instance).unwrap_or(0),
            status,
            created_at: row.created_at,
            finished_at: row.finished_at,
            plan,
            pid: row.pid.and_then(|p| u32::try_from(p).ok()),
            variants,
        })
    }
}

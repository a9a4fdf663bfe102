//! The database schema and its forward migrations.
//!
//! The schema version lives in SQLite's `user_version` header field; `MIGRATIONS[i]` takes a
//! database from version `i` to `i + 1`. A migration is never edited once released: a change
//! is a new entry at the end (and a new case in the migration tests). The application id in the
//! header marks the file as linerate's, so another program's SQLite file is never touched.

/// `PRAGMA application_id`: "LRDB".
pub const APPLICATION_ID: i32 = 0x4c52_4442;

/// Forward migrations, in order.
pub const MIGRATIONS: &[&str] = &[
    // 0 → 1: runs with their interval samples and per-stream results.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        started_at INTEGER NOT NULL,
        stored_at INTEGER NOT NULL,
        source TEXT NOT NULL,
        source_path TEXT,
        command_line TEXT,
        tool TEXT NOT NULL,
        mode TEXT NOT NULL,
        direction TEXT NOT NULL,
        peer TEXT,
        streams INTEGER NOT NULL,
        duration_s REAL NOT NULL,
        params TEXT NOT NULL,
        summary TEXT NOT NULL,
        received_bps REAL NOT NULL,
        document TEXT NOT NULL
    );
    CREATE INDEX runs_started_at ON runs(started_at);
    CREATE TABLE intervals (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        stream INTEGER,
        start_s REAL NOT NULL,
        end_s REAL NOT NULL,
        bytes INTEGER NOT NULL,
        bits_per_second REAL NOT NULL,
        sender INTEGER NOT NULL,
        omitted INTEGER NOT NULL,
        retransmits INTEGER,
        rtt_us INTEGER,
        snd_cwnd INTEGER,
        packets INTEGER
    );
    CREATE INDEX intervals_run ON intervals(run_id);
    CREATE TABLE stream_results (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        stream INTEGER NOT NULL,
        sender INTEGER NOT NULL,
        bytes_sent INTEGER NOT NULL,
        bytes_received INTEGER NOT NULL,
        sent_bps REAL NOT NULL,
        received_bps REAL NOT NULL,
        retransmits INTEGER,
        mean_rtt_us INTEGER,
        jitter_ms REAL,
        lost_packets INTEGER,
        packets INTEGER
    );
    CREATE INDEX stream_results_run ON stream_results(run_id);",
    // 1 → 2: host snapshots (stored once per hash) and experiments.
    "CREATE TABLE hosts (
        hash TEXT PRIMARY KEY,
        snapshot TEXT,
        first_seen INTEGER NOT NULL
    );
    CREATE TABLE experiments (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL
    );
    ALTER TABLE runs ADD COLUMN host_hash TEXT REFERENCES hosts(hash);
    ALTER TABLE runs ADD COLUMN experiment_id TEXT REFERENCES experiments(id);
    ALTER TABLE runs ADD COLUMN variant TEXT;
    ALTER TABLE runs ADD COLUMN repetition INTEGER;
    CREATE INDEX runs_experiment ON runs(experiment_id);",
    // 2 → 3: latency histograms, sweep values, and the interval count that proves a run whole.
    "CREATE TABLE latency_buckets (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        upper_us REAL NOT NULL,
        count INTEGER NOT NULL
    );
    CREATE INDEX latency_buckets_run ON latency_buckets(run_id);
    ALTER TABLE runs ADD COLUMN latency TEXT;
    ALTER TABLE runs ADD COLUMN sweep_value REAL;
    ALTER TABLE runs ADD COLUMN sweep_label TEXT;
    ALTER TABLE runs ADD COLUMN interval_count INTEGER NOT NULL DEFAULT 0;
    UPDATE runs SET interval_count = (SELECT count(*) FROM intervals WHERE run_id = runs.id);",
    // 3 → 4 (experiment identity and status): an experiment is `name` + a per-name instance
    // number handed out by the store (two runs started in the same second are two
    // experiments), with its plan and a status: `running` from its start, then `complete` or
    // `interrupted`; one killed stays `running`. Experiments stored before this say `unknown`.
    // A run ended early by a signal is stored `partial`.
    "ALTER TABLE experiments ADD COLUMN name TEXT;
    ALTER TABLE experiments ADD COLUMN instance INTEGER;
    ALTER TABLE experiments ADD COLUMN status TEXT NOT NULL DEFAULT 'unknown';
    ALTER TABLE experiments ADD COLUMN finished_at INTEGER;
    ALTER TABLE experiments ADD COLUMN plan TEXT;
    ALTER TABLE experiments ADD COLUMN pid INTEGER;
    ALTER TABLE runs ADD COLUMN partial INTEGER NOT NULL DEFAULT 0;
    UPDATE experiments SET name = CASE
        WHEN rtrim(id, '0123456789') <> id AND length(rtrim(id, '0123456789')) > 1
            AND substr(rtrim(id, '0123456789'), -1) = '-'
        THEN substr(rtrim(id, '0123456789'), 1, length(rtrim(id, '0123456789')) - 1)
        ELSE id END;
    UPDATE experiments SET instance = (SELECT count(*) FROM experiments AS e
        WHERE e.name = experiments.name AND (e.created_at < experiments.created_at
            OR (e.created_at = experiments.created_at AND e.rowid <= experiments.rowid)));
    CREATE UNIQUE INDEX experiments_name_instance ON experiments(name, instance);",
    // 4 → 5: a run's CPU profile (`lab run --profile`): the sampled event and rate, the
    // attribution (JSON), and the folded stacks, deflate-compressed.
    "CREATE TABLE run_profiles (
        run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
        event TEXT NOT NULL,
        frequency_hz INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        breakdown TEXT NOT NULL,
        folded BLOB NOT NULL
    );",
];

/// The schema version this build writes.
pub fn latest_version() -> u32 {
    // MIGRATIONS is a short constant list.
    #[allow(clippy::cast_possible_truncation)]
    let n = MIGRATIONS.len() as u32;
    n
}

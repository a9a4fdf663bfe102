//! Store tests on real database files: round trips of real iperf3 output, migrations from
//! every earlier schema version, refusal of foreign/corrupt/newer files, concurrent writers.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::*;
use crate::ExperimentStatus;
use crate::record::ExperimentRef;
use crate::record::{HostRef, Latency, LatencyBucket, RunContext, RunRecord};
use rusqlite::params;

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../linerate/tests/data/store")
        .join(name);
    std::fs::read_to_string(&path).unwrap()
}

pub(super) fn record(name: &str) -> RunRecord {
    let mut ctx = RunContext::new(RunSource::Import);
    ctx.source_path = Some(name.into());
    RunRecord::from_iperf3_text(&fixture(name), &ctx)
        .unwrap()
        .remove(0)
}

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/linerate.db");
    (dir, path)
}

#[test]
fn real_iperf3_runs_round_trip() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    for name in [
        "tcp.json",
        "tcp-p2.json",
        "udp.json",
        "reverse.json",
        "bidir.json",
    ] {
        let mut run = record(name);
        run.host = Some(HostRef {
            hash: "abc".into(),
            snapshot: Some(serde_json::json!({"kernel": "6.1"})),
        });
        run.experiment = Some(ExperimentRef {
            experiment: "e1".into(),
            variant: name.into(),
            repetition: 2,
            sweep_value: Some(3.0),
            sweep_label: Some("x".into()),
        });
        run.latency = Some(Latency {
            buckets: vec![LatencyBucket {
                upper_us: 10.0,
                count: 4,
            }],
            percentiles: vec![(50.0, 8.0)],
            mean_us: Some(7.5),
        });
        let id = store.insert_run(&run).unwrap();
        let back = store.run(id).unwrap();
        assert_eq!(back, run, "{name}");
    }
    assert_eq!(store.list(&RunFilter::default()).unwrap().len(), 5);
    assert!(store.incomplete_runs().unwrap().is_empty());
}

#[test]
fn parsed_numbers_match_the_file() {
    let run = record("tcp-p2.json");
    assert_eq!(run.mode, "tcp");
    assert_eq!(run.streams, 2);
    assert_eq!(run.direction, Direction::Send);
    let doc: serde_json::Value = serde_json::from_str(&fixture("tcp-p2.json")).unwrap();
    assert_eq!(
        run.summary.bytes_received,
        doc["end"]["sum_received"]["bytes"].as_u64().unwrap()
    );
    // Two streams and one sum per interval.
    assert_eq!(
        run.intervals.len(),
        3 * doc["intervals"].as_array().unwrap().len()
    );
    assert_eq!(
        run.throughput_series().len(),
        doc["intervals"].as_array().unwrap().len()
    );
    assert_eq!(record("reverse.json").direction, Direction::Reverse);
    assert_eq!(record("bidir.json").direction, Direction::Bidir);
    let udp = record("udp.json");
    assert_eq!(udp.mode, "udp");
    assert!(udp.summary.packets.unwrap() > 0);
}

#[test]
fn linerate_clients_own_json_is_read() {
    let run = record("linerate-client-bidir.json");
    assert_eq!(run.tool, "linerate 0.1.0");
    // linerate's "stream" mode is named by its protocol, as iperf3's runs are.
    assert_eq!(run.mode, "tcp");
    assert_eq!(run.direction, Direction::Bidir);
    assert!(run.summary.reverse_received_bps.is_some());
    assert_eq!(run.throughput_series().len(), 2);
}

#[test]
fn json_stream_gives_the_same_run_as_json() {
    let a = record("tcp.json");
    let b = record("tcp-stream.jsonl");
    assert_eq!(a.summary, b.summary);
    assert_eq!(a.intervals, b.intervals);
}

#[test]
fn filters_select_by_mode_peer_and_last() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let mut ids = Vec::new();
    for name in ["tcp.json", "udp.json", "reverse.json"] {
        ids.push(store.insert_run(&record(name)).unwrap());
    }
    let f = |mode: Option<&str>, peer: Option<&str>, last| RunFilter {
        mode: mode.map(Into::into),
        peer: peer.map(Into::into),
        last,
        experiment: None,
        since: None,
    };
    // Runs started since a time: the fixtures are from the past, so none since now.
    let since = |t| RunFilter {
        since: Some(t),
        ..RunFilter::default()
    };
    assert_eq!(store.list(&since(0)).unwrap().len(), 3);
    assert!(store.list(&since(i64::MAX)).unwrap().is_empty());
    let udp = store.list(&f(Some("UDP"), None, None)).unwrap();
    assert_eq!(udp.iter().map(|r| r.id).collect::<Vec<_>>(), vec![ids[1]]);
    assert_eq!(
        store.list(&f(None, Some("127.0.0.1"), None)).unwrap().len(),
        3
    );
    assert_eq!(
        store.list(&f(None, Some("127.0.0.2"), None)).unwrap().len(),
        0
    );
    // `_` is no wildcard, and host:port matches exactly.
    assert!(
        store
            .list(&f(None, Some("127.0.0_1"), None))
            .unwrap()
            .is_empty()
    );
    let exact = store.list(&f(None, Some("127.0.0.1:48935"), None)).unwrap();
    assert_eq!(exact.len(), 3);
    let last = store.list(&f(None, None, Some(2))).unwrap();
    assert_eq!(last.len(), 2);
    // Oldest first among the most recent.
    assert!(last[0].started_at <= last[1].started_at);
}

/// Builds a database at `version` by applying the first `version` migrations, with one run
/// written the way that version's linerate wrote it.
fn database_at_version(path: &Path, version: usize) {
    let conn = Connection::open(path).unwrap();
    for m in &MIGRATIONS[..version] {
        conn.execute_batch(m).unwrap();
    }
    conn.pragma_update(None, "application_id", APPLICATION_ID)
        .unwrap();
    conn.pragma_update(None, "user_version", version).unwrap();
    if version == 0 {
        return;
    }
    conn.execute(
        "INSERT INTO runs (started_at, stored_at, source, tool, mode, direction, streams,
            duration_s, params, summary, received_bps, document)
         VALUES (100, 101, 'import', 'iperf 3.12', 'tcp', 'send', 1, 2.0, '{}',
            '{\"bytes_sent\":10,\"bytes_received\":9,\"sent_bps\":40.0,\"received_bps\":36.0}',
            36.0, '{\"start\":{}}')",
        [],
    )
    .unwrap();
    for idx in 0..2 {
        conn.execute(
            "INSERT INTO intervals (run_id, idx, stream, start_s, end_s, bytes, bits_per_second,
                sender, omitted) VALUES (1, ?1, NULL, ?1, ?1 + 1, 5, 40.0, 1, 0)",
            [idx],
        )
        .unwrap();
    }
    if version >= 2 {
        conn.execute(
            "INSERT INTO hosts (hash, snapshot, first_seen) VALUES ('h', NULL, 1)",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO experiments (id, created_at) VALUES ('exp', 1)",
            [],
        )
        .unwrap();
        conn.execute(
            "UPDATE runs SET host_hash = 'h', experiment_id = 'exp', variant = 'base',
                repetition = 1",
            [],
        )
        .unwrap();
    }
    if version >= 3 {
        // Version 3 writes the interval count with the run.
        conn.execute("UPDATE runs SET interval_count = 2", [])
            .unwrap();
    }
}

#[test]
fn migrates_from_every_earlier_version() {
    for version in 0..MIGRATIONS.len() {
        let (_dir, path) = temp_db();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        database_at_version(&path, version);
        let mut store = Store::open(&path).unwrap();
        assert_eq!(
            store.schema_version().unwrap(),
            latest_version(),
            "from {version}"
        );
        if version > 0 {
            let run = store.run(RunId(1)).unwrap();
            assert_eq!(run.summary.received_bps, 36.0, "from {version}");
            assert_eq!(run.intervals.len(), 2, "from {version}");
            assert_eq!(run.host.is_some(), version >= 2, "from {version}");
            assert_eq!(
                run.experiment.map(|e| e.variant),
                (version >= 2).then(|| "base".to_string())
            );
            // The interval count was back-filled, so old runs count as whole.
            assert!(
                store.incomplete_runs().unwrap().is_empty(),
                "from {version}"
            );
        }
        // The migrated database takes new runs.
        store.insert_run(&record("tcp.json")).unwrap();
        drop(store);
        // Opening again is a no-op.
        assert_eq!(
            Store::open(&path).unwrap().schema_version().unwrap(),
            latest_version()
        );
    }
}

fn snapshot(path: &Path) -> (Vec<u8>, std::time::SystemTime) {
    (
        std::fs::read(path).unwrap(),
        std::fs::metadata(path).unwrap().modified().unwrap(),
    )
}

#[test]
fn newer_schema_is_refused_and_untouched() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    database_at_version(&path, MIGRATIONS.len());
    {
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let before = snapshot(&path);
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::NewerSchema { found: 99, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("schema version 99"), "{err}");
    assert_eq!(snapshot(&path), before);
}

#[test]
fn garbage_file_is_refused_and_untouched() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"this is not a database\n").unwrap();
    let before = snapshot(&path);
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::NotADatabase { .. }), "{err}");
    assert_eq!(snapshot(&path), before);
}

#[test]
fn another_programs_database_is_refused_and_untouched() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE t (x);")
        .unwrap();
    let before = snapshot(&path);
    let err = Store::open(&path).unwrap_err();
    assert!(err.to_string().contains("another program"), "{err}");
    assert_eq!(snapshot(&path), before);
}

#[test]
fn damaged_pages_are_reported_and_untouched() {
    let (_dir, path) = temp_db();
    {
        let mut store = Store::open(&path).unwrap();
        for _ in 0..20 {
            store.insert_run(&record("tcp-p2.json")).unwrap();
        }
    }
    // Checkpointed and closed: everything is in the main file. Scribble over page 2 on.
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 8192);
    for b in &mut bytes[4096..] {
        *b = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let before = snapshot(&path);
    let result = Store::open(&path).and_then(|s| s.list(&RunFilter::default()).map(|_| ()));
    let err = result.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Corrupt { .. } | StoreError::NotADatabase { .. }
        ),
        "{err}"
    );
    assert_eq!(snapshot(&path).0, before.0);
}

#[test]
fn concurrent_writers_all_land() {
    let (_dir, path) = temp_db();
    Store::open(&path).unwrap();
    let run = record("tcp-p2.json");
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut store = Store::open(&path).unwrap();
                for _ in 0..10 {
                    store.insert_run(&run).unwrap();
                }
            });
        }
    });
    let store = Store::open(&path).unwrap();
    assert_eq!(store.list(&RunFilter::default()).unwrap().len(), 40);
    assert!(store.incomplete_runs().unwrap().is_empty());
}

#[test]
fn unknown_run_is_a_clear_error() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let err = store.run(RunId(7)).unwrap_err();
    assert!(err.to_string().starts_with("no run 7 in "), "{err}");
}

fn plan() -> crate::ExperimentPlan {
    crate::ExperimentPlan {
        variants: vec!["baseline".into(), "bdp".into()],
        repetitions: 3,
    }
}

fn run_of(experiment: &str, variant: &str, repetition: u32) -> RunRecord {
    let mut run = record("tcp.json");
    run.experiment = Some(ExperimentRef {
        experiment: experiment.into(),
        variant: variant.into(),
        repetition,
        sweep_value: None,
        sweep_label: None,
    });
    run
}

#[test]
fn experiments_get_their_identity_from_the_store() {
    let (_dir, path) = temp_db();
    Store::open(&path).unwrap();
    // Eight runners start at once (same second): eight instances, none shared.
    let ids: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    let mut store = Store::open(&path).unwrap();
                    store
                        .begin_experiment("window-buffers", &plan())
                        .unwrap()
                        .id
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 8, "{ids:?}");
    let mut store = Store::open(&path).unwrap();
    let all = store.experiments().unwrap();
    assert_eq!(all.len(), 8);
    assert!(all.iter().all(|e| e.status == ExperimentStatus::Running));
    assert!(all.iter().all(|e| e.name == "window-buffers"));
    // The name is the newest instance; ids and NAME-N still work.
    let newest = store.resolve_experiment("window-buffers").unwrap();
    assert_eq!(newest.instance, 8);
    assert_eq!(newest.id, "window-buffers-8");
    assert_eq!(
        store
            .resolve_experiment("window-buffers-3")
            .unwrap()
            .instance,
        3
    );
    store
        .insert_run(&run_of("window-buffers-8", "baseline", 1))
        .unwrap();
    store
        .finish_experiment("window-buffers-8", ExperimentStatus::Interrupted)
        .unwrap();
    let e = store.resolve_experiment("window-buffers").unwrap();
    assert_eq!(e.status, ExperimentStatus::Interrupted);
    assert!(e.finished_at.is_some());
    assert_eq!(e.runs(), 1);
    assert_eq!(e.planned_runs(), Some(6));
    assert_eq!(e.plan, Some(plan()));
    // A typo lists the close names.
    let err = store
        .resolve_experiment("window-bufers")
        .unwrap_err()
        .to_string();
    assert!(err.contains("did you mean window-buffers?"), "{err}");
    // Removing takes the runs along.
    assert_eq!(store.remove_experiment("window-buffers-8").unwrap(), 1);
    assert!(store.list(&RunFilter::default()).unwrap().is_empty());
    assert_eq!(
        store.resolve_experiment("window-buffers").unwrap().instance,
        7
    );
}

#[test]
fn imported_experiments_are_complete_and_named_by_their_id() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    store.insert_run(&run_of("bufs", "baseline", 1)).unwrap();
    store.insert_run(&run_of("bufs", "bdp", 1)).unwrap();
    let e = store.resolve_experiment("bufs").unwrap();
    assert_eq!(
        (e.id.as_str(), e.name.as_str(), e.instance),
        ("bufs", "bufs", 1)
    );
    assert_eq!(e.status, ExperimentStatus::Complete);
    assert_eq!(e.variants.len(), 2);
    // A runner's experiment of the same name is the next instance, and the name's newest.
    let next = store.begin_experiment("bufs", &plan()).unwrap();
    assert_eq!(next.id, "bufs-2");
    assert_eq!(store.resolve_experiment("bufs").unwrap().id, "bufs-2");
    assert_eq!(store.resolve_experiment("bufs-1").unwrap().id, "bufs");
}

#[test]
fn legacy_experiment_ids_become_names_and_instances() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    database_at_version(&path, 3);
    let conn = Connection::open(&path).unwrap();
    for (id, at) in [
        ("window-buffers-1795567499", 10),
        ("window-buffers-1795567750", 20),
        ("v6", 30),
    ] {
        conn.execute(
            "INSERT INTO experiments (id, created_at) VALUES (?1, ?2)",
            params![id, at],
        )
        .unwrap();
    }
    drop(conn);
    let store = Store::open(&path).unwrap();
    let e = store.resolve_experiment("window-buffers").unwrap();
    assert_eq!(e.id, "window-buffers-1795567750");
    assert_eq!(e.instance, 2);
    assert_eq!(e.status, ExperimentStatus::Unknown);
    assert_eq!(store.resolve_experiment("v6").unwrap().name, "v6");
    assert_eq!(store.resolve_experiment("exp").unwrap().variants.len(), 1);
}

#[test]
fn partial_runs_are_stored_marked_partial() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let mut run = record("tcp.json");
    run.partial = true;
    let id = store.insert_run(&run).unwrap();
    assert!(store.run(id).unwrap().partial);
    assert!(store.list(&RunFilter::default()).unwrap()[0].partial);
}

#[test]
fn processes_creating_one_database_at_once_all_open_it() {
    // Two `lab run`s started together once failed with "database is locked" on a new file.
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("race-{round}.db"));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || Store::open(&path).map(|_| ()))
            })
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
    }
}

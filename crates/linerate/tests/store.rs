//! The results store through the binary: import of real iperf3 output, history, show, the
//! default location, and faults (malformed files, corrupt and newer databases, kill -9 of a
//! writer, concurrent writers).

#![forbid(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::bin::{fails_db, linerate, ok_db};
use support::{arg, tempdir};

fn data(name: &str) -> PathBuf {
    support::data("store").join(name)
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn import_then_history_and_show() {
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    let files = [
        "tcp.json",
        "tcp-p2.json",
        "udp.json",
        "reverse.json",
        "bidir.json",
        "tcp-stream.jsonl",
    ];
    let paths: Vec<PathBuf> = files.iter().map(|f| data(f)).collect();
    let mut args = vec!["import", "--json"];
    args.extend(paths.iter().map(|x| arg(x)));
    let imported = json(&ok_db(&db, &args));
    assert_eq!(imported["schema"], "linerate.import/1");
    assert_eq!(imported["runs"].as_array().unwrap().len(), 6);

    let history = json(&ok_db(&db, &["history", "--json"]));
    assert_eq!(history["schema"], "linerate.history/1");
    let runs = history["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6);
    // Oldest first; the numbers are the files' own.
    let tcp: serde_json::Value = json(&std::fs::read_to_string(data("tcp.json")).unwrap());
    let first = runs.iter().find(|r| r["id"] == 1).unwrap();
    assert_eq!(
        first["received_bps"],
        tcp["end"]["sum_received"]["bits_per_second"]
    );
    assert_eq!(first["mode"], "tcp");
    assert_eq!(
        first["peer"],
        format!("127.0.0.1:{}", tcp["start"]["connecting_to"]["port"])
    );

    // Filters.
    let udp = json(&ok_db(&db, &["history", "--json", "--mode", "udp"]));
    assert_eq!(udp["runs"].as_array().unwrap().len(), 1);
    assert_eq!(
        json(&ok_db(&db, &["history", "--json", "--last", "2"]))["runs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        json(&ok_db(&db, &["history", "--json", "--peer", "198.18.0.9"]))["runs"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    let csv = ok_db(&db, &["history", "--csv"]);
    assert_eq!(csv.lines().count(), 7);
    assert!(csv.starts_with("id,started,source,tool,mode,direction,peer,"));
    let table = ok_db(&db, &["history"]);
    assert!(table.contains("400.19 Mbit/s"), "{table}");

    // show: the text rendering and the iperf3-schema JSON.
    let text = ok_db(&db, &["show", "2"]);
    assert!(text.contains("[  5]") && text.contains("[  7]"), "{text}");
    assert!(text.contains("2 streams"), "{text}");
    let shown = json(&ok_db(&db, &["show", "1", "--json"]));
    assert_eq!(shown["end"], tcp["end"]);
    assert_eq!(shown["intervals"], tcp["intervals"]);
    assert_eq!(shown["linerate"]["schema"], "linerate.run/1");
    assert_eq!(shown["linerate"]["run_id"], 1);
    // The json-stream file holds the same test as tcp.json.
    let streamed = json(&ok_db(&db, &["show", "6", "--json"]));
    assert_eq!(streamed["end"], tcp["end"]);

    let err = fails_db(&db, &["show", "99"]);
    assert!(err.contains("no run 99 in"), "{err}");
    let err = fails_db(&db, &["show", "abc"]);
    assert!(err.contains("`abc` is not a run id"), "{err}");
}

#[test]
fn default_location_and_environment() {
    let dir = tempdir();
    let out = linerate()
        .args(["import", arg(&data("tcp.json"))])
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(dir.path().join("linerate/linerate.db").exists());
    // HOME is the fallback.
    let home = tempdir();
    let out = linerate()
        .args(["import", arg(&data("tcp.json"))])
        .env_remove("XDG_DATA_HOME")
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        home.path()
            .join(".local/share/linerate/linerate.db")
            .exists()
    );
    // An empty LINERATE_DB is refused, not taken for SQLite's throw-away database.
    let out = linerate()
        .args(["history", "--json"])
        .env("LINERATE_DB", "")
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--db <PATH>"));
    // LINERATE_DB wins over both.
    let chosen = dir.path().join("chosen.db");
    let out = linerate()
        .args(["history", "--json"])
        .env("LINERATE_DB", &chosen)
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let listed = json(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(listed["database"], arg(&chosen));
    assert_eq!(listed["runs"].as_array().unwrap().len(), 0);
}

#[test]
fn malformed_imports_name_the_file_and_the_fault_and_store_nothing() {
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let full = std::fs::read_to_string(data("tcp.json")).unwrap();
    let truncated = write("truncated.json", &full[..full.len() / 2]);
    let err = fails_db(&db, &["import", arg(&data("udp.json")), arg(&truncated)]);
    assert!(
        err.contains("truncated.json is not usable iperf3 output: line "),
        "{err}"
    );
    assert!(err.contains("not JSON"), "{err}");

    let mut doc = json(&full);
    doc["end"]["sum_received"]["bits_per_second"] = serde_json::json!("fast");
    let wrong = write("wrong.json", &doc.to_string());
    let err = fails_db(&db, &["import", arg(&wrong)]);
    assert!(
        err.contains("wrong.json is not usable iperf3 output: end.sum_received.bits_per_second: expected a number, found the string \"fast\""),
        "{err}"
    );

    let refused = fails_db(&db, &["import", arg(&data("refused.json"))]);
    assert!(refused.contains("refused.json"), "{refused}");
    assert!(refused.contains("unable to connect to server"), "{refused}");

    let stream = std::fs::read_to_string(data("tcp-stream.jsonl")).unwrap();
    let unfinished: String = stream.lines().take(3).map(|l| format!("{l}\n")).collect();
    let unfinished = write("unfinished.jsonl", &unfinished);
    let err = fails_db(&db, &["import", arg(&unfinished)]);
    assert!(
        err.contains("unfinished.jsonl") && err.contains("no \"end\" event"),
        "{err}"
    );

    let garbage_line = write(
        "bad-line.jsonl",
        &format!("{}\n{{oops\n", stream.lines().next().unwrap()),
    );
    let err = fails_db(&db, &["import", arg(&garbage_line)]);
    assert!(
        err.contains("bad-line.jsonl") && err.contains("line 2"),
        "{err}"
    );

    let empty = write("empty.json", "");
    assert!(
        fails_db(&db, &["import", arg(&empty)])
            .contains("empty.json is not usable iperf3 output: file: is empty")
    );
    let missing = fails_db(&db, &["import", arg(&dir.path().join("nope.json"))]);
    assert!(
        missing.contains("cannot read") && missing.contains("nope.json"),
        "{missing}"
    );

    // Nothing was stored by any failed import, not even udp.json from the first.
    assert_eq!(
        json(&ok_db(&db, &["history", "--json"]))["runs"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

fn fingerprint(path: &Path) -> (Vec<u8>, std::time::SystemTime) {
    (
        std::fs::read(path).unwrap(),
        std::fs::metadata(path).unwrap().modified().unwrap(),
    )
}

#[test]
fn corrupt_foreign_and_newer_databases_are_refused_untouched() {
    let dir = tempdir();
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, "not sqlite at all\n".repeat(100)).unwrap();
    let before = fingerprint(&garbage);
    let err = fails_db(&garbage, &["import", arg(&data("tcp.json"))]);
    assert!(
        err.contains("garbage.db: not a linerate results database"),
        "{err}"
    );
    assert!(err.contains("left untouched"), "{err}");
    assert_eq!(fingerprint(&garbage), before);

    let newer = dir.path().join("newer.db");
    ok_db(&newer, &["import", arg(&data("tcp.json"))]);
    {
        let conn = rusqlite::Connection::open(&newer).unwrap();
        conn.pragma_update(None, "user_version", 1000).unwrap();
        conn.pragma_update(None, "journal_mode", "DELETE").unwrap();
    }
    let before = fingerprint(&newer);
    for args in [
        &["history"][..],
        &["import", arg(&data("udp.json"))][..],
        &["show", "1"][..],
    ] {
        let err = fails_db(&newer, args);
        assert!(
            err.contains("schema version 1000, newer than this linerate knows"),
            "{err}"
        );
    }
    assert_eq!(fingerprint(&newer), before);

    // Damaged pages: the header is fine, the data is not.
    let damaged = dir.path().join("damaged.db");
    let files: Vec<PathBuf> = (0..8).map(|_| data("tcp-p2.json")).collect();
    let mut args = vec!["import"];
    args.extend(files.iter().map(|f| arg(f)));
    ok_db(&damaged, &args);
    let mut bytes = std::fs::read(&damaged).unwrap();
    for b in &mut bytes[4096..] {
        *b ^= 0x5A;
    }
    std::fs::write(&damaged, &bytes).unwrap();
    let before = fingerprint(&damaged);
    let err = fails_db(&damaged, &["history"]);
    assert!(err.contains("damaged.db"), "{err}");
    assert!(
        err.contains("corrupt") || err.contains("not a linerate results database"),
        "{err}"
    );
    assert_eq!(fingerprint(&damaged).0, before.0);
}

#[test]
fn older_schema_is_migrated_through_the_binary() {
    let dir = tempdir();
    let db = dir.path().join("v1.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(linerate_store::schema::MIGRATIONS[0])
            .unwrap();
        conn.pragma_update(
            None,
            "application_id",
            linerate_store::schema::APPLICATION_ID,
        )
        .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO runs (started_at, stored_at, source, tool, mode, direction, streams,
                duration_s, params, summary, received_bps, document)
             VALUES (1700000000, 1, 'import', 'iperf 3.9', 'tcp', 'send', 1, 10.0, '{}',
                '{\"bytes_sent\":1,\"bytes_received\":1,\"sent_bps\":9.4e9,\"received_bps\":9.4e9}',
                9.4e9, '{}')",
            [],
        )
        .unwrap();
    }
    let listed = json(&ok_db(&db, &["history", "--json"]));
    assert_eq!(listed["runs"][0]["received_bps"], 9.4e9);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let v: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(
        v,
        i64::try_from(linerate_store::schema::MIGRATIONS.len()).unwrap()
    );
}

/// An iperf3-shaped document with `intervals` intervals of two streams each, built from the
/// real tcp-p2.json by repeating its intervals.
fn big_document(intervals: usize) -> String {
    let mut doc = json(&std::fs::read_to_string(data("tcp-p2.json")).unwrap());
    let one = doc["intervals"][0].clone();
    doc["intervals"] = serde_json::Value::Array(vec![one; intervals]);
    doc.to_string()
}

fn count_runs(db: &Path) -> usize {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    conn.query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0))
        .map(|n| usize::try_from(n).unwrap())
        .unwrap_or(0)
}

#[test]
fn kill_9_mid_write_loses_only_the_run_in_progress() {
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    let big = dir.path().join("big.json");
    std::fs::write(&big, big_document(6_000)).unwrap();
    ok_db(&db, &["history"]); // create the database first
    let files = 6;
    for attempt in 0..2 {
        let before = count_runs(&db);
        let mut args: Vec<String> = vec!["import".into()];
        args.extend((0..files).map(|_| arg(&big).to_owned()));
        args.extend(["--db".into(), arg(&db).to_owned()]);
        let mut child = linerate()
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Time one whole insert (between the first and second run landing), then kill half
        // way through the third.
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut first = None;
        let per_run = loop {
            assert!(Instant::now() < deadline, "the import made no progress");
            let n = count_runs(&db) - before;
            if n >= 1 && first.is_none() {
                first = Some(Instant::now());
            }
            if n >= 2 {
                break first.map_or(Duration::from_millis(100), |t| t.elapsed());
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        std::thread::sleep(per_run / 2);
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        assert!(
            !status.success(),
            "attempt {attempt}: the import finished before the kill"
        );
        let store = linerate_store::Store::open(&db).unwrap();
        assert_eq!(store.integrity_check().unwrap(), "ok");
        assert!(
            store.incomplete_runs().unwrap().is_empty(),
            "a half-written run survived"
        );
        let landed = count_runs(&db) - before;
        assert!(
            (2..files).contains(&landed),
            "attempt {attempt}: {landed} runs landed"
        );
        // Every run that landed is whole: 6 000 intervals × (2 streams + sum).
        for listing in store.list(&linerate_store::RunFilter::default()).unwrap() {
            assert_eq!(store.run(listing.id).unwrap().intervals.len(), 18_000);
        }
    }
    // The database still takes runs.
    ok_db(&db, &["import", arg(&data("tcp.json"))]);
}

#[test]
fn concurrent_writers_both_land() {
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    let spawn = |file: &str| {
        let mut args: Vec<String> = vec!["import".into()];
        args.extend((0..10).map(|_| arg(&data(file)).to_owned()));
        args.extend(["--db".into(), arg(&db).to_owned()]);
        linerate()
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Both start on a database that does not exist yet: creation and migration race too.
    let a = spawn("tcp.json");
    let b = spawn("udp.json");
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let listed = json(&ok_db(&db, &["history", "--json"]));
    let runs = listed["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 20);
    assert_eq!(runs.iter().filter(|r| r["mode"] == "udp").count(), 10);
}

#[test]
fn text_renderings() {
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    let files = ["tcp-p2.json", "udp.json", "bidir.json"];
    let paths: Vec<PathBuf> = files.iter().map(|f| data(f)).collect();
    let mut args = vec!["import"];
    args.extend(paths.iter().map(|x| arg(x)));
    let data_dir = std::fs::canonicalize(data("")).unwrap();
    let anonymise = |s: String| s.replace(arg(&data_dir), "<data>");
    insta::assert_snapshot!("import", anonymise(ok_db(&db, &args)));
    insta::assert_snapshot!("history", ok_db(&db, &["history"]));
    insta::assert_snapshot!("history_csv", ok_db(&db, &["history", "--csv"]));
    for id in ["1", "2", "3"] {
        insta::assert_snapshot!(format!("show_{id}"), anonymise(ok_db(&db, &["show", id])));
    }
}

#[test]
fn import_reads_standard_input() {
    use std::io::Write;
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    let mut child = linerate()
        .args(["import", "-", "--db", arg(&db)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let text = std::fs::read(data("tcp-stream.jsonl")).unwrap();
    child.stdin.take().unwrap().write_all(&text).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("-: stored as run 1 (tcp send"));
    let shown = json(&ok_db(&db, &["show", "1", "--json"]));
    assert_eq!(shown["linerate"]["source_path"], "(stdin)");
}

#[test]
fn reading_commands_never_create_a_database() {
    let dir = tempdir();
    // A mistyped --db: nothing may appear there, not even the directory.
    let db = dir.path().join("typo/runs.db");
    let listed = json(&ok_db(&db, &["history", "--json"]));
    assert_eq!(listed["runs"].as_array().unwrap().len(), 0);
    assert!(ok_db(&db, &["history"]).contains("No runs in"));
    for args in [
        &["show", "1"][..],
        &["compare", "1", "2"],
        &["report", "1", "-o", arg(&dir.path().join("r.html"))],
    ] {
        let err = fails_db(&db, args);
        assert!(err.contains("no results database at"), "{args:?}: {err}");
        assert!(err.contains(arg(&db)), "{err}");
    }
    // --last 0 asks for nothing: a usage error, not an empty answer.
    for args in [
        &["history", "--last", "0"][..],
        &["report", "--last", "0", "-o", "x.html"],
    ] {
        let err = fails_db(&db, args);
        assert!(err.contains("--last"), "{args:?}: {err}");
    }
    assert!(!dir.path().join("typo").exists());
    assert!(!dir.path().join("r.html").exists());
    // SQLite's own message is given once, not repeated by the error chain.
    let err = fails_db(
        Path::new("/proc/sys/lr-rb-no.db"),
        &["import", arg(&data("tcp.json"))],
    );
    assert_eq!(
        err.matches("unable to open database file").count(),
        1,
        "{err}"
    );
}

#[test]
fn control_characters_from_an_imported_file_do_not_reach_the_terminal() {
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    let mut doc = json(&std::fs::read_to_string(data("tcp.json")).unwrap());
    doc["start"]["connecting_to"]["host"] = "\u{1b}[31mpeer".into();
    doc["start"]["version"] = "iperf 3.12\u{1b}[2J".into();
    let file = dir.path().join("hostile.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    ok_db(&db, &["import", arg(&file)]);
    for args in [&["history"][..], &["show", "1"]] {
        let text = ok_db(&db, args);
        assert!(!text.contains('\u{1b}'), "{args:?}: {text:?}");
        assert!(text.contains("\\u{1b}[31mpeer"), "{args:?}: {text}");
    }
}

//! `linerate logdist` end to end: the real binary over logs generated in a temp dir with known
//! distributions.

#![forbid(unsafe_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::Value;

mod support;

use support::bin::{BIN, isolate, linerate, with_closed_stdout};
use support::rng::Rng;
use support::{program, require, tempdir};

/// Runs `linerate logdist ARGS`.
fn run(args: &[&str]) -> Output {
    linerate()
        .arg("logdist")
        .args(args)
        .output()
        .expect("runs the binary")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let o = run(&all);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("valid JSON")
}

/// An nginx combined line with `$request_time $upstream_response_time` appended.
fn nginx(i: u64, status: u16, method: &str, path: &str, ms: u64, upstream: &str) -> String {
    format!(
        "198.18.0.{} - - [10/Oct/2026:13:{:02}:{:02} +0000] \"{method} {path} HTTP/1.1\" {status} {} \
         \"https://example.com/\" \"Mozilla/5.0 (X11; Linux x86_64)\" {}.{:03} {upstream}\n",
        i % 250,
        (i / 60) % 60,
        i % 60,
        1000 + i,
        ms / 1000,
        ms % 1000
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write log");
    path
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 temp path")
}

fn percentile(report: &Value, pct: f64) -> f64 {
    report["percentiles"]
        .as_array()
        .expect("percentiles")
        .iter()
        .find(|v| v["percentile"].as_f64() == Some(pct))
        .and_then(|v| v["seconds"].as_f64())
        .expect("percentile present")
}

/// 1..=1000 ms, each once, in a scrambled order.
fn one_to_thousand_ms() -> String {
    let mut order: Vec<u64> = (1..=1000).collect();
    let mut rng = Rng(5);
    for i in (1..order.len()).rev() {
        order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    order
        .iter()
        .enumerate()
        .map(|(i, &ms)| nginx(i as u64, 200, "GET", "/a", ms, "0.001"))
        .collect()
}

#[test]
fn exact_mode_gives_exact_nearest_rank_percentiles() {
    let dir = tempdir();
    let log = write(dir.path(), "access.log", &one_to_thousand_ms());
    let r = json(&[p(&log), "--exact"]);
    assert_eq!(r["schema"], "linerate.logdist/1");
    assert_eq!(r["mode"], "exact");
    assert_eq!(r["count"], 1000);
    assert_eq!(r["inputs"][0]["layout"]["format"], "nginx");
    assert_eq!(r["inputs"][0]["layout"]["detected"], true);
    for (pct, want) in [
        (50.0, 0.5),
        (90.0, 0.9),
        (95.0, 0.95),
        (99.0, 0.99),
        (99.9, 0.999),
        (100.0, 1.0),
    ] {
        assert_eq!(percentile(&r, pct), want, "p{pct}");
    }
    assert_eq!(r["mean_s"], 0.5005);
    assert_eq!(r["min_s"], 0.001);
    // 1..=99 ms are under 100 ms
    assert_eq!(r["under_threshold"], 99);
    assert_eq!(r["under_threshold_share"], 0.099);
    let bins = r["histogram"]["bins"].as_array().expect("bins");
    assert_eq!(bins[0]["count"], 99);
    assert_eq!(bins[1]["count"], 100);
    assert_eq!(bins[9]["count"], 100); // 900..=999
    assert_eq!(bins[10]["count"], 1); // 1000 ms
}

#[test]
fn histogram_mode_is_within_the_stated_precision() {
    // Apache %D (microseconds), log-uniform 50 µs .. 20 s, so many values share buckets.
    let mut rng = Rng(11);
    let mut values = Vec::new();
    let mut text = String::new();
    for i in 0..40_000u64 {
        let us = (50.0 * 400_000f64.powf(rng.unit())) as u64;
        values.push(us);
        text.push_str(&format!(
            "198.18.1.{} - - [10/Oct/2026:13:55:{:02} +0000] \"GET /x HTTP/1.1\" 200 512 \"-\" \"curl/8\" {us}\n",
            i % 200,
            i % 60
        ));
    }
    values.sort_unstable();
    let dir = tempdir();
    let log = write(dir.path(), "apache.log", &text);
    let r = json(&[p(&log)]);
    assert_eq!(r["inputs"][0]["layout"]["format"], "apache-us");
    assert_eq!(r["mode"], "histogram");
    let precision = r["relative_precision"].as_f64().expect("precision");
    assert!(precision > 0.0 && precision <= 1.0 / 2048.0, "{precision}");
    for pct in [50.0, 90.0, 95.0, 99.0, 99.9, 100.0] {
        let rank = ((pct / 100.0 * values.len() as f64) - 1e-9).ceil() as usize;
        let exact = values[rank.max(1) - 1] as f64 / 1e6;
        let got = percentile(&r, pct);
        assert!(
            (got - exact).abs() <= exact * precision + 1e-12,
            "p{pct}: {got} vs exact {exact}"
        );
    }
    assert_eq!(
        r["max_s"].as_f64(),
        Some(values[values.len() - 1] as f64 / 1e6)
    );
    // and --exact agrees exactly
    let e = json(&[p(&log), "--exact"]);
    let rank = values.len() / 2;
    assert_eq!(percentile(&e, 50.0), values[rank - 1] as f64 / 1e6);
}

/// A log in which `fast` of 10 000 requests take under 100 ms, the rest 0.1 .. 6 s.
fn calomel_log(fast: u64, seed: u64) -> String {
    let mut rng = Rng(seed);
    (0..10_000)
        .map(|i| {
            let ms = if i < fast {
                rng.next() % 100
            } else {
                100 + rng.next() % 5900
            };
            nginx(i, 200, "GET", "/img.jpg", ms, "-")
        })
        .collect()
}

#[test]
fn calomel_before_and_after_shares_and_the_comparison() {
    let dir = tempdir();
    let before = write(dir.path(), "before.log", &calomel_log(7142, 1));
    let after = write(dir.path(), "after.log", &calomel_log(9531, 2));
    let o = run(&[p(&before)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("71.42 % of requests under 100 ms (7142 of 10000)"),
        "{text}"
    );
    assert!(text.contains("0 - 100 ms"), "{text}");

    let o = run(&["--compare", p(&before), p(&after)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("71.42 %"), "{text}");
    assert!(text.contains("95.31 %"), "{text}");
    assert!(text.contains("+23.89 points"), "{text}");
    assert!(text.contains("Kolmogorov-Smirnov"), "{text}");
    assert!(
        text.contains("differ at 95 % confidence: AFTER is faster"),
        "{text}"
    );

    let c = json(&["--compare", p(&before), p(&after)]);
    assert_eq!(c["schema"], "linerate.logdist.compare/1");
    assert_eq!(c["share_before"], 0.7142);
    assert_eq!(c["share_after"], 0.9531);
    let d = c["test"]["d"].as_f64().expect("d");
    assert!((d - 0.2389).abs() < 0.01, "{d}");
    assert!(c["test"]["p_value"].as_f64().expect("p") < 1e-100);
    assert_eq!(c["test"]["differs"], true);
    assert_eq!(c["shifts"].as_array().map(Vec::len), Some(6));
    let o = run(&["--compare", p(&before), p(&after), "--fail-on-difference"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn same_distribution_gives_no_difference_proven() {
    let dir = tempdir();
    let a = write(dir.path(), "a.log", &calomel_log(7142, 3));
    let b = write(dir.path(), "b.log", &calomel_log(7142, 4));
    let o = run(&["--compare", p(&a), p(&b)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("no difference proven at 95 % confidence"),
        "{}",
        stdout(&o)
    );
    let c = json(&["--compare", p(&a), p(&b)]);
    assert!(c["test"]["p_value"].as_f64().expect("p") > 0.05);
    assert_eq!(c["test"]["differs"], false);
    let o = run(&["--compare", p(&a), p(&b), "--fail-on-difference"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn ks_p_value_matches_a_known_value() {
    // Two samples (in ms, shifted by 300 to be positive) whose KS statistic is 0.23 with
    // n = 25 and 20; the asymptotic p-value with Stephens' correction is 0.54112 (reference:
    // scipy.stats.kstwobign.sf((sqrt(ne) + 0.12 + 0.11/sqrt(ne)) * 0.23), ne = 500/45).
    let a = [
        61, 29, 6, 59, -173, -74, 51, -56, 39, 164, 5, -6, 64, -82, 37, 177, 109, -128, 236, 131,
        105, -32, -40, 106, -247,
    ];
    let b = [
        220, 166, 138, 20, 36, 0, 96, 156, 44, 150, -30, 66, 231, 329, -27, -37, 38, 70, 52, -71,
    ];
    let log = |v: &[i64]| -> String {
        v.iter()
            .enumerate()
            .map(|(i, &x)| nginx(i as u64, 200, "GET", "/", (x + 300) as u64, "-"))
            .collect()
    };
    let dir = tempdir();
    let fa = write(dir.path(), "a.log", &log(&a));
    let fb = write(dir.path(), "b.log", &log(&b));
    let c = json(&["--compare", p(&fa), p(&fb), "--exact"]);
    let t = &c["test"];
    assert!((t["d"].as_f64().expect("d") - 0.23).abs() < 1e-12, "{t}");
    let pv = t["p_value"].as_f64().expect("p");
    assert!((pv - 0.541_124_553_7).abs() < 1e-6, "{pv}");
    assert_eq!(t["differs"], false);
}

#[test]
fn bad_lines_are_counted_by_reason_with_line_numbers() {
    let good = nginx(1, 200, "GET", "/", 42, "0.040");
    let mut text = String::new();
    text.push_str(&good); // 1
    text.push_str(&good[..60]); // 2: truncated
    text.push('\n');
    text.push_str(&nginx(2, 200, "GET", "/", 42, "-")); // 3 (fine for request_time)
    text.push_str("{\"request_time\": 0.1}\n"); // 4: other format
    text.push_str("\u{0}\u{1}\u{2}garbage\u{7f}\n"); // 5: binary
    text.push('\n'); // 6: empty
    text.push_str(&good.replace('\n', "\r\n")); // 7: CRLF, fine
    text.push_str(&good.replace(" 0.042 0.040", "")); // 8: no time field
    text.push_str(&good.replace("0.042", "-")); // 9: non-numeric
    text.push_str(&good[..good.len() - 1]); // 10: last line without newline
    let dir = tempdir();
    let log = write(dir.path(), "mixed.log", &text);
    let r = json(&[p(&log), "--format", "nginx"]);
    assert_eq!(r["lines"], 10);
    assert_eq!(r["count"], 4);
    assert_eq!(r["skipped"], 6);
    assert_eq!(r["crlf_lines"], 1);
    let name = p(&log);
    let reasons: Vec<(String, u64, Vec<String>)> = r["skipped_by_reason"]
        .as_array()
        .expect("reasons")
        .iter()
        .map(|s| {
            (
                s["reason"].as_str().unwrap_or("").to_owned(),
                s["count"].as_u64().unwrap_or(0),
                s["first_lines"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
            )
        })
        .collect();
    let want = |reason: &str, line: u64| (reason.to_owned(), 1, vec![format!("{name}:{line}")]);
    assert_eq!(
        reasons,
        vec![
            want("empty", 6),
            want("binary", 5),
            want("other-format", 4),
            want("truncated", 2),
            want("no-time", 8),
            want("non-numeric-time", 9),
        ]
    );
    // the upstream column: line 3 has "-", line 9 has a time there (its request time is "-")
    let up = json(&[
        p(&log),
        "--format",
        "nginx",
        "--field",
        "upstream_response_time",
    ]);
    assert_eq!(up["count"], 4);
    // the human report lists them too
    let o = run(&[p(&log)]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(text.contains("truncated (fields missing)"), "{text}");
    assert!(text.contains(&format!("{name}:2")), "{text}");
}

#[test]
fn nothing_parsing_is_an_error_naming_the_first_bad_line() {
    let dir = tempdir();
    let good = nginx(1, 200, "GET", "/", 42, "-");
    let log = write(
        dir.path(),
        "bad.log",
        &format!("\n{}", good.replace("0.042", "n/a")),
    );
    let o = run(&[p(&log), "--format", "nginx"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("no line gives a response time"), "{err}");
    assert!(err.contains("bad.log:1"), "{err}");
    // auto-detection of garbage says what it saw
    let junk = write(dir.path(), "junk.log", "hello\nworld\n");
    let o = run(&[p(&junk)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot detect the log format"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("hello"), "{}", stderr(&o));
    // a missing file names the file
    let o = run(&[p(&dir.path().join("nope.log"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nope.log"), "{}", stderr(&o));
}

fn gzip(text: &str) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(text.as_bytes()).expect("compress");
    enc.finish().expect("finish")
}

#[test]
fn gzip_whole_and_truncated_and_stdin() {
    let dir = tempdir();
    let text = calomel_log(7142, 9);
    let gz = gzip(&text);
    let whole = dir.path().join("access.log.gz");
    std::fs::write(&whole, &gz).expect("write");
    let r = json(&[p(&whole), "--exact"]);
    assert_eq!(r["count"], 10_000);
    assert_eq!(r["inputs"][0]["gzip"], true);
    assert_eq!(r["under_threshold"], 7142);

    let cut = dir.path().join("cut.log.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).expect("write");
    let o = run(&[p(&cut)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text_out = stdout(&o);
    assert!(text_out.contains("gzip stream ends early"), "{text_out}");
    let r = json(&[p(&cut)]);
    let lines = r["inputs"][0]["lines"].as_u64().expect("lines");
    assert!(lines > 100 && lines < 10_000, "{lines}");
    assert!(r["inputs"][0]["stream_error"].is_string());
    assert!(
        text_out.contains(&format!("{lines} lines were read")),
        "{text_out}"
    );

    let mut child = linerate()
        .args(["logdist", "-", "--json", "--exact"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || stdin.write_all(&gz));
    let out = child.wait_with_output().expect("wait");
    feeder.join().expect("join").expect("feed");
    let r: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(r["count"], 10_000);
    assert_eq!(r["inputs"][0]["name"], "<stdin>");
}

#[test]
fn filters_status_method_path_time_and_last() {
    let mut text = String::new();
    // 0..100: minute 0..1; statuses cycle 200/304/404/500; methods GET/POST; paths .css/.js
    for i in 0..100u64 {
        let status = [200, 304, 404, 500][(i % 4) as usize];
        let method = if i % 2 == 0 { "GET" } else { "POST" };
        let path = if i % 5 == 0 { "/a.css" } else { "/b.js" };
        text.push_str(&nginx(i, status, method, path, 10 + i, "-"));
    }
    let dir = tempdir();
    let log = write(dir.path(), "f.log", &text);
    let count = |extra: &[&str]| {
        let mut args = vec![p(&log), "--exact"];
        args.extend_from_slice(extra);
        json(&args)["count"].as_u64().expect("count")
    };
    assert_eq!(count(&[]), 100);
    assert_eq!(count(&["--status", "200"]), 25);
    assert_eq!(count(&["--status", "2xx,3xx"]), 50);
    assert_eq!(count(&["--status", "5xx"]), 25);
    assert_eq!(count(&["--method", "POST"]), 50);
    assert_eq!(count(&["--method", "GET,POST", "--status", "304"]), 25);
    assert_eq!(count(&["--path-regex", r"\.css$"]), 20);
    // seconds 0..59 of 13:00 then 13:01:00..13:01:39
    assert_eq!(count(&["--since", "2026-10-10T13:01:00Z"]), 40);
    assert_eq!(count(&["--until", "10/Oct/2026:15:00:30 +0200"]), 30);
    assert_eq!(
        count(&["--since", "2026-10-10 13:00:10", "--until", "@1791637220"]),
        10
    );
    assert_eq!(count(&["--last", "10"]), 10);
    let last = json(&[p(&log), "--exact", "--last", "10"]);
    assert_eq!(last["min_s"], 0.1); // lines 91..=100 have 100..=109 ms
    assert_eq!(count(&["--last", "10", "--status", "200"]), 2);
    let filtered = json(&[p(&log), "--status", "200"]);
    assert_eq!(filtered["filtered_out"], 75);
    // everything filtered out is an error that says so
    let o = run(&[p(&log), "--method", "DELETE"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("all filtered out"), "{}", stderr(&o));
}

#[test]
fn json_lines_and_regex_formats() {
    let dir = tempdir();
    let mut text = String::new();
    for i in 1..=100u64 {
        text.push_str(&format!(
            "{{\"status\":{},\"request\":\"GET /{i} HTTP/1.1\",\"timing\":{{\"total_ms\":{i}}}}}\n",
            if i % 10 == 0 { 500 } else { 200 }
        ));
    }
    let log = write(dir.path(), "app.jsonl", &text);
    let r = json(&[
        p(&log),
        "--field",
        "timing.total_ms",
        "--unit",
        "ms",
        "--exact",
    ]);
    assert_eq!(r["inputs"][0]["layout"]["format"], "json");
    assert_eq!(r["count"], 100);
    assert_eq!(percentile(&r, 50.0), 0.05);
    let ok = json(&[
        p(&log),
        "--format",
        "json",
        "--field",
        "timing.total_ms",
        "--unit",
        "ms",
        "--status",
        "200",
    ]);
    assert_eq!(ok["count"], 90);

    let mut text = String::new();
    for i in 1..=50u64 {
        text.push_str(&format!("ts={i} code=200 took={i}.5ms\n"));
    }
    let log = write(dir.path(), "custom.log", &text);
    let r = json(&[
        p(&log),
        "--regex",
        r"code=(?P<status>\d+) took=(?P<time>[0-9.]+)ms",
        "--unit",
        "ms",
        "--exact",
    ]);
    assert_eq!(r["inputs"][0]["layout"]["format"], "regex");
    assert_eq!(r["count"], 50);
    assert_eq!(r["max_s"], 0.0505);
    let o = run(&[p(&log), "--regex", "(?P<nope>x)"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no group named `time`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn svg_and_png_charts_are_written() {
    let dir = tempdir();
    let a = write(dir.path(), "a.log", &calomel_log(7142, 1));
    let b = write(dir.path(), "b.log", &calomel_log(9531, 2));
    let svg = dir.path().join("dist.svg");
    let png = dir.path().join("dist.png");
    let o = run(&[p(&a), "--svg", p(&svg), "--png", p(&png)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).expect("svg written");
    assert!(text.starts_with("<svg"), "{}", &text[..50.min(text.len())]);
    assert!(text.contains("Cumulative share"));
    let bytes = std::fs::read(&png).expect("png written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let cmp = dir.path().join("cmp.svg");
    let o = run(&["--compare", p(&a), p(&b), "--svg", p(&cmp)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&cmp).expect("svg written");
    assert!(text.contains("BEFORE") && text.contains("AFTER"));
    // no temporary files are left behind
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn bad_arguments_exit_2_with_the_flag_named() {
    let dir = tempdir();
    let log = write(dir.path(), "a.log", &calomel_log(10, 1));
    for (args, needle) in [
        (vec!["--bin", "0"], "--bin"),
        (vec!["--max", "50ms"], "--max"),
        (vec!["--status", "6xx"], "--status"),
        (vec!["--since", "yesterday"], "yesterday"),
        (vec!["--unit", "fortnights"], "--unit"),
        (vec!["--format", "nginx", "--field", "bytes"], "--field"),
        (vec!["--path-regex", "("], "--path-regex"),
        (vec!["--png", "x.gif"], ".png"),
        (vec!["--last", "0"], "--last"),
        (vec!["--threads", "0"], "--threads"),
    ] {
        let mut all = vec![p(&log)];
        all.extend(args.iter().copied());
        let o = run(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn human_report_snapshot() {
    let mut text = String::new();
    for (i, ms) in [5u64, 40, 80, 95, 120, 250, 260, 900, 1500, 7000]
        .iter()
        .enumerate()
    {
        text.push_str(&nginx(i as u64, 200, "GET", "/", *ms, "-"));
    }
    text.push_str("truncated line\n");
    let dir = tempdir();
    let log = write(dir.path(), "small.log", &text);
    let o = linerate()
        .current_dir(dir.path())
        .args(["logdist", "small.log", "--max", "2s", "--exact"])
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", stderr(&o));
    insta::assert_snapshot!(stdout(&o));
    let _ = log;
}

#[test]
fn parallel_and_sequential_parsing_agree() {
    // ~3.5 MB: several chunks, with bad lines spread over them
    let mut rng = Rng(21);
    let mut text = String::new();
    for i in 0..20_000u64 {
        let line = nginx(i, 200, "GET", "/p", rng.next() % 3000, "0.001");
        match i % 997 {
            5 => text.push_str(&line[..50]),
            6 => text.push_str("\u{0}\u{0}"),
            7 => text.push_str(
                line.trim_end()
                    .replace("0.001", "-")
                    .replace("200 ", "500 ")
                    .as_str(),
            ),
            _ => text.push_str(line.trim_end()),
        }
        text.push_str(if i % 3 == 0 { "\r\n" } else { "\n" });
    }
    let dir = tempdir();
    let log = write(dir.path(), "big.log", &text);
    let gz = dir.path().join("cut.log.gz");
    let packed = gzip(&text);
    std::fs::write(&gz, &packed[..packed.len() * 2 / 3]).expect("write");
    for (file, extra) in [
        (&log, vec![]),
        (
            &log,
            vec!["--field", "upstream_response_time", "--status", "2xx"],
        ),
        (&gz, vec![]),
    ] {
        let mut one = vec![p(file), "--threads", "1"];
        one.extend(extra.iter().copied());
        let mut four = vec![p(file), "--threads", "4"];
        four.extend(extra.iter().copied());
        let (a, b) = (json(&one), json(&four));
        assert_eq!(a, b, "{extra:?}");
        assert!(a["skipped"].as_u64().expect("skipped") > 0);
        assert!(a["count"].as_u64().expect("count") > 5000);
    }
    let r = json(&[p(&log)]);
    assert_eq!(r["lines"], 20_000);
    assert_eq!(r["crlf_lines"], 6667);
    let truncated = r["skipped_by_reason"]
        .as_array()
        .expect("reasons")
        .iter()
        .find(|s| s["reason"] == "truncated")
        .expect("truncated lines");
    assert_eq!(truncated["count"], 21);
    assert_eq!(truncated["first_lines"][0], format!("{}:6", p(&log)));
    assert_eq!(truncated["first_lines"][1], format!("{}:1003", p(&log)));
}

#[test]
fn comparison_in_histogram_mode_sees_nothing_below_the_precision() {
    // 100 000 µs vs 100 005 µs: one 65.5 µs-wide bucket holds both (0.005 % apart)
    let log = |us: u64| -> String {
        (0..200u64)
            .map(|i| {
                format!(
                    "198.18.0.1 - - [10/Oct/2026:13:55:{:02} +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"-\" {us}\n",
                    i % 60
                )
            })
            .collect()
    };
    let dir = tempdir();
    let a = write(dir.path(), "a.log", &log(100_000));
    let b = write(dir.path(), "b.log", &log(100_005));
    let c = json(&["--compare", p(&a), p(&b)]);
    assert_eq!(c["test"]["d"], 0.0);
    assert_eq!(c["test"]["differs"], false);
    let c = json(&["--compare", p(&a), p(&b), "--exact"]);
    assert_eq!(c["test"]["d"], 1.0);
    assert_eq!(c["test"]["differs"], true);
}

#[test]
fn apache_whole_seconds_are_named_not_guessed() {
    let text: String = (0..30u64)
        .map(|i| {
            format!(
                "::1 - - [10/Oct/2026:13:55:{:02} -0700] \"GET /slow HTTP/1.1\" 200 9 {}\n",
                i % 60,
                i % 4
            )
        })
        .collect();
    let dir = tempdir();
    let log = write(dir.path(), "t.log", &text);
    let o = run(&[p(&log)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--input-format apache-s"),
        "{}",
        stderr(&o)
    );
    let r = json(&[p(&log), "--format", "apache-s", "--exact"]);
    assert_eq!(r["max_s"], 3.0);
    assert_eq!(r["under_threshold"], 8); // the 0 s requests
    assert_eq!(r["inputs"][0]["layout"]["field"], "%T");
}

#[test]
fn gzip_cut_before_detection_finished_still_reports_the_lines_read() {
    // a few kB of compressed data: the stream breaks while the format is being detected
    let dir = tempdir();
    let gz = gzip(&calomel_log(7142, 9));
    let cut = dir.path().join("early.log.gz");
    std::fs::write(&cut, &gz[..4000]).expect("write");
    for threads in ["1", "2"] {
        let r = json(&[p(&cut), "--threads", threads]);
        let lines = r["inputs"][0]["lines"].as_u64().expect("lines");
        assert!(lines > 10 && lines < 1000, "{lines}");
        assert_eq!(r["count"].as_u64(), Some(lines));
        assert_eq!(r["skipped_by_reason"][0]["reason"], "cut-by-stream-end");
        assert_eq!(
            r["skipped_by_reason"][0]["first_lines"][0],
            format!("{}:{}", p(&cut), lines + 1)
        );
    }
    let fake = dir.path().join("fake.gz");
    std::fs::write(&fake, b"\x1f\x8bnot gzip\n").expect("write");
    let o = run(&[p(&fake)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("fake.gz: the gzip stream breaks"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn comparison_report_snapshot() {
    let log = |ms: &[u64]| -> String {
        ms.iter()
            .enumerate()
            .map(|(i, &ms)| nginx(i as u64, 200, "GET", "/", ms, "-"))
            .collect()
    };
    let dir = tempdir();
    write(
        dir.path(),
        "before.log",
        &log(&[20, 60, 90, 150, 180, 350, 420, 900, 1300, 2500]),
    );
    write(
        dir.path(),
        "after.log",
        &log(&[10, 15, 30, 45, 60, 80, 95, 110, 240, 700]),
    );
    let o = linerate()
        .current_dir(dir.path())
        .args([
            "logdist",
            "--compare",
            "before.log",
            "after.log",
            "--max",
            "1s",
            "--exact",
        ])
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", stderr(&o));
    insta::assert_snapshot!(stdout(&o));
}

#[test]
fn help_snapshot() {
    let o = linerate()
        .args(["logdist", "--help"])
        .env("COLUMNS", "100")
        .output()
        .expect("runs");
    assert!(o.status.success());
    insta::assert_snapshot!(stdout(&o));
}

/// `linerate logdist … --json | head -1` is not an error, nor is the human report's.
#[test]
fn closed_stdout_is_not_an_error() {
    let dir = tempdir();
    let log = write(dir.path(), "a.log", &one_to_thousand_ms());
    for extra in [&["--json"][..], &[][..]] {
        let mut args = vec!["logdist", p(&log)];
        args.extend(extra);
        let (code, err) = with_closed_stdout(&args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

/// A chart that cannot be put in place (a directory is in the way, or the folder is missing)
/// is an error naming the file asked for, and leaves no temporary file behind.
#[test]
fn chart_write_failure_names_the_file_and_leaves_no_temporary() {
    let dir = tempdir();
    let log = write(dir.path(), "a.log", &one_to_thousand_ms());
    let in_the_way = dir.path().join("charts.svg");
    std::fs::create_dir(&in_the_way).expect("mkdir");
    let missing = dir.path().join("no/such/dir/chart.svg");
    for target in [&in_the_way, &missing] {
        let o = run(&[p(&log), "--svg", p(target)]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("cannot write {}:", p(target))),
            "{}",
            stderr(&o)
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
        .map(|e| e.file_name())
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A read that lasts shows its progress on a terminal's stderr, erased before the report; the
/// same read into a pipe prints nothing extra. (A FIFO fed in two halves a second apart makes
/// the read last; `script` provides the terminal.)
#[test]
fn progress_shows_on_a_terminal_only() {
    require!(program("script"));
    let dir = tempdir();
    let log = write(dir.path(), "a.log", &one_to_thousand_ms());
    let fifo = dir.path().join("slow.log");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let feed = format!(
        "(head -n 500 '{log}'; sleep 1; tail -n +501 '{log}') > '{fifo}' &",
        log = p(&log),
        fifo = p(&fifo)
    );
    let binary = BIN;
    let on_terminal = isolate(&mut std::process::Command::new("script"))
        .args([
            "-qec",
            &format!("{feed} '{binary}' logdist '{}'", p(&fifo)),
            "/dev/null",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run script");
    let text = String::from_utf8_lossy(&on_terminal.stdout);
    assert!(text.contains("slow.log: "), "{text}");
    assert!(text.contains(" kB read"), "{text}");
    // Erased before the report starts.
    let report = text.find("lines: 1000 timed").expect("report");
    let erase = text.rfind("\r\x1b[K").expect("erase");
    assert!(erase < report, "{text}");

    let piped = isolate(&mut std::process::Command::new("sh"))
        .args(["-c", &format!("{feed} '{binary}' logdist '{}'", p(&fifo))])
        .output()
        .expect("run sh");
    assert!(piped.status.success(), "{piped:?}");
    assert!(piped.stderr.is_empty(), "{}", stderr(&piped));
}

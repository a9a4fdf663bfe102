//! `linerate report` through the binary, on a real experiment (iperf3 between namespaces over
//! a shaped veth, see tests/data/report/generate.sh): the HTML's structure, the SVG and PNG
//! charts, and the page rendered in headless Chromium (screenshot not blank, no network
//! request made by the page, nothing logged to the console); and on pps and rr experiments
//! measured on loopback, each in its own metric.

#![forbid(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use support::bin::{ok_db, run_db};
use support::browser::{chromium, picture};
use support::{data, skip, tempdir};

const RATES: [u32; 4] = [100, 200, 400, 800];

/// Imports the experiment in the order it was measured (variants interleaved) and the rr run.
fn experiment_db(dir: &Path) -> PathBuf {
    let db = dir.join("runs.db");
    for rep in 1..=3 {
        for rate in RATES {
            let file = data(&format!("report/sweep/rate{rate}-r{rep}.json"));
            let variant = if rate == 100 {
                "baseline".to_owned()
            } else {
                format!("{rate} Mbit/s")
            };
            ok_db(
                &db,
                &[
                    "import",
                    "--experiment",
                    "rate-sweep",
                    "--variant",
                    &variant,
                    "--sweep",
                    &rate.to_string(),
                    "--sweep-label",
                    "bottleneck rate (Mbit/s)",
                    file.to_str().unwrap(),
                ],
            );
        }
    }
    ok_db(&db, &["import", data("report/rr.json").to_str().unwrap()]);
    db
}

#[test]
fn experiment_report_html_svg_and_png() {
    let dir = tempdir();
    let db = experiment_db(dir.path());
    let html_path = dir.path().join("out/report.html");
    let svg_dir = dir.path().join("svg");
    let png_dir = dir.path().join("png");
    let out = ok_db(
        &db,
        &[
            "report",
            "--experiment",
            "rate-sweep",
            "-o",
            html_path.to_str().unwrap(),
            "--svg",
            svg_dir.to_str().unwrap(),
            "--png",
            png_dir.to_str().unwrap(),
            "--json",
        ],
    );
    let written: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(written["schema"], "linerate.report/1");
    assert_eq!(written["runs"].as_array().unwrap().len(), 12);
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    // Self-contained: no scripts, no links, no external resources, no URLs at all.
    for forbidden in ["<script", "<link", "http://", "https://", " src=", "url("] {
        assert!(
            !html.contains(forbidden),
            "the report contains {forbidden:?}"
        );
    }
    for section in [
        "<h2>Summary</h2>",
        "<h2>Sweep</h2>",
        "<h2>Repetitions</h2>",
        "<h2>Runs</h2>",
        "<h2>Host facts</h2>",
    ] {
        assert!(html.contains(section), "missing {section}");
    }
    for id in 1..=12 {
        assert!(
            html.contains(&format!("id=\"run-{id}\"")),
            "run {id} missing"
        );
    }
    assert!(html.contains("throughput (Mbit/s)"), "axis with unit");
    // The verdicts, ministat-style, and the samples they were computed on.
    assert!(html.contains("Difference at 95.0% confidence"));
    assert!(html.contains("Samples: one value per repetition"));
    assert!(html.contains("whiskers: 95% confidence interval"));
    assert!(html.contains("bottleneck rate (Mbit/s)"), "sweep axis");
    assert!(html.contains("Variant 200 Mbit/s: throughput of each repetition"));
    assert!(
        html.contains("Linux"),
        "host facts from iperf3's system_info"
    );
    // Every chart is in the page, as SVG and as PNG.
    let charts = html.matches("<svg ").count();
    let svgs: Vec<_> = std::fs::read_dir(&svg_dir).unwrap().collect();
    let pngs: Vec<_> = std::fs::read_dir(&png_dir).unwrap().collect();
    assert_eq!(svgs.len(), charts);
    assert_eq!(pngs.len(), charts);
    let svg = std::fs::read_to_string(svg_dir.join("sweep.svg")).unwrap();
    assert!(svg.starts_with("<svg ") && svg.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    let png = std::fs::read(png_dir.join("run-4-throughput.png")).unwrap();
    let pic = picture(&png);
    assert_eq!((pic.width, pic.height), (900, 420));
    assert!(
        pic.inked > 0.02 && pic.colours > 16,
        "blank chart: {:.3} inked, {} colours",
        pic.inked,
        pic.colours
    );

    // The rr run: latency histogram and CDF.
    let rr_html = dir.path().join("rr.html");
    ok_db(
        &db,
        &[
            "report",
            "13",
            "-o",
            rr_html.to_str().unwrap(),
            "--png",
            png_dir.to_str().unwrap(),
        ],
    );
    let rr = std::fs::read_to_string(&rr_html).unwrap();
    assert!(rr.contains("histogram") && rr.contains("CDF") && rr.contains("latency (µs)"));
    let pic = picture(&std::fs::read(png_dir.join("run-13-latency.png")).unwrap());
    assert!(pic.inked > 0.02, "blank latency chart");

    // Rewriting the report replaces it whole and leaves no temporary file behind.
    ok_db(
        &db,
        &["report", "--last", "2", "-o", html_path.to_str().unwrap()],
    );
    let names: Vec<String> = std::fs::read_dir(html_path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["report.html".to_owned()]);
}

#[test]
fn report_needs_a_destination_and_known_runs() {
    let dir = tempdir();
    let db = experiment_db(dir.path());
    let run = |args: &[&str]| run_db(&db, args);
    let out = run(&["report", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-o report.html"));
    let out = run(&["report", "99", "-o", "x.html"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no run 99"));
    let out = run(&["report", "--experiment", "nope", "-o", "x.html"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no runs of experiment `nope`"));
}

/// The URLs of requests the page made (chromium's own background requests carry no file://
/// isolation key and are not the page's).
fn page_requests(netlog: &serde_json::Value) -> Vec<String> {
    let Some(events) = netlog["events"].as_array() else {
        return vec!["(no netlog)".into()];
    };
    events
        .iter()
        .filter_map(|e| {
            let p = &e["params"];
            let url = p["url"].as_str()?;
            let key = p["network_isolation_key"].as_str()?;
            (key.contains("file://") && !url.starts_with("file:")).then(|| url.to_owned())
        })
        .collect()
}

fn console_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn report_renders_in_headless_chromium_without_network_or_errors() {
    let dir = tempdir();
    let db = experiment_db(dir.path());
    let page = dir.path().join("report.html");
    ok_db(
        &db,
        &[
            "report",
            "--experiment",
            "rate-sweep",
            "-o",
            page.to_str().unwrap(),
        ],
    );
    let shot = dir.path().join("shot.png");
    let Some((out, netlog)) = chromium(&page, &dir.path().join("b1"), &shot) else {
        skip!("no chromium binary (Debian package `chromium`, in .ci/apt-packages)");
    };
    assert!(
        shot.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pic = picture(&std::fs::read(&shot).unwrap());
    assert_eq!((pic.width, pic.height), (1100, 1800));
    assert!(
        pic.inked > 0.03 && pic.colours > 32,
        "blank page: {:.3} inked, {} colours",
        pic.inked,
        pic.colours
    );
    assert!(!netlog.is_null(), "chromium wrote no netlog");
    assert_eq!(page_requests(&netlog), Vec::<String>::new());
    assert_eq!(console_lines(&out), Vec::<String>::new());
    if let Ok(keep) = std::env::var("LINERATE_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }

    // The checks can fail: the same page with an external image logs a CSP violation, and
    // without its CSP makes a request (to a closed loopback port, through the dead proxy).
    let html = std::fs::read_to_string(&page).unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let img = format!("<img alt=\"\" src=\"http://127.0.0.1:{port}/x.png\">");
    let with_img = dir.path().join("with-img.html");
    std::fs::write(
        &with_img,
        html.replacen("<body>", &format!("<body>{img}"), 1),
    )
    .unwrap();
    let (out, _) = chromium(
        &with_img,
        &dir.path().join("b2"),
        &dir.path().join("s2.png"),
    )
    .unwrap();
    assert!(
        !console_lines(&out).is_empty(),
        "the CSP violation was not logged"
    );
    let no_csp = dir.path().join("no-csp.html");
    let stripped: String = html
        .lines()
        .filter(|l| !l.contains("Content-Security-Policy"))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(
        &no_csp,
        stripped.replacen("<body>", &format!("<body>{img}"), 1),
    )
    .unwrap();
    let (_, netlog) =
        chromium(&no_csp, &dir.path().join("b3"), &dir.path().join("s3.png")).unwrap();
    assert_eq!(
        page_requests(&netlog),
        vec![format!("http://127.0.0.1:{port}/x.png")]
    );
}

#[test]
fn a_paths_history_since_a_time_and_to_one_peer() {
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    let server = support::traffic::linerate_server(&support::traffic::LOOPBACK_SERVER);
    for _ in 0..2 {
        let out = support::traffic::client(
            None,
            server.port,
            &["-t", "1s", "-b", "50M", "--db", db.to_str().unwrap()],
        );
        assert!(out.status.success(), "{out:?}");
    }
    let page = dir.path().join("path.html");
    let svg = dir.path().join("svg");
    ok_db(
        &db,
        &[
            "report",
            "--since",
            "1h",
            "--peer",
            "127.0.0.1",
            "-o",
            page.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<h1>Runs since ") && html.contains(" to 127.0.0.1 (2)</h1>"),
        "{html}"
    );
    assert!(html.contains("hours since"), "no history chart");
    // No run to another peer.
    let out = run_db(
        &db,
        &[
            "report",
            "--since",
            "1h",
            "--peer",
            "198.18.9.9",
            "-o",
            "x.html",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("to 198.18.9.9: none"));
}

/// A grid sweep as `lab run` stores it (variants `CIPHER tunnel.tun-mtu=VALUE`, the swept value
/// and its parameter with every run), made of real iperf3 documents imported into a fresh store:
/// the report draws one line per cipher against tun-mtu, each point with its interval.
#[test]
fn a_grid_sweep_draws_one_line_per_base_variant() {
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    let grid = [
        ("AES-256-GCM", 1500, 100),
        ("AES-256-GCM", 9000, 200),
        ("CHACHA20-POLY1305", 1500, 400),
        ("CHACHA20-POLY1305", 9000, 800),
    ];
    for rep in 1..=3 {
        for (cipher, mtu, rate) in grid {
            let file = data(&format!("report/sweep/rate{rate}-r{rep}.json"));
            ok_db(
                &db,
                &[
                    "import",
                    "--experiment",
                    "openvpn-tun-mtu",
                    "--variant",
                    &format!("{cipher} tunnel.tun-mtu={mtu}"),
                    "--sweep",
                    &mtu.to_string(),
                    "--sweep-label",
                    "tunnel.tun-mtu",
                    file.to_str().unwrap(),
                ],
            );
        }
    }
    let svg_dir = dir.path().join("svg");
    ok_db(
        &db,
        &[
            "report",
            "--experiment",
            "openvpn-tun-mtu",
            "-o",
            dir.path().join("grid.html").to_str().unwrap(),
            "--svg",
            svg_dir.to_str().unwrap(),
            "--png",
            svg_dir.to_str().unwrap(),
        ],
    );
    let svg = std::fs::read_to_string(svg_dir.join("sweep.svg")).expect("a sweep chart");
    assert!(svg.contains("tunnel.tun-mtu"), "x axis names the parameter");
    for cipher in ["AES-256-GCM", "CHACHA20-POLY1305", "confidence interval"] {
        assert_eq!(
            svg.matches(cipher).count(),
            1,
            "one legend entry for {cipher}"
        );
    }
    assert!(
        !svg.contains(">mean<"),
        "no single line through both ciphers"
    );
    // Per cipher, in its own colour: the line, the legend's sample and its two interval bars.
    for colour in ["#0072B2", "#E69F00"] {
        let strokes = svg.matches(&format!("stroke=\"{colour}\"")).count();
        assert_eq!(strokes, 4, "{colour}");
    }
}

/// A pps and an rr experiment measured for real on loopback (linerate client against a linerate
/// server; two variants × two repetitions of 1 s, interleaved), each document imported as a
/// repetition of its variant. The pps documents are imported without their interval reports,
/// as `lab run`'s frame generator writes its pps runs (`"intervals": []`).
fn loopback_experiments(dir: &Path) -> PathBuf {
    let db = dir.join("runs.db");
    let server = support::traffic::linerate_server(&support::traffic::LOOPBACK_SERVER);
    let port = server.port.to_string();
    for rep in 1..=2 {
        for (variant, payload) in [("baseline", "64"), ("large", "512")] {
            for (experiment, args) in [
                ("pps-loop", ["--mode", "pps", "-l", payload, "-i", "0.5"]),
                ("rr-loop", ["--mode", "rr", "-l", payload, "-i", "0.5"]),
            ] {
                let out = support::bin::linerate()
                    .args(["client", "127.0.0.1", "-p", &port, "-t", "1s"])
                    .args(["--json", "--no-store"])
                    .args(args)
                    .output()
                    .expect("run linerate client");
                assert!(out.status.success(), "{out:?}");
                let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                if experiment == "pps-loop" {
                    doc["intervals"] = serde_json::json!([]);
                }
                let file = dir.join(format!("{experiment}-{variant}-{rep}.json"));
                std::fs::write(&file, doc.to_string()).unwrap();
                ok_db(
                    &db,
                    &[
                        "import",
                        "--experiment",
                        experiment,
                        "--variant",
                        variant,
                        file.to_str().unwrap(),
                    ],
                );
            }
        }
    }
    db
}

/// The summary table's column headers.
fn headers(html: &str) -> Vec<String> {
    let head = &html[html.find("<thead>").unwrap()..html.find("</thead>").unwrap()];
    head.split("</th>")
        .filter(|cell| cell.contains("<th"))
        .filter_map(|cell| Some(cell.rsplit_once('>')?.1.to_owned()))
        .collect()
}

#[test]
fn pps_and_rr_experiments_report_in_their_own_metric() {
    let dir = tempdir();
    let db = loopback_experiments(dir.path());

    // pps: packets per second, sent and received, loss; no TCP columns; the runs' missing
    // interval samples said once.
    let page = dir.path().join("pps.html");
    let svg = dir.path().join("svg");
    ok_db(
        &db,
        &[
            "report",
            "--experiment",
            "pps-loop",
            "-o",
            page.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(
        headers(&html),
        [
            "Run",
            "Started (UTC)",
            "Variant",
            "Test",
            "Time",
            "Received",
            "Sent",
            "Lost"
        ]
    );
    let summary = &html[html.find("<h2>Summary</h2>").unwrap()..html.find("</table>").unwrap()];
    assert!(
        summary.contains("pps</td>"),
        "rates in packets/s: {summary}"
    );
    assert!(!summary.contains("bit/s"), "{summary}");
    assert!(
        html.contains(
            "Samples: one value per repetition: each run&#39;s received packets per second"
        ),
        "the comparison is in packets/s"
    );
    assert!(html.contains("mean packet rate ("), "the bars' axis");
    assert!(html.contains("the ministat table below is in "));
    assert!(html.contains("pps: no difference proven") || html.contains("pps: difference proven"));
    assert_eq!(
        html.matches("interval samples").count(),
        1,
        "one sentence for all runs without interval samples"
    );
    assert!(html.contains("The runs have no interval samples: no chart over time."));
    assert!(!html.contains("<h2>Repetitions</h2>"), "nothing to overlay");
    let compared = serde_json::from_str::<serde_json::Value>(&ok_db(
        &db,
        &["compare", "--experiment", "pps-loop", "--json"],
    ))
    .unwrap();
    assert_eq!(compared["unit"], "packet/s");

    // rr: transactions per second and the latency percentiles from the stored histogram; the
    // comparison in transactions/s at any confidence level, with the exact t quantile.
    let page = dir.path().join("rr.html");
    ok_db(
        &db,
        &[
            "report",
            "--experiment",
            "rr-loop",
            "-o",
            page.to_str().unwrap(),
            "--confidence",
            "97.3",
        ],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(
        headers(&html),
        [
            "Run",
            "Started (UTC)",
            "Variant",
            "Test",
            "Time",
            "Transactions/s",
            "p50",
            "p90",
            "p99"
        ]
    );
    for absent in ["RTT", "CPU", "Retr", "Received"] {
        assert!(
            !headers(&html).iter().any(|h| h.contains(absent)),
            "{absent}"
        );
    }
    let summary = &html[html.find("<h2>Summary</h2>").unwrap()..html.find("</table>").unwrap()];
    assert!(
        summary.contains(" µs</td>"),
        "latency percentiles: {summary}"
    );
    assert!(summary.contains("transactions/s</td>"), "{summary}");
    assert!(
        html.contains("Samples: one value per repetition: each run&#39;s transactions per second")
    );
    assert!(html.contains("Student&#39;s t at 97.3% confidence"));
    assert!(
        html.contains("Difference at 97.3% confidence")
            || html.contains("No difference proven at 97.3% confidence")
    );
    assert!(
        html.contains("transaction rate over time"),
        "a chart per run"
    );
    assert_eq!(
        html.matches("latency: CDF").count(),
        4,
        "a latency chart per run"
    );
    assert!(
        !html.contains("interval samples"),
        "every rr run has its intervals"
    );
    let compared = serde_json::from_str::<serde_json::Value>(&ok_db(
        &db,
        &["compare", "--experiment", "rr-loop", "--json", "-c", "97.3"],
    ))
    .unwrap();
    assert_eq!(compared["unit"], "transaction/s");
    assert_eq!(compared["confidence"], 97.3);
    let c = &compared["comparisons"][0];
    assert_eq!(c["t_source"], "exact");
    // df 2: t between the 95 % (4.303) and 98 % (6.965) quantiles, not a table's column.
    let t = c["t"].as_f64().unwrap();
    assert!(t > 4.303 && t < 6.965, "t = {t}");

    // The pps page in a browser: drawn, no request, nothing on the console.
    let shot = dir.path().join("pps.png");
    let Some((out, netlog)) = chromium(&dir.path().join("pps.html"), &dir.path().join("b"), &shot)
    else {
        skip!("no chromium binary (Debian package `chromium`, in .ci/apt-packages)");
    };
    let pic = picture(&std::fs::read(&shot).unwrap());
    assert!(pic.inked > 0.02 && pic.colours > 16, "blank page");
    assert_eq!(page_requests(&netlog), Vec::<String>::new());
    assert_eq!(console_lines(&out), Vec::<String>::new());
}

//! `linerate profile` through the binary (issue 15): a busy loop profiled around a command
//! gives samples, a valid folded file whose counts add up to the samples, and a flame graph
//! SVG; without privileges the refusal names perf_event_paranoid and what would allow it.

#![forbid(unsafe_code)]

mod support;

use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use support::bin::{isolate, linerate, run_bounded};
use support::{program, require, root, tempdir};

#[test]
fn a_busy_loop_is_sampled_folded_and_drawn() {
    require!(root());
    let dir = tempdir();
    let folded = dir.path().join("busy.folded");
    let svg = dir.path().join("busy.svg");
    let out = run_bounded(
        linerate().args([
            "profile",
            "-t",
            "1s",
            "--json",
            "--folded",
            support::arg(&folded),
            "--flamegraph",
            support::arg(&svg),
            "--",
            "sh",
            "-c",
            "while :; do :; done",
        ]),
        // Sampling is system-wide: on a machine busy compiling, naming the frames of large
        // binaries (rustc's libraries) after the sampling takes a while in a debug build.
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["schema"], "linerate.profile/1");
    assert!(
        ["cpu-clock", "cycles"].contains(&v["event"].as_str().unwrap_or("")),
        "{v}"
    );
    let samples = v["samples"].as_u64().expect("samples");
    eprintln!("busy loop: {samples} samples in 1 s on {} CPUs", v["cpus"]);
    assert!(samples > 0, "{v}");
    let top = v["top"].as_array().expect("top[]");
    assert!(!top.is_empty(), "{v}");
    for t in top {
        let s = t["self_percent"].as_f64().expect("self_percent");
        let total = t["total_percent"].as_f64().expect("total_percent");
        assert!(t["function"].as_str().is_some_and(|f| !f.is_empty()), "{t}");
        assert!(
            (0.0..=100.0).contains(&s) && s <= total && total <= 100.0,
            "{t}"
        );
    }

    // Folded: `frames COUNT` per line, counts adding up to the samples; the loop's shell is a
    // root frame (it spun on a CPU for the whole second).
    let text = std::fs::read_to_string(&folded).expect("folded file written");
    let mut sum = 0;
    let mut shell = 0;
    for line in text.lines() {
        let (stack, count) = line.rsplit_once(' ').expect("`stack COUNT`");
        assert!(!stack.is_empty() && !stack.contains(' '), "{line}");
        let n: u64 = count.parse().expect("count is a number");
        sum += n;
        if stack.starts_with("sh;") || stack == "sh" {
            shell += n;
        }
    }
    assert_eq!(sum, samples, "{text}");
    assert!(shell > 0, "the busy shell is not in the profile:\n{text}");

    let svg = std::fs::read_to_string(&svg).expect("SVG written");
    assert!(
        svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"),
        "{svg}"
    );
    assert!(
        svg.contains("<title>sh ("),
        "no frame for the shell in the SVG"
    );
}

#[test]
fn a_busy_function_leads_the_profile_by_name() {
    require!(root(), program("gcc"));
    let dir = tempdir();
    let src = dir.path().join("busy.c");
    let exe = dir.path().join("busy");
    // A program that spends its second in one named function (not inlined, not stripped).
    std::fs::write(
        &src,
        "#include <time.h>\n\
         __attribute__((noinline)) unsigned long linerate_spin_here(unsigned long n) {\n\
           volatile unsigned long x = 0; for (unsigned long i = 0; i < n; i++) x += i; return x; }\n\
         int main(void) { time_t end = time(0) + 2;\n\
           while (time(0) < end) linerate_spin_here(1000000); return 0; }\n",
    )
    .expect("write busy.c");
    let cc = Command::new("gcc")
        .args(["-O1", "-fno-omit-frame-pointer", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("run gcc");
    assert!(cc.status.success(), "{cc:?}");
    let folded = dir.path().join("busy.folded");
    let out = run_bounded(
        linerate()
            .args([
                "profile",
                "--json",
                "-t",
                "1s",
                "--folded",
                support::arg(&folded),
                "--",
            ])
            .arg(&exe),
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let top = v["top"].as_array().expect("top[]");
    let spin = top
        .iter()
        .find(|t| t["function"] == "linerate_spin_here")
        .unwrap_or_else(|| panic!("linerate_spin_here not in the top list: {v}"));
    eprintln!(
        "busy function: {} of {} samples, self {} %",
        spin["self_samples"], v["samples"], spin["self_percent"]
    );
    // It ran on one of the CPUs for the whole second (sampling is system-wide, so the other
    // CPUs' work shares the total), and it leads its own process's profile.
    // (At 99 Hz, even a CPU shared with other work gives it well over 5 samples in 1 s.)
    assert!(spin["self_samples"].as_u64().unwrap_or(0) >= 5, "{v}");
    let text = std::fs::read_to_string(&folded).expect("folded file written");
    let (mut process, mut leaf) = (0u64, 0u64);
    for line in text.lines().filter(|l| l.starts_with("busy;")) {
        let (stack, count) = line.rsplit_once(' ').expect("`stack COUNT`");
        let n: u64 = count.parse().expect("count");
        process += n;
        if stack.ends_with(";linerate_spin_here") {
            leaf += n;
        }
    }
    assert!(
        leaf * 10 >= process * 8,
        "{leaf} of {process} samples of busy:\n{text}"
    );
}

#[test]
fn without_privileges_the_refusal_says_what_would_allow_it() {
    require!(root(), program("setpriv"));
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .unwrap_or_default()
        .trim()
        .parse::<i32>()
        .unwrap_or(2);
    if paranoid < 0 {
        support::skip!("kernel.perf_event_paranoid is {paranoid}: everyone may sample every CPU");
    }
    let o = isolate(&mut Command::new("setpriv"))
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            support::bin::BIN,
            "profile",
            "-t",
            "1s",
        ])
        .output()
        .expect("run setpriv");
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("permission denied")
            && err.contains(&format!("kernel.perf_event_paranoid is {paranoid}"))
            && err.contains("CAP_PERFMON"),
        "{err}"
    );
}

#[test]
fn a_profile_needs_a_sane_frequency() {
    let out = linerate()
        .args(["profile", "--frequency", "0", "-t", "1s"])
        .output()
        .expect("run linerate");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--frequency"));
}

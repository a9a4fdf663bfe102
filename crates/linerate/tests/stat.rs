//! `linerate stat` against ministat.
//!
//! - Golden cases (`data/stat/cases.tsv`, made by `data/stat/generate.py`): expected output
//!   from Debian's ministat where it agrees with current FreeBSD, with the relative error
//!   recomputed by FreeBSD's formula where only that differs, and hand-checked outputs for
//!   FreeBSD-only behaviour and linerate's extras. Compared byte for byte.
//! - A live comparison with Debian's `ministat`, when installed, on random data sets.

#![forbid(unsafe_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod support;

use support::bin::{BIN, isolate, linerate, stdout};
use support::rng::Rng;
use support::{program, require, tempdir};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stat")
}

fn linerate_stat(args: &[&str], dir: &Path, stdin: Option<&Path>) -> Output {
    let mut command = linerate();
    command.arg("stat").args(args).current_dir(dir);
    command.stdin(match stdin {
        Some(path) => Stdio::from(fs::File::open(path).expect("open stdin file")),
        None => Stdio::null(),
    });
    command.output().expect("run linerate")
}

struct Case {
    name: String,
    kind: String,
    exit: i32,
    stdin: Option<PathBuf>,
    args: Vec<String>,
}

fn cases() -> Vec<Case> {
    let manifest = fs::read_to_string(data_dir().join("cases.tsv")).expect("read cases.tsv");
    manifest
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 5, "bad manifest line {line:?}");
            Case {
                name: fields[0].to_owned(),
                kind: fields[1].to_owned(),
                exit: fields[2].parse().expect("exit code"),
                stdin: (fields[3] != "-").then(|| data_dir().join(fields[3])),
                args: fields[4].split_whitespace().map(str::to_owned).collect(),
            }
        })
        .collect()
}

#[test]
fn golden_cases_match_byte_for_byte() {
    let dir = data_dir();
    let cases = cases();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
        let out = linerate_stat(&args, &dir, case.stdin.as_deref());
        let expected =
            fs::read(dir.join("expected").join(format!("{}.out", case.name))).expect("expected");
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() != Some(case.exit) {
            failures.push(format!(
                "{} ({}): exit {:?}, expected {}; stderr: {stderr}",
                case.name,
                case.kind,
                out.status.code(),
                case.exit
            ));
            continue;
        }
        if out.stdout != expected {
            failures.push(format!(
                "{} ({}): stdout differs\n--- expected\n{}--- got\n{}",
                case.name,
                case.kind,
                String::from_utf8_lossy(&expected),
                String::from_utf8_lossy(&out.stdout)
            ));
        }
        let err_path = dir.join("expected").join(format!("{}.err", case.name));
        if let Ok(fragment) = fs::read_to_string(&err_path) {
            if !stderr.contains(fragment.trim_end()) {
                failures.push(format!(
                    "{}: stderr lacks {fragment:?}: {stderr}",
                    case.name
                ));
            }
        } else if !stderr.is_empty() {
            failures.push(format!("{}: unexpected stderr {stderr}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn help_lists_ministat_flags() {
    insta::assert_snapshot!(stdout(&["stat", "--help"]));
}

#[test]
fn no_file_reads_stdin_named_stdin() {
    let dir = data_dir();
    let out = linerate_stat(&["-n"], &dir, Some(&dir.join("inputs/three.txt")));
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "x <stdin>\n    N           Min           Max        Median           Avg        Stddev\n\
         x   3             1             3             2             2             1\n"
    );
}

#[test]
fn columns_env_is_ignored_when_not_a_terminal() {
    let dir = data_dir();
    let out = linerate()
        .args(["stat", "inputs/a.txt"])
        .current_dir(&dir)
        .env("COLUMNS", "20")
        .output()
        .expect("run");
    let expected = fs::read(dir.join("expected/single.out")).expect("expected");
    assert_eq!(out.stdout, expected);
}

/// On a terminal, ministat's width is `$COLUMNS`, else the window's columns − 2.
#[test]
fn terminal_width_from_columns_and_window() {
    require!(program("script"));
    let dir = data_dir();
    let binary = BIN;
    for (setup, width) in [
        ("COLUMNS=50; export COLUMNS", 50),
        ("unset COLUMNS; stty cols 61", 59),
    ] {
        let out = isolate(&mut Command::new("script"))
            .args([
                "-qec",
                &format!("{setup}; '{binary}' stat inputs/a.txt"),
                "/dev/null",
            ])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .output()
            .expect("run script");
        let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
        let frame = format!("\n+{}+\n", "-".repeat(width));
        assert!(
            text.contains(&frame),
            "{setup}: no {width}-wide frame in {text}"
        );
    }
}

#[test]
fn binary_garbage_is_an_error_not_a_panic() {
    let tmp = tempdir();
    let path = tmp.path().join("garbage");
    fs::write(
        &path,
        [0xff, 0xfe, b'\n', 0x80, b'1', b'\n', b'2', 0, b'\n'],
    )
    .expect("write");
    let out = linerate_stat(&["garbage"], tmp.path(), None);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Invalid data on line 1 in garbage"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// One random data set as text lines, with an odd count (Debian's median differs for even n).
fn random_set(rng: &mut Rng) -> String {
    let n = 2 * rng.below(60) + 3;
    let kind = rng.below(5);
    let center = rng.normal() * 100.0;
    let spread = 0.1 + rng.unit() * 20.0;
    (0..n)
        .map(|_| match kind {
            0 => format!("{:.3}\n", center + spread * rng.normal()),
            1 => format!("{}\n", rng.below(8)),
            2 => format!("{:.4e}\n", (center + spread * rng.normal()) * 1e4),
            3 => format!("-{:.2}\n", (center + spread * rng.normal()).abs()),
            _ => format!("{:.1}\t# note\n", 50.0 + spread * rng.normal()),
        })
        .collect()
}

/// Replaces the relative error of "Difference" blocks, which current FreeBSD (and linerate)
/// compute with a ratio-aware formula and Debian's 2015 ministat does not.
fn without_relative_error(text: &str) -> String {
    text.lines()
        .map(
            |line| match line.strip_prefix('\t').and_then(|l| l.split_once("% +/- ")) {
                Some((percent, _)) => format!("\t{percent}% +/- (relative error)"),
                None => line.to_owned(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn live_against_debian_ministat() {
    require!(program("ministat"));
    let tmp = tempdir();
    let seed = std::env::var("LINERATE_STAT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1234_u64);
    let mut rng = Rng(seed);
    let flag_sets: [&[&str]; 8] = [
        &[],
        &["-s"],
        &["-A"],
        &["-n"],
        &["-w", "50"],
        &["-c", "99"],
        &["-c", "80", "-s", "-w", "100"],
        &["-c", "99.5"],
    ];
    for round in 0..150 {
        let count = 1 + rng.below(7) as usize;
        let mut files = Vec::new();
        for index in 0..count {
            let name = format!("r{round}_{index}");
            fs::write(tmp.path().join(&name), random_set(&mut rng)).expect("write set");
            files.push(name);
        }
        let flags = flag_sets[rng.below(flag_sets.len() as u64) as usize];
        let args: Vec<&str> = flags
            .iter()
            .copied()
            .chain(files.iter().map(String::as_str))
            .collect();
        let ministat = Command::new("ministat")
            .args(&args)
            .current_dir(tmp.path())
            .output()
            .expect("run ministat");
        let ours = linerate_stat(&args, tmp.path(), None);
        assert_eq!(
            ours.status.code(),
            ministat.status.code(),
            "seed {seed} round {round} {args:?}"
        );
        assert_eq!(
            without_relative_error(&String::from_utf8_lossy(&ours.stdout)),
            without_relative_error(&String::from_utf8_lossy(&ministat.stdout)),
            "seed {seed} round {round}: linerate stat {args:?} differs from ministat (files in {})",
            tmp.path().display()
        );
    }
}

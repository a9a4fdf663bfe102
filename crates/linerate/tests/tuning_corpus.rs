//! `linerate lint` against files nobody here wrote: the regression corpus of real public
//! configuration files (crates/linerate-tuning/testdata/corpus, sources in INDEX.toml) and the
//! seeds' config blocks (tests/data/tuning). Each line's expectation was reviewed by hand
//! (EXPECT.txt, SEEDS-EXPECT.txt): a warning or an error on a valid line is a false alarm and
//! fails the test; at least nine in ten of the lines called wrong must be flagged.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use support::bin::run as linerate;

/// What a reviewed line must get.
#[derive(Debug, Clone)]
enum Verdict {
    /// An error or a warning by one of these rules (`?`: a known miss).
    Wrong(Vec<String>),
    /// An info finding by one of these rules, and nothing worse.
    Note(Vec<String>),
    /// Nothing worse than info.
    Ok,
}

/// One section of an expectations file: the file judged, the extra lint arguments, the lines.
struct Section {
    file: String,
    args: Vec<String>,
    lines: BTreeMap<usize, Verdict>,
}

fn sections(path: &Path) -> Vec<Section> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut out: Vec<Section> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(head) = line.strip_prefix('[') {
            let (file, args) = head
                .split_once(']')
                .unwrap_or_else(|| panic!("{}:{}: unclosed section", path.display(), n + 1));
            out.push(Section {
                file: file.to_string(),
                args: args.split_whitespace().map(str::to_string).collect(),
                lines: BTreeMap::new(),
            });
            continue;
        }
        let (head, _why) = line.split_once(" -- ").unwrap_or((line, ""));
        let mut words = head.split_whitespace();
        let at = words.next().and_then(|w| w.parse::<usize>().ok());
        let verdict = words.next();
        let rules: Vec<String> = words
            .next()
            .map(|r| r.split(',').map(str::to_string).collect())
            .unwrap_or_default();
        let verdict = match (verdict, rules.is_empty()) {
            (Some("wrong"), false) => Verdict::Wrong(rules),
            (Some("note"), false) => Verdict::Note(rules),
            (Some("ok"), true) => Verdict::Ok,
            _ => panic!("{}:{}: cannot read `{line}`", path.display(), n + 1),
        };
        let (Some(at), Some(section)) = (at, out.last_mut()) else {
            panic!("{}:{}: a line outside a section", path.display(), n + 1);
        };
        section.lines.insert(at, verdict);
    }
    out
}

/// Lines that set something (or exclude a key from a glob): not blank, not a comment, not a
/// .reg header or section.
fn assignment_lines(path: &Path) -> Vec<usize> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    String::from_utf8_lossy(&bytes)
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim();
            !(t.is_empty()
                || t.starts_with('#')
                || t.starts_with(';')
                || t.starts_with('[')
                || t.starts_with("Windows Registry Editor"))
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// (line, severity, rule) of the findings on `file`, and the detected OS of each input.
fn lint(dir: &Path, file: &str, args: &[String]) -> (Vec<(usize, String, String)>, Vec<String>) {
    let mut all: Vec<String> = vec![
        "lint".into(),
        "--json".into(),
        "--fail-on".into(),
        "never".into(),
    ];
    all.push(dir.join(file).display().to_string());
    for a in args {
        let other = dir.join(a);
        all.push(if other.is_file() {
            other.display().to_string()
        } else {
            a.clone()
        });
    }
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let out = linerate(&refs);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{file}: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let oses = json["files"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| f["os"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    let findings = json["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|f| {
                    f["location"]["source"]
                        .as_str()
                        .is_some_and(|s| s.ends_with(&format!("/{file}")))
                })
                .filter_map(|f| {
                    Some((
                        usize::try_from(f["location"]["line"].as_u64()?).ok()?,
                        f["severity"].as_str()?.to_string(),
                        f["rule"].as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    (findings, oses)
}

/// The figures of one expectations file.
#[derive(Debug, Default)]
struct Figures {
    files: usize,
    lines: usize,
    must_flag: usize,
    must_not_flag: usize,
    hits: usize,
    notes_found: usize,
    notes: usize,
    false_alarms: Vec<String>,
    misses: Vec<String>,
    unreviewed: Vec<String>,
}

impl Figures {
    fn recall(&self) -> f64 {
        if self.must_flag == 0 {
            return 1.0;
        }
        self.hits as f64 / self.must_flag as f64
    }
}

fn judge(dir: &Path, expect: &Path) -> Figures {
    let mut fig = Figures::default();
    for s in sections(expect) {
        fig.files += 1;
        let path = dir.join(&s.file);
        let lines = assignment_lines(&path);
        fig.lines += lines.len();
        for l in &lines {
            if !s.lines.contains_key(l) {
                fig.unreviewed.push(format!("{}:{l}", s.file));
            }
        }
        let (findings, _) = lint(dir, &s.file, &s.args);
        let serious = |line: usize| -> Vec<&str> {
            findings
                .iter()
                .filter(|(l, sev, _)| *l == line && (sev == "error" || sev == "warning"))
                .map(|(_, _, r)| r.as_str())
                .collect()
        };
        for (line, verdict) in &s.lines {
            let bad = serious(*line);
            match verdict {
                Verdict::Wrong(rules) => {
                    fig.must_flag += 1;
                    if bad.iter().any(|r| rules.iter().any(|w| w == r)) {
                        fig.hits += 1;
                    } else {
                        fig.misses
                            .push(format!("{}:{line} wants {rules:?}, got {bad:?}", s.file));
                    }
                }
                Verdict::Note(rules) => {
                    fig.must_not_flag += 1;
                    fig.notes += 1;
                    if findings
                        .iter()
                        .any(|(l, _, r)| l == line && rules.iter().any(|w| w == r))
                    {
                        fig.notes_found += 1;
                    } else {
                        fig.misses
                            .push(format!("{}:{line} wants the note {rules:?}", s.file));
                    }
                    if !bad.is_empty() {
                        fig.false_alarms.push(format!("{}:{line} {bad:?}", s.file));
                    }
                }
                Verdict::Ok => {
                    fig.must_not_flag += 1;
                    if !bad.is_empty() {
                        fig.false_alarms.push(format!("{}:{line} {bad:?}", s.file));
                    }
                }
            }
        }
        // A warning or an error on a line nobody reviewed is a false alarm too.
        for (line, sev, rule) in &findings {
            if (sev == "error" || sev == "warning") && !s.lines.contains_key(line) {
                fig.false_alarms
                    .push(format!("{}:{line} {rule} (no expectation)", s.file));
            }
        }
    }
    eprintln!(
        "{}: {} files, {} lines, {} must-flag, {} must-not-flag, {} hits (recall {:.3}), {} false alarms, {}/{} notes",
        expect.display(),
        fig.files,
        fig.lines,
        fig.must_flag,
        fig.must_not_flag,
        fig.hits,
        fig.recall(),
        fig.false_alarms.len(),
        fig.notes_found,
        fig.notes
    );
    fig
}

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../linerate-tuning/testdata/corpus")
}

#[test]
fn the_corpus_has_no_false_alarm_and_nine_in_ten_problems_are_found() {
    let dir = corpus_dir();
    let fig = judge(&dir, &dir.join("EXPECT.txt"));
    assert!(
        fig.unreviewed.is_empty(),
        "lines without an expectation: {:#?}",
        fig.unreviewed
    );
    assert!(
        fig.false_alarms.is_empty(),
        "false alarms: {:#?}",
        fig.false_alarms
    );
    assert!(fig.files >= 25, "only {} corpus files", fig.files);
    assert!(
        fig.recall() >= 0.9,
        "recall {:.3}: {:#?}",
        fig.recall(),
        fig.misses
    );
    assert_eq!(fig.notes_found, fig.notes, "{:#?}", fig.misses);
}

#[test]
fn every_corpus_file_is_indexed_with_its_source_and_detected_as_its_os() {
    let dir = corpus_dir();
    let index = std::fs::read_to_string(dir.join("INDEX.toml")).unwrap_or_else(|e| panic!("{e}"));
    // name → (os, repo, path, commit), read from the `key = "value"` lines of each [[file]].
    let mut files: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current = String::new();
    for line in index.lines() {
        let Some((k, v)) = line.split_once(" = ") else {
            continue;
        };
        let v = v.trim().trim_matches('"').to_string();
        if k == "name" {
            current = v.clone();
            files.insert(v, BTreeMap::new());
        } else if let Some(f) = files.get_mut(&current) {
            f.insert(k.to_string(), v);
        }
    }
    let on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n != "INDEX.toml" && n != "EXPECT.txt" && !n.starts_with('.'))
        .collect();
    for name in &on_disk {
        let meta = files
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not in INDEX.toml"));
        for field in ["os", "repo", "path", "commit"] {
            assert!(meta.contains_key(field), "{name}: no {field} in INDEX.toml");
        }
        assert_eq!(
            meta["commit"].len(),
            40,
            "{name}: commit is not a full hash"
        );
        let (_, oses) = lint(&dir, name, &[]);
        assert_eq!(oses, vec![meta["os"].clone()], "{name}: detected OS");
    }
    assert_eq!(
        on_disk.len(),
        files.len(),
        "INDEX.toml lists files that are not here"
    );
}

#[test]
fn the_seed_blocks_have_no_false_alarm_and_keep_every_right_finding() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tuning");
    let fig = judge(&dir, &dir.join("SEEDS-EXPECT.txt"));
    assert!(
        fig.unreviewed.is_empty(),
        "lines without an expectation: {:#?}",
        fig.unreviewed
    );
    assert!(
        fig.false_alarms.is_empty(),
        "false alarms: {:#?}",
        fig.false_alarms
    );
    // Every finding the previous lint made there and that is right is still made.
    assert!(fig.misses.is_empty(), "{:#?}", fig.misses);
}

//! The command line's shape as users see it: `--help`, completions and the man pages, generated
//! from the clap definitions and pinned by snapshots.

#![forbid(unsafe_code)]

use std::path::Path;
use std::process::Command;

mod support;

use support::bin::{run, stdout};
use support::tempdir;

#[test]
fn top_level_help() {
    insta::assert_snapshot!(stdout(&["--help"]));
}

#[test]
fn help_states_the_unit_rules() {
    let help = stdout(&["--help"])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(help.contains("256K = 256000 bytes, 256KiB = 262144 bytes"));
    assert!(help.contains("10GB is a size, not a rate"));
}

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = stdout(&["completions", shell]);
        assert!(script.contains("linerate"), "{shell}");
        assert!(script.contains("calc"), "{shell}");
    }
}

/// The parts of the bash script that complete the top level and the commands of the
/// Foundation and logdist issues. (The whole script would change with every flag any
/// command gains; each command's own flags are pinned by its `--help` snapshot.)
fn bash_cases_of_own_commands(script: &str) -> String {
    let own = ["calc", "stat", "logdist", "completions", "man"];
    let mut keep = false;
    let mut out = String::new();
    for line in script.lines() {
        let label = line
            .strip_prefix("        ")
            .and_then(|l| l.strip_suffix(')'))
            .filter(|l| l.starts_with("linerate") && !l.contains(' '));
        if let Some(label) = label {
            keep = label == "linerate"
                || own
                    .iter()
                    .any(|c| label.starts_with(&format!("linerate__subcmd__{c}")));
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn bash_completions_snapshot() {
    let script = stdout(&["completions", "bash"]);
    let cases = bash_cases_of_own_commands(&script);
    assert!(
        cases.contains("linerate__subcmd__calc__subcmd__rate)"),
        "{cases}"
    );
    insta::assert_snapshot!(cases);
}

/// The bash script parses, and completing `linerate calc rate --li` offers `--link`.
#[test]
fn bash_completion_completes_a_flag() {
    let script = stdout(&["completions", "bash"]);
    let tmp = tempdir();
    let path = tmp.path().join("linerate.bash");
    std::fs::write(&path, &script).expect("write script");
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(&path)
        .status()
        .expect("run bash");
    assert!(syntax.success(), "bash -n rejects the completion script");
    let probe = format!(
        "source '{}'; COMP_WORDS=(linerate calc rate --li); COMP_CWORD=3; \
         _linerate linerate --li rate; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display()
    );
    let out = Command::new("bash")
        .args(["-c", &probe])
        .output()
        .expect("run bash");
    let offered = String::from_utf8_lossy(&out.stdout);
    assert_eq!(offered.trim(), "--link", "{out:?}");
}

#[test]
fn man_page_snapshot() {
    let man = stdout(&["man"]);
    assert!(man.starts_with(".ie"), "{}", &man[..40.min(man.len())]);
    insta::assert_snapshot!(man);
}

#[test]
fn man_pages_of_subcommands() {
    let page = stdout(&["man", "calc", "rate"]);
    assert!(page.contains(".TH linerate-calc-rate 1"), "{page}");
    assert!(page.contains("\\fBlinerate calc rate\\fR"), "{page}");
    insta::assert_snapshot!("man_calc", stdout(&["man", "calc"]));
    insta::assert_snapshot!("man_stat", stdout(&["man", "stat"]));
    insta::assert_snapshot!("man_logdist", stdout(&["man", "logdist"]));

    let out = run(&["man", "calc", "nope"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("linerate calc nope"), "{err}");
}

/// Every page the top page refers to (`linerate-calc(1)`, …) exists in `man --dir`.
#[test]
fn man_dir_writes_every_referenced_page() {
    let tmp = tempdir();
    let dir = tmp.path().to_str().expect("utf-8 temp path");
    stdout(&["man", "--dir", dir]);
    let top = std::fs::read_to_string(tmp.path().join("linerate.1")).expect("linerate.1");
    let mut referenced = 0;
    for line in top.lines() {
        if let Some(name) = line.strip_suffix("(1)") {
            let file = format!("{}.1", name.replace("\\-", "-"));
            assert!(
                Path::new(dir).join(&file).is_file(),
                "linerate.1 refers to {file}, which was not written"
            );
            referenced += 1;
        }
    }
    assert!(referenced >= 10, "{top}");
    let rate = std::fs::read_to_string(tmp.path().join("linerate-calc-rate.1")).expect("page");
    assert!(rate.contains("\\-\\-link"), "{rate}");
    assert!(
        std::fs::read_dir(tmp.path())
            .expect("read dir")
            .filter_map(Result::ok)
            .all(|e| !e.file_name().to_string_lossy().ends_with(".tmp")),
        "temporary files left behind"
    );

    let out = run(&["man", "--dir", "/nonexistent/lr-ra"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/lr-ra/linerate.1"));
}

#[test]
fn usage_errors_exit_2() {
    let out = run(&["no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
}

fn repo_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The recipe lines of a Makefile target.
fn make_recipe(makefile: &str, target: &str) -> Vec<String> {
    makefile
        .lines()
        .skip_while(|l| !l.starts_with(&format!("{target}:")))
        .skip(1)
        .take_while(|l| l.starts_with('\t'))
        .map(|l| l.trim().to_owned())
        .collect()
}

/// The README's install and test commands are what the Makefile runs, and CI runs exactly the
/// README's test command.
#[test]
fn readme_commands_match_the_makefile_and_ci() {
    let readme = repo_file("README.md");
    let makefile = repo_file("Makefile");
    for (command, target) in [("make install", "install"), ("make test", "test")] {
        let line = readme
            .lines()
            .find(|l| l.starts_with(command))
            .unwrap_or_else(|| panic!("README has no `{command}` line"));
        let promised = line
            .split_once("# = ")
            .map(|(_, c)| c.trim())
            .unwrap_or_else(|| panic!("README's `{command}` line says what it runs: {line}"));
        assert_eq!(make_recipe(&makefile, target), [promised], "{command}");
    }
    let ci = repo_file(".ci/run");
    assert!(
        ci.lines().any(|l| l.trim() == "make test"),
        ".ci/run must run the README's test command"
    );
}

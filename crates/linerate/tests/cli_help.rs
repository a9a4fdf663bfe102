//! The command line's shape as users see it: `--help`, completions and the man page, generated
//! from the clap definitions and pinned by snapshots.

use std::process::Command;

fn linerate(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_linerate"))
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .expect("run linerate")
}

fn stdout(args: &[&str]) -> String {
    let out = linerate(args);
    assert!(out.status.success(), "linerate {args:?} failed: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

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

#[test]
fn man_page_lists_subcommands() {
    let man = stdout(&["man"]);
    assert!(man.starts_with(".ie"), "{}", &man[..40.min(man.len())]);
    assert!(man.contains("linerate\\-calc") || man.contains("calc"));
}

#[test]
fn usage_errors_exit_2() {
    let out = linerate(&["no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
}

//! Snapshots of `linerate lab` help texts (they document the flag grammar).

#![forbid(unsafe_code)]

use std::process::Command;

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_linerate"))
        .args(args)
        .env_remove("COLUMNS")
        .output();
    match out {
        Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
        Err(e) => panic!("cannot run linerate: {e}"),
    }
}

#[test]
fn help_lab() {
    insta::assert_snapshot!(help(&["lab", "--help"]));
}

#[test]
fn help_lab_up() {
    insta::assert_snapshot!(help(&["lab", "up", "--help"]));
}

#[test]
fn help_lab_run() {
    insta::assert_snapshot!(help(&["lab", "run", "--help"]));
}

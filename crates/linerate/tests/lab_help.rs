//! Snapshots of `linerate lab` help texts (they document the flag grammar).

#![forbid(unsafe_code)]

mod support;

fn help(args: &[&str]) -> String {
    String::from_utf8_lossy(&support::bin::run(args).stdout).into_owned()
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

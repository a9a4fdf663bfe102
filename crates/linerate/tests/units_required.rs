//! No silent unit guesses (issue 23 item 1), through the binary: a bare number is refused with
//! the likely form wherever it is not the user's habit, a negative value says "negative", and
//! implausible values are warned about. (Every flag is checked against the rule by the
//! conventions test in src/cli/conventions.rs; these are the commands the issue names.)

#![forbid(unsafe_code)]

mod support;

use support::bin::{run, stdout};
use support::{arg, tempdir};

fn refused(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn bare_numbers_are_refused_with_the_likely_form() {
    let dir = tempdir();
    let conf = dir.path().join("sysctl.conf");
    std::fs::write(&conf, "net.core.somaxconn = 4096\n").expect("write");
    let log = dir.path().join("access.log");
    std::fs::write(&log, "").expect("write");
    for (args, want) in [
        (
            vec!["calc", "bdp", "--rate", "1G", "--rtt", "80"],
            "'80' needs a unit: 80ms?",
        ),
        (
            vec!["lint", arg(&conf), "--rate", "1G", "--rtt", "80"],
            "'80' needs a unit: 80ms?",
        ),
        (
            vec!["tune", "--ram", "8", "--rate", "1G", "--rtt", "80ms"],
            "'8' needs a unit: 8KiB, 8MiB or 8GiB?",
        ),
        (
            vec!["lab", "up", "demo", "--delay", "20"],
            "'20' needs a unit: 20ms?",
        ),
        (
            vec!["logdist", arg(&log), "--bin", "100"],
            "'100' needs a unit: 100ms?",
        ),
        (
            vec!["calc", "rate", "--link", "10000000000"],
            "needs a unit: 10Gbit/s?",
        ),
        (
            vec!["client", "127.0.0.1", "--connect-timeout", "2"],
            "'2' needs a unit: 2ms?",
        ),
    ] {
        let err = refused(&args);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // The habits stay: iperf3's -t seconds and -l bytes (parsed, then refused for another
    // reason: nothing listens on port 1).
    let out = run(&["client", "127.0.0.1", "-p", "1", "-t", "1", "-l", "1400"]);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("needs a unit"),
        "{out:?}"
    );
}

#[test]
fn negative_values_say_negative() {
    for args in [
        vec!["calc", "bdp", "--rate", "-10G", "--rtt", "80ms"],
        vec!["tune", "--rate", "1G", "--rtt", "-80ms"],
        vec!["lab", "up", "demo", "--rate", "-1G"],
    ] {
        let err = refused(&args);
        assert!(err.contains("is negative"), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    }
}

#[test]
fn implausible_values_are_warned_about() {
    let out = run(&[
        "tune", "--ram", "8MiB", "--rate", "1G", "--rtt", "12s", "--kernel", "6.18",
    ]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--ram 8 MiB: less than 64 MiB"), "{err}");
    assert!(
        err.contains("--rtt 12 s: a round trip longer than 10 s"),
        "{err}"
    );
    // The RAM written in the profile is what was given, with its unit.
    let text = stdout(&["tune", "--ram", "8GiB", "--rate", "1G", "--rtt", "80ms"]);
    assert!(text.contains("Host: RAM 8 GiB"), "{text}");
}

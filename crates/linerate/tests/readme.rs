//! The README tells one story (issue 23 item 10): no sentence from before the traffic engine,
//! the ministat it matches named (and how Debian's differs, checked against the binary), the
//! conventions and exit codes written once, and `make install` stripping the debug info.

#![forbid(unsafe_code)]

mod support;

use std::path::Path;

use support::{arg, tempdir};

fn repo_file(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_readme_tells_one_story() {
    let readme = repo_file("README.md");
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        !flat.contains("Until the linerate traffic engine is wired in"),
        "the stale iperf3 sentence is back"
    );
    assert!(flat.contains("with linerate's own traffic engine as the load"));
    // Which ministat `stat` matches, and how Debian's older one differs.
    assert!(flat.contains("the `ministat` of current FreeBSD"));
    assert!(flat.contains("Debian's `ministat` package (20150715) is an older copy"));
    assert!(flat.contains("1 2 3 4 has median 2.5 here, 3 there"));
    // The conventions and the exit codes, once.
    assert!(readme.contains("## Command-line conventions"));
    for code in ["| 130 |", "| 143 |", "| 2 |"] {
        assert_eq!(readme.matches(code).count(), 1, "{code}");
    }
    for flag in [
        "`-t, --duration DURATION`",
        "`--input-format FORMAT`",
        "`--db PATH`",
    ] {
        assert!(readme.contains(flag), "{flag}");
    }
}

/// What the README says of the median of an even count is what `linerate stat` prints.
#[test]
fn the_median_of_an_even_count_is_freebsds() {
    let dir = tempdir();
    let data = dir.path().join("four.txt");
    std::fs::write(&data, "1\n2\n3\n4\n").expect("write");
    let out = support::bin::stdout(&["stat", "-n", arg(&data)]);
    let row = out.lines().last().unwrap_or_default();
    let cells: Vec<&str> = row.split_whitespace().collect();
    // x N Min Max Median Avg Stddev
    assert_eq!(cells.get(5), Some(&"2.5"), "{out}");
}

#[test]
fn make_install_strips_the_debug_info() {
    let makefile = repo_file("Makefile");
    let install = makefile
        .split("install:")
        .nth(1)
        .and_then(|rest| rest.lines().nth(1))
        .unwrap_or_default();
    assert!(
        install.contains("cargo install --locked --path crates/linerate"),
        "{install}"
    );
    assert!(install.contains("strip"), "{install}");
}

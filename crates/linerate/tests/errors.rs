//! Errors that name the thing, once (issue 23 item 8): binary files are refused as "not a text
//! file" (exit 2) by stat, lint and logdist; a long binary line is quoted as a few dozen
//! escaped characters; a missing file is named once with the OS reason once (no "(os error
//! N)", no `file:0:0:`); a connect that never completes says it timed out connecting, and a
//! connection nobody answers says so.

#![forbid(unsafe_code)]

mod support;

use std::net::TcpListener;
use std::process::Output;
use std::time::Duration;

use support::bin::{linerate, run, run_bounded};
use support::netns::Netns;
use support::{arg, namespaces, require, tempdir};

fn error_of(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("linerate: "), "{err}");
    err
}

/// A binary that is not text: an ELF header, NUL bytes, and 4 KiB of noise.
fn binary_bytes() -> Vec<u8> {
    let mut b = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0".to_vec();
    b.extend((0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
    b
}

#[test]
fn binary_files_are_refused_as_not_text() {
    let dir = tempdir();
    let bin = dir.path().join("bin.dat");
    std::fs::write(&bin, binary_bytes()).expect("write");
    for args in [
        vec!["stat", arg(&bin)],
        vec!["lint", "--os", "linux", arg(&bin)],
        vec!["logdist", arg(&bin)],
        vec!["logdist", "--input-format", "nginx", arg(&bin)],
    ] {
        let err = error_of(&run(&args));
        assert!(err.contains("bin.dat: not a text file"), "{args:?}: {err}");
        assert!(err.len() < 200, "{args:?}: {err}");
    }
}

#[test]
fn a_long_binary_line_is_quoted_short() {
    let dir = tempdir();
    // No NUL byte (so the file is text), but a 3000-byte line of control characters (none of
    // them white space, so it is one token).
    let garbage: String = (0..3000).map(|i| char::from(14 + (i % 18) as u8)).collect();
    let stat_file = dir.path().join("numbers.txt");
    std::fs::write(&stat_file, format!("1\n2\n{garbage}\n")).expect("write");
    let err = error_of(&run(&["stat", arg(&stat_file)]));
    assert!(err.contains("Invalid data on line 3"), "{err}");
    assert!(err.contains("more bytes"), "{err}");
    assert!(err.len() < 250, "{} bytes: {err}", err.len());

    let log = dir.path().join("access.log");
    std::fs::write(&log, format!("{garbage}\n")).expect("write");
    let err = error_of(&run(&["logdist", arg(&log)]));
    assert!(err.contains("more bytes"), "{err}");
    assert!(err.len() < 300, "{} bytes: {err}", err.len());

    let conf = dir.path().join("sysctl.conf");
    std::fs::write(&conf, format!("{garbage}\n")).expect("write");
    let out = run(&["lint", "--os", "linux", arg(&conf)]);
    let text = String::from_utf8_lossy(&out.stdout);
    let longest = text.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 200, "a finding line is {longest} bytes: {text}");
}

#[test]
fn a_missing_file_is_named_once_with_the_os_reason_once() {
    let dir = tempdir();
    let missing = dir.path().join("nonexist.toml");
    for args in [
        vec!["stat", arg(&missing)],
        vec!["lint", arg(&missing)],
        vec!["logdist", arg(&missing)],
        vec!["lab", "run", arg(&missing)],
    ] {
        let err = error_of(&run(&args));
        // stat keeps ministat's capital C (its messages are ministat's, pinned by goldens).
        assert_eq!(
            err.trim().to_lowercase(),
            format!(
                "linerate: cannot open {}: no such file or directory",
                missing.display()
            )
            .to_lowercase(),
            "{args:?}"
        );
    }
}

/// The server accepted the connection (or something did on its behalf) but never spoke.
#[test]
fn a_silent_peer_is_told_apart_from_a_connect_timeout() {
    let l = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = l.local_addr().expect("addr").port().to_string();
    let hold = std::thread::spawn(move || l.accept().map(|(s, _)| s));
    let out = run_bounded(
        linerate().args([
            "client",
            "127.0.0.1",
            "-p",
            &port,
            "--connect-timeout",
            "1s",
        ]),
        Duration::from_secs(20),
    );
    let err = error_of(&out);
    assert!(
        err.contains("connected, but the server said nothing"),
        "{err}"
    );
    drop(hold);
}

/// SYNs dropped (nftables in a namespace): the connect itself times out, and says so.
#[test]
fn a_connect_that_never_completes_says_it_timed_out_connecting() {
    require!(namespaces(), support::program("nft"));
    let ns = Netns::with_loopback("err");
    ns.nft_load(
        "table inet lr {\n chain out {\n type filter hook output priority 0;\n \
         tcp dport 5201 drop\n }\n}\n",
    );
    let out = run_bounded(
        ns.linerate().args([
            "client",
            "127.0.0.1",
            "--connect-timeout",
            "1s",
            "--no-store",
        ]),
        Duration::from_secs(20),
    );
    let err = error_of(&out);
    assert!(err.contains("cannot connect to 127.0.0.1:5201"), "{err}");
    assert!(
        err.contains("timed out after 1.0 s while connecting"),
        "{err}"
    );
}

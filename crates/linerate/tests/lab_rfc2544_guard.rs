//! One measurement of a lab at a time (issue 32 item 4): a second `lab rfc2544` on a lab that
//! another is measuring is refused, naming the first (pid, command, since when), and the lab's
//! forwarding is not touched by it; a lock left by a measurement killed with `kill -9` is taken
//! over by the next one, which says so.

#![forbid(unsafe_code)]

mod support;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use support::lab::Lab;
use support::{require, root};

/// A short `lab rfc2544` of 64-byte frames on `lab` (at most `trials` trials of `trial`), in
/// the background.
fn start(lab: &Lab, trial: &str, trials: &str) -> Child {
    lab.cmd()
        .args(["rfc2544", &lab.name, "--frame", "64", "--trial", trial])
        .args([
            "--initial-trial",
            "200ms",
            "--max-trials",
            trials,
            "--repeat",
            "1",
        ])
        .args([
            "--headroom-trial",
            "500ms",
            "--no-latency",
            "--no-store",
            "--json",
            "-q",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run linerate lab rfc2544")
}

/// Waits (bounded) until the lab's lock file names `pid`.
fn wait_locked(lab: &Lab, pid: u32) {
    let lock = lab.state().join(format!("{}.rfc2544.lock", lab.name));
    let started = Instant::now();
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.contains(&format!("\"pid\":{pid}"))) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no lock naming pid {pid} at {}",
            lock.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (bounded) for `child` and returns its output; it must have succeeded.
fn finish(child: Child, limit: Duration) -> String {
    let pid = child.id();
    let started = Instant::now();
    let mut child = child;
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("lab rfc2544 (pid {pid}) still ran after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("collect output");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "lab rfc2544 (pid {pid}) failed: {err}"
    );
    err
}

#[test]
fn a_second_measurement_of_a_lab_is_refused_naming_the_first_and_a_dead_one_s_lock_taken_over() {
    require!(root());
    let lab = Lab::new('l');
    lab.ok(&["up", &lab.name, "--topology", "router"]);

    // Two at once: the second is refused while the first measures, naming it.
    let first = start(&lab, "500ms", "8");
    let pid = first.id();
    wait_locked(&lab, pid);
    let out = lab.run(&[
        "rfc2544",
        &lab.name,
        "--frame",
        "64",
        "--trial",
        "1s",
        "--no-store",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "lab {} is being measured by pid {pid} (",
            lab.name
        )),
        "{err}"
    );
    assert!(
        err.contains("lab rfc2544") && err.contains(" UTC ("),
        "{err}"
    );
    finish(first, Duration::from_secs(300));
    // Its forwarding was never left off by the refused one, and the lock is gone.
    let out = lab.exec("dut", &["cat", "/proc/sys/net/ipv4/ip_forward"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
    assert!(
        !lab.state()
            .join(format!("{}.rfc2544.lock", lab.name))
            .exists()
    );

    // One killed with -9 while measuring: the next takes its lock over, and says so.
    let mut killed = start(&lab, "2s", "20");
    let dead = killed.id();
    wait_locked(&lab, dead);
    std::thread::sleep(Duration::from_millis(500));
    killed.kill().expect("kill -9");
    let _ = killed.wait();
    let next = start(&lab, "500ms", "4");
    let err = finish(next, Duration::from_secs(300));
    assert!(
        err.contains(&format!("took over the measuring lock from pid {dead} (")),
        "{err}"
    );
    let out = lab.exec("dut", &["cat", "/proc/sys/net/ipv4/ip_forward"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
}

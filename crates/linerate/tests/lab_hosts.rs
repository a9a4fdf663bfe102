//! Issue 31's experiments on real hosts, tested with "hosts" linerate did not build: two
//! network namespaces made here with plain `ip` commands, joined by a veth pair (198.19.77.0/24,
//! in RFC 2544's benchmarking range), each running a real OpenSSH server with a throw-away host
//! key and a throw-away client key made by this test. `lab run` reaches them over ssh
//! (BatchMode, an ssh_config of this test's), sets each variant's sysctls there through
//! `linerate tune --apply` (journaled), runs server and client between them, and rolls every
//! host back: at the end, and — after a `kill -9` of the runner — in the next run, which says
//! so. Everything is removed on drop, also when a test fails.

#![forbid(unsafe_code)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::netns::Netns;
use support::{program, require, root};

/// Two namespaces, a veth pair between them and an sshd in each; the daemons are killed and
/// the namespaces deleted on drop.
struct Hosts {
    sender: Netns,
    recv: Netns,
    dir: tempfile::TempDir,
}

const GEN: &str = "198.19.77.1";
const RECV: &str = "198.19.77.2";

fn ok(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?}: {out:?}");
}

impl Hosts {
    fn new(tag: &str) -> Hosts {
        let sender = Netns::with_loopback(&format!("lh-{tag}g"));
        let recv = Netns::with_loopback(&format!("lh-{tag}r"));
        ok(Command::new("ip")
            .args(["-n", sender.name(), "link", "add", "lh0", "type", "veth"])
            .args(["peer", "name", "lh1", "netns", recv.name()]));
        sender.ip(&["addr", "add", &format!("{GEN}/24"), "dev", "lh0"]);
        recv.ip(&["addr", "add", &format!("{RECV}/24"), "dev", "lh1"]);
        sender.ip(&["link", "set", "lh0", "up"]);
        recv.ip(&["link", "set", "lh1", "up"]);
        let dir = support::tempdir();
        let d = dir.path();
        for key in ["hostkey", "userkey"] {
            ok(Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(d.join(key)));
        }
        std::fs::copy(d.join("userkey.pub"), d.join("authorized_keys")).expect("copy key");
        std::fs::create_dir_all("/run/sshd").expect("mkdir /run/sshd");
        for ns in [&sender, &recv] {
            let config = d.join(format!("sshd_{}", ns.name()));
            std::fs::write(
                &config,
                format!(
                    "HostKey {d}/hostkey\nAuthorizedKeysFile {d}/authorized_keys\n\
                     PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\n\
                     PidFile {d}/{n}.pid\n",
                    d = d.display(),
                    n = ns.name()
                ),
            )
            .expect("write sshd config");
            ok(ns.exec("/usr/sbin/sshd").arg("-f").arg(&config));
        }
        std::fs::write(
            d.join("ssh_config"),
            format!(
                "Host *\n  IdentityFile {d}/userkey\n  UserKnownHostsFile {d}/known_hosts\n  \
                 StrictHostKeyChecking accept-new\n  ConnectTimeout 10\n",
                d = d.display()
            ),
        )
        .expect("write ssh_config");
        Hosts { sender, recv, dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// An experiment over both hosts: the kernel's default against tiny socket buffers.
    fn experiment(&self, linerate: &Path, repetitions: u32) -> PathBuf {
        let path = self.path("exp.toml");
        std::fs::write(
            &path,
            format!(
                r#"[experiment]
name = "buffers-on-hosts"
repetitions = {repetitions}
[hosts]
ssh_config = "{dir}/ssh_config"
[hosts.gen]
ssh = "root@{GEN}"
linerate = "{bin}"
journal_dir = "{dir}/journal-gen"
[hosts.recv]
ssh = "root@{RECV}"
address = "{RECV}"
linerate = "{bin}"
journal_dir = "{dir}/journal-recv"
[workload]
mode = "tcp"
duration = "2s"
[[variant]]
name = "default"
[[variant]]
name = "tiny-buffers"
sysctl = ["gen:net.ipv4.tcp_wmem=4096 4096 4096", "recv:net.ipv4.tcp_rmem=4096 4096 4096"]
"#,
                dir = self.dir.path().display(),
                bin = linerate.display()
            ),
        )
        .expect("write the experiment");
        path
    }

    /// `linerate lab run EXP --no-store` from inside recv (which reaches both over the veth).
    fn runner(&self, exp: &Path) -> Command {
        let mut cmd = self.recv.linerate();
        cmd.args(["lab", "run"]).arg(exp).arg("--no-store");
        cmd
    }

    fn buffers(&self) -> (String, String) {
        let read = |ns: &Netns, key: &str| {
            let out = ns
                .exec("sysctl")
                .args(["-n", key])
                .output()
                .expect("sysctl");
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        (
            read(&self.sender, "net.ipv4.tcp_wmem"),
            read(&self.recv, "net.ipv4.tcp_rmem"),
        )
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for ns in [&self.sender, &self.recv] {
            if let Ok(pid) = std::fs::read_to_string(self.path(&format!("{}.pid", ns.name()))) {
                let _ = Command::new("kill").arg(pid.trim()).status();
            }
        }
    }
}

fn linerate_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_linerate"))
}

#[test]
fn buffers_on_two_ssh_hosts_are_proven_at_95_percent_and_every_host_rolled_back() {
    require!(root(), program("ssh"), program("/usr/sbin/sshd"));
    let hosts = Hosts::new("p");
    let before = hosts.buffers();
    let exp = hosts.experiment(&linerate_binary(), 3);
    let out = support::bin::run_bounded(&mut hosts.runner(&exp), Duration::from_secs(240));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{text}");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("tiny-buffers") && l.contains('%'))
        .unwrap_or_else(|| panic!("no verdict line: {text}"));
    assert!(line.contains("proven at 95 %"), "{text}");
    // The host facts of both hosts.
    assert!(text.contains(&format!("gen root@{GEN}")), "{text}");
    assert!(text.contains(&format!("recv root@{RECV}")), "{text}");
    assert_eq!(hosts.buffers(), before, "every sysctl reads as before");
}

#[test]
fn a_runner_killed_mid_run_is_rolled_back_by_the_next_run_which_says_so() {
    require!(root(), program("ssh"), program("/usr/sbin/sshd"));
    let hosts = Hosts::new("k");
    let before = hosts.buffers();
    let exp = hosts.experiment(&linerate_binary(), 3);
    let mut runner = hosts
        .runner(&exp)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start lab run");
    // Wait for the variant to be set on gen, then kill -9 the runner there and then.
    let deadline = Instant::now() + Duration::from_secs(60);
    while hosts.buffers().0 != "4096\t4096\t4096" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = runner.kill();
    let _ = runner.wait();
    assert_eq!(
        hosts.buffers().0,
        "4096\t4096\t4096",
        "the variant was never set on gen"
    );
    // The next run finds the journal, rolls back and says so (a one-run experiment).
    let exp = hosts.experiment(&linerate_binary(), 1);
    let out = support::bin::run_bounded(&mut hosts.runner(&exp), Duration::from_secs(180));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("an earlier run did not finish; rolled back"),
        "{err}"
    );
    assert_eq!(hosts.buffers(), before, "every sysctl reads as before");
}

#[test]
fn a_host_without_linerate_is_refused_before_anything_changes() {
    require!(root(), program("ssh"), program("/usr/sbin/sshd"));
    let hosts = Hosts::new("n");
    let before = hosts.buffers();
    let exp = hosts.experiment(Path::new("/nonexistent/linerate"), 1);
    let out = support::bin::run_bounded(&mut hosts.runner(&exp), Duration::from_secs(60));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains(&format!("root@{GEN}")), "{err}");
    assert!(err.contains("linerate is not installed there"), "{err}");
    assert_eq!(hosts.buffers(), before);
}

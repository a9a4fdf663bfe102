//! A throw-away network namespace: a unique `lr-` name, deleted on drop (also when the test
//! fails). Tests first `require!(namespaces())`.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use super::bin::{BIN, isolate};

/// A network namespace of this test process, deleted on drop.
pub struct Netns {
    name: String,
}

impl Netns {
    /// `lr-<tag>-<pid>-<n>`: unique to this process and call, so tests running at the same
    /// time (here or in other checkouts) never share one.
    pub fn new(tag: &str) -> Netns {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let name = format!("lr-{tag}-{}-{n}", std::process::id());
        let out = Command::new("ip")
            .args(["netns", "add", &name])
            .output()
            .expect("run ip netns add");
        assert!(
            out.status.success(),
            "ip netns add {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Netns { name }
    }

    /// [`Netns::new`] with its loopback interface up.
    pub fn with_loopback(tag: &str) -> Netns {
        let ns = Netns::new(tag);
        ns.ip(&["link", "set", "lo", "up"]);
        ns
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Two namespaces (`TAGc`, `TAGs`) joined by a veth pair made inside them (nothing lands
    /// in the host's namespace, and both ends go with them): `NET.1/30` on the first (the
    /// client's), `NET.2/30` on the second, both up.
    pub fn veth_pair(tag: &str, net: &str) -> (Netns, Netns) {
        let client = Netns::with_loopback(&format!("{tag}c"));
        let server = Netns::with_loopback(&format!("{tag}s"));
        let (a, b) = (format!("{tag}0"), format!("{tag}1"));
        let out = Command::new("ip")
            .args(["-n", client.name(), "link", "add", &a, "type", "veth"])
            .args(["peer", "name", &b, "netns", server.name()])
            .output()
            .expect("run ip link add");
        assert!(out.status.success(), "veth: {out:?}");
        client.ip(&["addr", "add", &format!("{net}.1/30"), "dev", &a]);
        server.ip(&["addr", "add", &format!("{net}.2/30"), "dev", &b]);
        client.ip(&["link", "set", &a, "up"]);
        server.ip(&["link", "set", &b, "up"]);
        (client, server)
    }

    /// `ip -n NAME ARGS`, which must succeed.
    pub fn ip(&self, args: &[&str]) {
        let out = Command::new("ip")
            .args(["-n", &self.name])
            .args(args)
            .output()
            .expect("run ip");
        assert!(
            out.status.success(),
            "ip -n {} {args:?}: {}",
            self.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `program` run inside the namespace.
    pub fn exec(&self, program: &str) -> Command {
        exec_in(&self.name, program)
    }

    /// `linerate` run inside the namespace, isolated like [`super::bin::linerate`].
    pub fn linerate(&self) -> Command {
        linerate_in(&self.name)
    }

    /// `nft ARGS` inside the namespace, which must succeed.
    pub fn nft(&self, args: &[&str]) {
        let out = self.exec("nft").args(args).output().expect("run nft");
        assert!(
            out.status.success(),
            "nft {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Loads an nftables ruleset (`nft -f -`) inside the namespace; it must load.
    pub fn nft_load(&self, rules: &str) {
        let mut nft = self
            .exec("nft")
            .args(["-f", "-"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run nft");
        nft.stdin
            .take()
            .expect("piped stdin")
            .write_all(rules.as_bytes())
            .expect("write the rules to nft");
        let out = nft.wait_with_output().expect("wait for nft");
        assert!(
            out.status.success(),
            "nft could not load {rules}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The namespace's UDP `RcvbufErrors` (datagrams the kernel dropped because the receiving
    /// socket's buffer was full), from its `/proc/net/snmp`.
    pub fn udp_rcvbuf_errors(&self) -> u64 {
        let out = self
            .exec("cat")
            .arg("/proc/net/snmp")
            .output()
            .expect("read /proc/net/snmp");
        let text = String::from_utf8_lossy(&out.stdout);
        let udp: Vec<&str> = text.lines().filter(|l| l.starts_with("Udp: ")).collect();
        assert_eq!(udp.len(), 2, "two Udp lines in /proc/net/snmp: {text}");
        let names = udp[0].split_whitespace();
        let values = udp[1].split_whitespace();
        names
            .zip(values)
            .find(|(name, _)| *name == "RcvbufErrors")
            .and_then(|(_, value)| value.parse().ok())
            .expect("Udp RcvbufErrors")
    }

    /// `nft list ruleset` inside the namespace.
    pub fn nft_ruleset(&self) -> String {
        let out = self
            .exec("nft")
            .args(["list", "ruleset"])
            .output()
            .expect("run nft");
        assert!(out.status.success(), "nft list ruleset: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Nothing to do about a failure here but say it; the test's own result stands.
        match Command::new("ip")
            .args(["netns", "del", &self.name])
            .status()
        {
            Ok(s) if s.success() => {}
            other => eprintln!("cannot delete network namespace {}: {other:?}", self.name),
        }
    }
}

/// `program` run inside the namespace named `ns`.
pub fn exec_in(ns: &str, program: &str) -> Command {
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns, program]);
    cmd
}

/// `linerate` run inside the namespace named `ns`, isolated.
pub fn linerate_in(ns: &str) -> Command {
    let mut cmd = exec_in(ns, BIN);
    isolate(&mut cmd);
    cmd
}

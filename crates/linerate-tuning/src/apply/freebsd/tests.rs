//! The FreeBSD applier against a fake kernel: values stored as the bytes `sysctl(3)` moves,
//! typed and flagged like the real MIBs (types and flags from FreeBSD's sources: `sysctl -t`
//! and the `SYSCTL_*` declarations), writes refused as FreeBSD refuses them.

use std::collections::BTreeMap;
use std::io;

use linerate_sys::sysctl::{
    FLAG_RD, FLAG_TUN, FLAG_VNET, FLAG_WR, OidInfo, SysctlError, decode, encode,
};

use super::*;
use crate::apply::JournalState;

const RW: u32 = FLAG_RD | FLAG_WR;
const INT: u32 = 2;
const STRING: u32 = 3;
const OPAQUE: u32 = 5;
const ULONG: u32 = 8;
const NODE: u32 = 1;

/// A fake kernel: MIBs with their description and bytes.
#[derive(Debug, Default)]
struct FakeKernel {
    mibs: BTreeMap<String, (OidInfo, Vec<u8>)>,
    /// A handler that stores this instead of what was written (like a clamp).
    clamp: BTreeMap<String, String>,
    /// A handler that refuses every value (EINVAL).
    refuse: Vec<String>,
    /// Every successful write.
    writes: Vec<(String, String)>,
}

fn os_err(name: &str, errno: i32) -> SysctlError {
    SysctlError::Os {
        name: name.into(),
        source: io::Error::from_raw_os_error(errno),
    }
}

impl FakeKernel {
    fn add(&mut self, name: &str, word: u32, format: &str, value: &str) -> &mut Self {
        let info = OidInfo::new(word, format).unwrap();
        let bytes = if info.kind == linerate_sys::sysctl::Kind::Node {
            Vec::new()
        } else if info.kind == linerate_sys::sysctl::Kind::Opaque {
            vec![0; 20]
        } else {
            encode(&info, value).unwrap()
        };
        self.mibs.insert(name.into(), (info, bytes));
        self
    }

    /// What a FreeBSD 14 router has for the keys the tests touch.
    fn router() -> FakeKernel {
        let mut k = FakeKernel::default();
        k.add("kern.ipc.maxsockbuf", RW | ULONG, "LU", "2097152")
            .add(
                "net.inet.tcp.sendbuf_max",
                RW | FLAG_VNET | INT,
                "I",
                "2097152",
            )
            .add(
                "net.inet.tcp.recvbuf_max",
                RW | FLAG_VNET | INT,
                "I",
                "2097152",
            )
            .add(
                "net.inet.tcp.cc.algorithm",
                RW | FLAG_VNET | STRING,
                "A",
                "newreno",
            )
            .add("net.inet.ip.forwarding", RW | FLAG_VNET | INT, "I", "0")
            .add("kern.ipc.nmbclusters", RW | FLAG_TUN | INT, "I", "1014318")
            .add("net.isr.maxthreads", FLAG_RD | FLAG_TUN | INT, "I", "1")
            .add("net.isr.bindthreads", FLAG_RD | FLAG_TUN | INT, "I", "0")
            .add("kern.ostype", FLAG_RD | STRING, "A", "FreeBSD")
            .add("kern.clockrate", FLAG_RD | OPAQUE, "S,clockinfo", "")
            .add("net.inet.tcp", RW | NODE, "N", "");
        k
    }

    fn value(&self, name: &str) -> String {
        let (info, bytes) = &self.mibs[name];
        decode(info, bytes).unwrap()
    }
}

impl Sysctls for FakeKernel {
    fn info(&mut self, name: &str) -> Result<OidInfo, SysctlError> {
        self.mibs
            .get(name)
            .map(|(i, _)| i.clone())
            .ok_or_else(|| os_err(name, 2))
    }

    fn get(&mut self, name: &str) -> Result<String, SysctlError> {
        let (info, bytes) = self.mibs.get(name).ok_or_else(|| os_err(name, 2))?;
        decode(info, bytes).map_err(|source| SysctlError::Value {
            name: name.into(),
            source,
        })
    }

    fn set(&mut self, name: &str, text: &str) -> Result<(), SysctlError> {
        let (info, _) = self.mibs.get(name).ok_or_else(|| os_err(name, 2))?;
        let info = info.clone();
        // sysctl_root: a write to a MIB without CTLFLAG_WR is EPERM.
        if !info.writable() {
            return Err(os_err(name, 1));
        }
        let mut bytes = encode(&info, text).map_err(|source| SysctlError::Value {
            name: name.into(),
            source,
        })?;
        if self.refuse.iter().any(|r| r == name) {
            return Err(os_err(name, 22));
        }
        if let Some(c) = self.clamp.remove(name) {
            bytes = encode(&info, &c).unwrap();
        }
        self.mibs.insert(name.into(), (info, bytes));
        self.writes.push((name.into(), text.into()));
        Ok(())
    }
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

struct Setup {
    dir: tempfile::TempDir,
    opts: ApplyOptions,
    paths: Paths,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let opts = ApplyOptions {
        journal_dir: dir.path().join("journal"),
        explicit: false,
        dry_run: false,
    };
    let paths = Paths {
        journal_dir: opts.journal_dir.clone(),
        loader: dir.path().join("boot/loader.conf.d/linerate.conf"),
    };
    Setup { dir, opts, paths }
}

fn line(key: &str, value: &str) -> LoaderLine {
    LoaderLine {
        key: key.into(),
        value: value.into(),
        comment: None,
    }
}

#[test]
fn access_follows_the_mib_flags() {
    let mut b = SysctlBackend::new(FakeKernel::router());
    assert_eq!(b.access("kern.ipc.maxsockbuf"), Access::Writable);
    assert_eq!(b.access("kern.ipc.nmbclusters"), Access::Writable, "RWTUN");
    assert_eq!(b.access("net.isr.maxthreads"), Access::Tunable, "RDTUN");
    assert_eq!(b.access("kern.ostype"), Access::ReadOnly);
    assert_eq!(b.access("kern.clockrate"), Access::ReadOnly, "a structure");
    assert_eq!(b.access("net.inet.tcp"), Access::Missing, "a node");
    assert_eq!(b.access("net.inet.tcp.nonesuch"), Access::Missing);
    assert!(matches!(b.read("nope.x"), Err(BackendError::Missing(_))));
    assert!(matches!(
        b.read("kern.clockrate"),
        Err(BackendError::Read { .. })
    ));
}

#[test]
fn sysctls_apply_read_back_and_roll_back_to_the_same_bytes() {
    let s = setup();
    let mut b = SysctlBackend::new(FakeKernel::router());
    let before = b.sysctls.mibs.clone();
    let req = Request {
        sysctls: pairs(&[
            ("kern.ipc.maxsockbuf", "16777216"),
            ("net.inet.tcp.sendbuf_max", "8388608"),
            ("net.inet.tcp.cc.algorithm", "newreno"),
        ]),
        ..Request::default()
    };
    let done = apply(&mut b, &req, &s.opts, &s.paths).unwrap();
    assert_eq!(done.plan.changes.len(), 2);
    assert_eq!(done.plan.unchanged, ["net.inet.tcp.cc.algorithm"]);
    assert_eq!(b.sysctls.value("kern.ipc.maxsockbuf"), "16777216");
    assert_eq!(done.boot_file, None);
    let path = done.journal.unwrap();
    let j = Journal::load(&path).unwrap();
    assert_eq!(j.state, JournalState::Applied);
    assert_eq!(j.entries[0].old, "2097152");
    assert!(j.files.is_empty());

    let back = rollback_path(&mut b, &path).unwrap();
    assert_eq!(back.restored.len(), 2);
    assert_eq!(
        b.sysctls.mibs, before,
        "every MIB holds its old bytes again"
    );
    assert_eq!(
        Journal::load(&path).unwrap().state,
        JournalState::RolledBack
    );
}

#[test]
fn a_clamped_value_restores_everything_already_changed() {
    let s = setup();
    let mut k = FakeKernel::router();
    k.clamp
        .insert("net.inet.tcp.recvbuf_max".into(), "4194304".into());
    let mut b = SysctlBackend::new(k);
    let req = Request {
        sysctls: pairs(&[
            ("kern.ipc.maxsockbuf", "16777216"),
            ("net.inet.tcp.recvbuf_max", "8388608"),
        ]),
        ..Request::default()
    };
    let err = apply(&mut b, &req, &s.opts, &s.paths).unwrap_err();
    assert!(
        matches!(err, ApplyError::Restored { restored: 2, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("reads back `4194304`"), "{err}");
    assert_eq!(b.sysctls.value("kern.ipc.maxsockbuf"), "2097152");
    assert_eq!(b.sysctls.value("net.inet.tcp.recvbuf_max"), "2097152");
    let path = journal::latest(&s.opts.journal_dir).err();
    assert!(
        path.is_some(),
        "a restored journal is not offered for rollback"
    );
}

#[test]
fn text_the_type_cannot_hold_is_refused_before_the_kernel_sees_it() {
    let s = setup();
    let mut b = SysctlBackend::new(FakeKernel::router());
    let req = Request {
        sysctls: pairs(&[
            ("net.inet.tcp.sendbuf_max", "8388608"),
            ("kern.ipc.maxsockbuf", "16M"),
        ]),
        ..Request::default()
    };
    let err = apply(&mut b, &req, &s.opts, &s.paths).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("kern.ipc.maxsockbuf: the kernel refused `16M`"),
        "{text}"
    );
    assert!(
        text.contains("not a number (the setting is an unsigned long)"),
        "{text}"
    );
    assert_eq!(b.sysctls.value("net.inet.tcp.sendbuf_max"), "2097152");
    assert_eq!(b.sysctls.writes.len(), 2, "the first write and its restore");
}

#[test]
fn explicit_keys_go_where_they_can_be_set() {
    let mut b = SysctlBackend::new(FakeKernel::router());
    let r = Request::from_pairs(
        &mut b,
        &pairs(&[
            ("net.inet.ip.forwarding", "1"),
            ("net.isr.maxthreads", "4"),
            ("net.isr.bindthreads", "1"),
            ("if_ix_load", "YES"),
            ("kern.ostype", "Linux"),
        ]),
    )
    .unwrap();
    assert_eq!(
        r.sysctls,
        pairs(&[("net.inet.ip.forwarding", "1"), ("kern.ostype", "Linux")])
    );
    let loader: Vec<&str> = r.loader.iter().map(|l| l.key.as_str()).collect();
    assert_eq!(
        loader,
        ["net.isr.maxthreads", "net.isr.bindthreads", "if_ix_load"]
    );
    // The read-only key is refused by the planner with its reason.
    let s = setup();
    let opts = ApplyOptions {
        explicit: true,
        ..s.opts.clone()
    };
    let err = apply(&mut b, &r, &opts, &s.paths).unwrap_err();
    assert_eq!(err.to_string(), "kern.ostype: read-only here");
    assert!(!s.paths.loader.exists(), "nothing written after a refusal");
}

#[test]
fn loader_tunables_go_to_the_drop_in_and_roll_back_away() {
    let s = setup();
    let mut b = SysctlBackend::new(FakeKernel::router());
    let req = Request {
        sysctls: pairs(&[("net.inet.ip.forwarding", "1")]),
        loader: vec![
            LoaderLine {
                key: "net.isr.maxthreads".into(),
                value: "4".into(),
                comment: Some("one netisr thread per core".into()),
            },
            line("net.isr.bindthreads", "1"),
        ],
        not_applied: Vec::new(),
    };
    let done = apply(&mut b, &req, &s.opts, &s.paths).unwrap();
    let boot = done.boot_file.clone().unwrap();
    assert!(boot.changed && boot.needs_reboot);
    assert_eq!(boot.settings[0], ("net.isr.maxthreads".into(), "4".into()));
    let text = std::fs::read_to_string(&s.paths.loader).unwrap();
    assert!(
        text.contains("\n# one netisr thread per core\nnet.isr.maxthreads=\"4\"\n"),
        "{text}"
    );
    assert!(text.contains("\nnet.isr.bindthreads=\"1\"\n"), "{text}");
    // Tunables are not written at run time: the running value stays.
    assert_eq!(b.sysctls.value("net.isr.maxthreads"), "1");
    let path = done.journal.unwrap();
    let j = Journal::load(&path).unwrap();
    assert_eq!(j.files[0].old, None);

    // Applying the same again changes nothing and writes no journal.
    let again = apply(&mut b, &req, &s.opts, &s.paths).unwrap();
    assert!(again.journal.is_none() && !again.boot_file.unwrap().changed);

    let back = rollback_path(&mut b, &path).unwrap();
    assert_eq!(back.files, std::slice::from_ref(&s.paths.loader));
    assert!(!s.paths.loader.exists(), "the drop-in did not exist before");
    assert_eq!(b.sysctls.value("net.inet.ip.forwarding"), "0");
    let left: Vec<_> = std::fs::read_dir(s.paths.loader.parent().unwrap())
        .unwrap()
        .collect();
    assert!(left.is_empty(), "no temporary file left: {left:?}");
    drop(s.dir);
}

#[test]
fn a_failed_sysctl_puts_the_previous_drop_in_back() {
    let s = setup();
    std::fs::create_dir_all(s.paths.loader.parent().unwrap()).unwrap();
    std::fs::write(&s.paths.loader, "kern.ipc.nmbclusters=\"2000000\"\n").unwrap();
    let mut k = FakeKernel::router();
    k.refuse.push("net.inet.tcp.cc.algorithm".into());
    let mut b = SysctlBackend::new(k);
    let req = Request {
        sysctls: pairs(&[("net.inet.tcp.cc.algorithm", "htcp")]),
        loader: vec![line("net.isr.maxthreads", "4")],
        not_applied: Vec::new(),
    };
    let err = apply(&mut b, &req, &s.opts, &s.paths).unwrap_err();
    assert!(
        err.to_string().contains("the kernel refused `htcp`"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&s.paths.loader).unwrap(),
        "kern.ipc.nmbclusters=\"2000000\"\n"
    );
    assert_eq!(b.sysctls.value("net.inet.tcp.cc.algorithm"), "newreno");
}

#[test]
fn a_dry_run_changes_nothing_and_says_what_would() {
    let s = setup();
    let mut b = SysctlBackend::new(FakeKernel::router());
    let opts = ApplyOptions {
        dry_run: true,
        ..s.opts.clone()
    };
    let req = Request {
        sysctls: pairs(&[("kern.ipc.maxsockbuf", "16777216")]),
        loader: vec![line("net.isr.maxthreads", "4")],
        not_applied: Vec::new(),
    };
    let done = apply(&mut b, &req, &opts, &s.paths).unwrap();
    assert_eq!(done.plan.changes[0].new, "16777216");
    assert!(done.boot_file.unwrap().changed);
    assert!(done.journal.is_none());
    assert!(b.sysctls.writes.is_empty());
    assert!(!s.paths.loader.exists() && !s.opts.journal_dir.exists());
}

#[test]
fn a_rollback_leaves_a_drop_in_edited_since_alone() {
    let s = setup();
    let mut b = SysctlBackend::new(FakeKernel::router());
    let req = Request {
        loader: vec![line("net.isr.maxthreads", "4")],
        ..Request::default()
    };
    let path = apply(&mut b, &req, &s.opts, &s.paths)
        .unwrap()
        .journal
        .unwrap();
    std::fs::write(&s.paths.loader, "# mine now\n").unwrap();
    let err = rollback_path(&mut b, &path).unwrap_err();
    assert!(matches!(err, ApplyError::FileChanged { .. }), "{err}");
    assert_eq!(
        std::fs::read_to_string(&s.paths.loader).unwrap(),
        "# mine now\n"
    );
}

#[test]
fn loader_lines_that_would_break_the_file_are_refused() {
    let bad = |k: &str, v: &str| loader_conf(&[line(k, v)]).unwrap_err().to_string();
    assert!(bad("kern.x", "a\"b").contains("cannot hold quotes"));
    assert!(bad("kern.x", "1\nboot_verbose=\"YES\"").contains("line breaks"));
    assert!(bad("kern x", "1").contains("not a loader variable name"));
    let ok = loader_conf(&[line("hw.ix.num_queues", "8")]).unwrap();
    assert!(
        ok.starts_with("# /boot/loader.conf.d/linerate.conf\n"),
        "{ok}"
    );
    assert!(ok.ends_with("\nhw.ix.num_queues=\"8\"\n"), "{ok}");
}

#[test]
fn a_generated_router_profile_splits_by_target() {
    let mut ctx = crate::Context::new(Os::Freebsd);
    ctx.role = Some(crate::Role::Firewall);
    ctx.rate = Some("10G".parse().unwrap());
    ctx.rtt = Some("1ms".parse().unwrap());
    ctx.flows = Some(100_000);
    ctx.ifaces = vec!["ix0".into()];
    let p = crate::profile::generate(&ctx).unwrap();
    let r = Request::from_profile(&p);
    assert!(
        r.loader.iter().any(|l| l.key == "net.pf.states_hashsize"),
        "{r:?}"
    );
    assert!(
        r.not_applied
            .iter()
            .any(|s| s.key == "gateway_enable" && s.reason.starts_with("an rc.conf variable"))
    );
    assert!(r.not_applied.iter().any(|s| s.key == "pf.conf"));
    let sysctl_keys: Vec<&str> = r.sysctls.iter().map(|(k, _)| k.as_str()).collect();
    let expected: Vec<&str> = p.of(Target::Sysctl).map(|s| s.key.as_str()).collect();
    assert_eq!(sysctl_keys, expected);
}

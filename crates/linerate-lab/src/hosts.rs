//! Experiments on real hosts: the [`TestBed`] whose nodes are hosts reached over OpenSSH
//! ([`ssh::SshHost`]). Before anything changes, every host is checked ([`HostsBed::check`]):
//! reachable, `linerate` there and of this version, allowed to apply settings (root, or
//! passwordless `sudo -n` when the file says `sudo = true`); a journal an earlier run left
//! (the runner was killed) is rolled back then, and said so ([`HostsBed::recovered`]). Each
//! run applies its variant's sysctls on each host with `linerate tune --set … --apply` there
//! (journaled in the host's own journal directory), its firewall on `recv` with `nft` (in a
//! table of its own), runs `linerate server` on `recv` and `linerate client` on `gen`, then
//! rolls both back, so every run starts from the hosts as they were.

pub mod facts;
pub mod ssh;

use serde::Deserialize;

use crate::LabError;
use crate::bed::{RunFacts, TestBed};
use crate::experiment::{Experiment, HostsSpec, PpsGenerator, Variant, WorkloadMode};
use crate::firewall::{self, Firewall};
use crate::runner::Measure;
pub use facts::HostFacts;
pub use ssh::SshHost;

/// Real hosts as a test bed.
#[derive(Debug)]
pub struct HostsBed {
    gen_host: SshHost,
    recv: SshHost,
    /// `linerate --version` here: every host must print the same.
    version: String,
    /// What the check found an earlier run had left and rolled back, one line each.
    pub recovered: Vec<String>,
    /// Each host's facts, gathered by the check.
    pub facts: Vec<HostFacts>,
    /// Whether a firewall variant may be on `recv` now.
    firewall_on: bool,
    /// Whether the hosts passed the check.
    checked: bool,
}

/// The part of `tune --apply --json` the bed reads.
#[derive(Debug, Deserialize)]
struct ApplyReport {
    applied: Option<Applied>,
}

#[derive(Debug, Deserialize)]
struct Applied {
    journal: Option<String>,
}

impl HostsBed {
    /// The hosts of `spec`; `version` is this linerate's `--version` line.
    pub fn new(spec: &HostsSpec, version: &str) -> HostsBed {
        let host =
            |h: &crate::experiment::HostSpec| SshHost::new(h.clone(), spec.ssh_config.clone());
        HostsBed {
            gen_host: host(&spec.sender),
            recv: host(&spec.recv),
            version: version.trim().to_owned(),
            recovered: Vec::new(),
            facts: Vec::new(),
            firewall_on: false,
            checked: false,
        }
    }

    fn hosts(&self) -> [&SshHost; 2] {
        [&self.gen_host, &self.recv]
    }

    /// Refuses a host that cannot take part, naming it and the reason; changes nothing.
    fn preflight(&self, host: &SshHost) -> Result<(), LabError> {
        let refuse = |reason: String| LabError::Host {
            host: host.label(),
            reason,
        };
        let linerate = &host.spec.linerate;
        let r = host.run(&host.line(&[linerate, "--version"], false), ssh::SHORT)?;
        if r.code == Some(127) || r.code == Some(126) {
            return Err(refuse(format!(
                "linerate is not installed there ({linerate:?} is not on the PATH of {}; \
                 install the same linerate as here, or set linerate = \"/path/to/linerate\")",
                host.spec.ssh
            )));
        }
        if !r.ok() {
            return Err(refuse(format!(
                "`{linerate} --version` failed: {}",
                r.reason()
            )));
        }
        let theirs = r.stdout.lines().next().unwrap_or("").trim();
        if theirs != self.version {
            return Err(refuse(format!(
                "runs {theirs:?}, this is {:?}: install the same version on every host",
                self.version
            )));
        }
        let r = host.run("id -u", ssh::SHORT)?;
        if r.stdout.trim() == "0" {
            return Ok(());
        }
        if !host.spec.sudo {
            return Err(refuse(format!(
                "the user (uid {}) may not apply settings: log in as root, or set sudo = true \
                 in [hosts.{}] for passwordless sudo",
                r.stdout.trim(),
                host.spec.role
            )));
        }
        let r = host.run("sudo -n true", ssh::SHORT)?;
        if r.ok() {
            Ok(())
        } else {
            Err(refuse(format!(
                "the user may not apply settings: `sudo -n` refuses ({})",
                r.reason()
            )))
        }
    }

    /// Rolls back every journal left in `host`'s journal directory and removes the firewall
    /// table; returns one line per thing undone.
    fn restore(host: &SshHost) -> Result<Vec<String>, LabError> {
        let mut done = Vec::new();
        let dir = &host.spec.journal_dir;
        // One journal per run at most; a bound all the same.
        for _ in 0..64 {
            let words = [
                host.spec.linerate.as_str(),
                "tune",
                "--rollback",
                "--journal-dir",
                dir,
            ];
            let r = host.run(&host.line(&words, true), ssh::SHORT)?;
            if !r.ok() {
                let missing = r.stderr.contains("no journal to roll back")
                    || r.stderr.contains("No such file or directory");
                if missing {
                    break;
                }
                return Err(LabError::Host {
                    host: host.label(),
                    reason: format!("rollback in {dir} failed: {}", r.reason()),
                });
            }
            done.push(r.stdout.trim().replace('\n', "; "));
        }
        let table = format!("inet {}", firewall::HOST_TABLE);
        let probe = host.line(
            &["nft", "list", "table", "inet", firewall::HOST_TABLE],
            true,
        );
        let r = host.run(&format!("{probe} >/dev/null 2>&1"), ssh::SHORT)?;
        if r.ok() {
            host.must(
                &["nft", "delete", "table", "inet", firewall::HOST_TABLE],
                true,
            )?;
            done.push(format!("removed nftables table {table}"));
        }
        Ok(done)
    }

    /// Applies `variant`'s sysctls for `host` (none: nothing); returns the journal written.
    fn apply(host: &SshHost, variant: &Variant) -> Result<Option<String>, LabError> {
        let sets: Vec<String> = variant
            .spec
            .sysctls
            .iter()
            .filter(|s| s.node == host.spec.role)
            .map(|s| format!("{}={}", s.key, s.value))
            .collect();
        if sets.is_empty() {
            return Ok(None);
        }
        let mut words = vec![
            host.spec.linerate.as_str(),
            "tune",
            "--apply",
            "--json",
            "--journal-dir",
            &host.spec.journal_dir,
        ];
        for s in &sets {
            words.extend(["--set", s.as_str()]);
        }
        let r = host.must(&words, true)?;
        let report: ApplyReport = serde_json::from_str(&r.stdout).map_err(|e| LabError::Host {
            host: host.label(),
            reason: format!("`linerate tune --apply --json` printed no apply report: {e}"),
        })?;
        Ok(report.applied.and_then(|a| a.journal))
    }

    fn rollback(host: &SshHost, journal: &str) -> Result<(), LabError> {
        let words = [
            host.spec.linerate.as_str(),
            "tune",
            "--rollback",
            journal,
            "--journal-dir",
            &host.spec.journal_dir,
        ];
        host.must(&words, true).map(drop)
    }

    fn firewall(&mut self, fw: &Firewall) -> Result<(), LabError> {
        let Some(text) = firewall::host_ruleset(fw) else {
            return Ok(());
        };
        let line = format!(
            "printf '%s' {} | {}",
            ssh::quote(&text),
            self.recv.line(&["nft", "-f", "-"], true)
        );
        self.firewall_on = true;
        let r = self.recv.run(&line, ssh::SHORT)?;
        if r.ok() {
            Ok(())
        } else {
            Err(LabError::Firewall {
                node: self.recv.label(),
                reason: r.reason(),
            })
        }
    }

    fn remove_firewall(&mut self) -> Result<(), LabError> {
        if self.firewall_on {
            self.recv.must(
                &["nft", "delete", "table", "inet", firewall::HOST_TABLE],
                true,
            )?;
            self.firewall_on = false;
        }
        Ok(())
    }
}

impl TestBed for HostsBed {
    fn name(&self) -> String {
        format!(
            "hosts gen={} recv={}",
            self.gen_host.spec.ssh, self.recv.spec.ssh
        )
    }

    /// Checks once: the caller may check before it begins storing, and the runner again.
    fn check(&mut self, exp: &Experiment) -> Result<(), LabError> {
        if self.checked {
            return Ok(());
        }
        for v in &exp.variants {
            let w = &v.workload;
            let frames = w.mode == WorkloadMode::Rfc2544
                || (w.mode == WorkloadMode::Pps && w.generator != Some(PpsGenerator::Socket));
            if frames {
                return Err(LabError::Io {
                    what: format!(
                        "variant {:?}: on real hosts the workload runs through the traffic \
                         engine (tcp, udp, rr, pps with generator = \"socket\"); raw frames \
                         and rfc2544 need `linerate rfc2544 --tx --rx`",
                        v.name
                    ),
                    source: std::io::Error::from(std::io::ErrorKind::Unsupported),
                });
            }
        }
        for h in self.hosts() {
            self.preflight(h)?;
        }
        let mut recovered = Vec::new();
        for h in self.hosts() {
            for line in Self::restore(h)? {
                recovered.push(format!("{}: {line}", h.label()));
            }
        }
        self.recovered = recovered;
        self.checked = true;
        self.facts = self
            .hosts()
            .iter()
            .map(|h| facts::gather(h))
            .collect::<Result<_, _>>()?;
        Ok(())
    }

    fn one_run(
        &mut self,
        variant: &Variant,
        interrupted: &dyn Fn() -> bool,
        _facts: &mut RunFacts,
    ) -> Result<Result<Measure, LabError>, LabError> {
        let mut journals = Vec::new();
        let mut prepared = Ok(());
        for h in [&self.gen_host, &self.recv] {
            match Self::apply(h, variant) {
                Ok(Some(j)) => journals.push((h.clone(), j)),
                Ok(None) => {}
                Err(e) => {
                    prepared = Err(e);
                    break;
                }
            }
        }
        if prepared.is_ok()
            && let Some(fw) = &variant.firewall
        {
            prepared = self.firewall(fw);
        }
        let result = match prepared {
            Ok(()) => {
                let w = &variant.workload;
                let secs = w.duration.as_secs_f64();
                // The server ends after one test, and after a bounded time in any case: a
                // killed ssh does not end what it started on the host.
                let bound = format!("{}", (secs * 3.0 + 30.0).ceil() as u64);
                let server = [
                    bound,
                    self.recv.spec.linerate.clone(),
                    "server".to_owned(),
                    "--one-off".to_owned(),
                ];
                let dst = self
                    .recv
                    .spec
                    .address
                    .map(|a| a.to_string())
                    .unwrap_or_default();
                let r = crate::runner::run_client_server(
                    (&self.recv, ("timeout", &server)),
                    (&self.gen_host, &self.gen_host.spec.linerate),
                    dst,
                    w,
                    // Real hosts: no emulated link tells the path's rate.
                    None,
                    interrupted,
                );
                Ok(r)
            }
            Err(e) => Err(e),
        };
        // Undone whatever happened, before the next run (or the end).
        let mut undo = self.remove_firewall();
        for (h, j) in journals.iter().rev() {
            if let Err(e) = Self::rollback(h, j) {
                undo = undo.and(Err(e));
            }
        }
        undo?;
        result
    }

    fn finish(&mut self) -> Result<(), LabError> {
        self.firewall_on = false;
        let mut outcome = Ok(());
        for h in self.hosts() {
            if let Err(e) = Self::restore(h) {
                outcome = outcome.and(Err(e));
            }
        }
        outcome
    }
}

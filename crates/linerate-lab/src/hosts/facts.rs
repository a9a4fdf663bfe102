//! A host's facts, as reports show them beside its runs: kernel, CPU, and each NIC's driver
//! and speed. Read with the host's own linerate (`linerate audit --snapshot-out`, the same
//! snapshot lab runs store for this host), over ssh.

use linerate_probe::HostSnapshot;

use super::ssh::{self, SshHost};
use crate::LabError;

/// What an experiment on real hosts says of each host.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostFacts {
    /// `gen` or `recv`.
    pub role: String,
    /// The ssh destination.
    pub ssh: String,
    /// Host name.
    pub hostname: String,
    /// OS and kernel release (`Linux 6.12.38`).
    pub kernel: String,
    /// CPU model and logical CPUs.
    pub cpu: String,
    /// Each interface but loopback: `name: driver, speed` (`unknown` where not readable).
    pub nics: Vec<String>,
    /// The whole snapshot, as `linerate audit --snapshot-out` wrote it.
    #[serde(skip)]
    pub snapshot: Option<HostSnapshot>,
}

impl HostFacts {
    /// One line: `gen root@a (name): Linux 6.12; CPU …; eth0: ixgbe, 10 Gbit/s`.
    pub fn line(&self) -> String {
        let mut out = format!(
            "{} {} ({}): {}; {}",
            self.role, self.ssh, self.hostname, self.kernel, self.cpu
        );
        for n in &self.nics {
            out.push_str("; ");
            out.push_str(n);
        }
        out
    }
}

/// Reads `host`'s snapshot and sums it up.
pub fn gather(host: &SshHost) -> Result<HostFacts, LabError> {
    let linerate = ssh::quote(&host.spec.linerate);
    // The snapshot goes to a temporary file there (audit's own output and exit status, which
    // say what it judged, do not matter here).
    let line = format!(
        "f=$(mktemp) || exit 1; {linerate} audit --snapshot-out \"$f\" >/dev/null 2>&1; \
         cat \"$f\"; s=$?; rm -f \"$f\"; exit $s"
    );
    let r = host.run(&line, ssh::SHORT)?;
    let fail = |reason: String| LabError::Host {
        host: host.label(),
        reason,
    };
    if !r.ok() {
        return Err(fail(format!(
            "cannot read its host snapshot: {}",
            r.reason()
        )));
    }
    let snap = HostSnapshot::from_json(&r.stdout, std::path::Path::new("(ssh)"))
        .map_err(|e| fail(format!("its host snapshot does not read: {e}")))?;
    Ok(summarise(host, snap))
}

fn summarise(host: &SshHost, snap: HostSnapshot) -> HostFacts {
    let known = |v: Option<&String>| v.cloned().unwrap_or_else(|| "unknown".to_owned());
    let kernel = format!(
        "{} {}",
        known(snap.host.os.value()),
        known(snap.host.kernel.value())
    );
    let cpu = match snap.cpu.logical() {
        Some(n) => format!("{}, {n} logical CPUs", known(snap.cpu.model.value())),
        None => known(snap.cpu.model.value()),
    };
    let nics = snap
        .interfaces
        .value()
        .map(|list| {
            list.iter()
                .filter(|i| i.kind != "loopback")
                .map(|i| {
                    let speed = i
                        .speed
                        .value()
                        .map_or_else(|| "speed unknown".to_owned(), |s| s.human().to_string());
                    format!("{}: {}, {speed}", i.name, known(i.driver.value()))
                })
                .collect()
        })
        .unwrap_or_default();
    HostFacts {
        role: host.spec.role.clone(),
        ssh: host.spec.ssh.clone(),
        hostname: known(snap.host.hostname.value()),
        kernel,
        cpu,
        nics,
        snapshot: Some(snap),
    }
}

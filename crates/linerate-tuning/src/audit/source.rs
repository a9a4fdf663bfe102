//! Where the audited values come from: a saved `sysctl -a` dump, or the settings in force on
//! this host (`/proc/sys` on Linux, the host's or a named network namespace's; `sysctl(3)` on
//! FreeBSD; other systems have no live reader and say so).

use linerate_sys::os::NotOnThisOs;

use crate::apply::NetnsError;
use crate::catalogue::CatalogueError;
use crate::os::Os;
use crate::parse::{self, Entry, Format};

/// Why the values to audit could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// A dump without settings.
    #[error("{name}: no `key = value` or `key: value` lines; expected the output of `sysctl -a`")]
    NotADump {
        /// The dump's name.
        name: String,
    },
    /// A dump whose OS cannot be told.
    #[error("cannot tell which OS {name} is from; pass --os")]
    UnknownOs {
        /// The dump's name.
        name: String,
    },
    /// The knob catalogue failed.
    #[error(transparent)]
    Catalogue(#[from] CatalogueError),
    /// The network namespace could not be entered.
    #[error(transparent)]
    Netns(#[from] NetnsError),
    /// This OS has no live reader, or not for what was asked.
    #[error(transparent)]
    NotOnThisOs(#[from] NotOnThisOs),
}

/// The settings of a `sysctl -a` dump named `name`, and the OS it is from (`os` as stated, else
/// told from the dump).
///
/// # Errors
/// A text without settings, or one whose OS cannot be told.
pub fn dump(name: &str, bytes: &[u8], os: Option<Os>) -> Result<(Os, Vec<Entry>), SourceError> {
    let text = parse::decode(bytes);
    let parsed = parse::parse(name, &text, Format::Dump);
    if parsed.entries.is_empty() {
        return Err(SourceError::NotADump {
            name: name.to_owned(),
        });
    }
    let Some(os) = os.or_else(|| parse::detect_os(&parsed.entries, Format::Dump)) else {
        return Err(SourceError::UnknownOs {
            name: name.to_owned(),
        });
    };
    Ok((os, parsed.entries))
}

/// The settings in force on this Linux host, or in network namespace `netns`: where they were
/// read, the OS, and every catalogued key that exists.
///
/// # Errors
/// The catalogue's, or a namespace that cannot be entered.
#[cfg(target_os = "linux")]
pub fn live(netns: Option<&str>) -> Result<(String, Os, Vec<Entry>), SourceError> {
    use crate::apply::{ProcSys, netns};

    let (source, entries) = match netns {
        None => (
            "/proc/sys".to_string(),
            super::read_live(&mut ProcSys::new(), "/proc/sys")?,
        ),
        Some(name) => {
            let src = format!("netns {name}:/proc/sys");
            let entries =
                netns::run_in(name, None, |_| super::read_live(&mut ProcSys::new(), &src))??;
            (src, entries)
        }
    };
    Ok((source, Os::Linux, entries))
}

/// The settings in force on this FreeBSD host, through `sysctl(3)`: where they were read, the
/// OS, and every catalogued key that exists (per NIC for `dev.*.*` keys). A network namespace
/// is Linux's.
///
/// # Errors
/// The catalogue's, or `netns`.
#[cfg(target_os = "freebsd")]
pub fn live(netns: Option<&str>) -> Result<(String, Os, Vec<Entry>), SourceError> {
    use crate::apply::freebsd::{LiveSysctls, SysctlBackend};

    if netns.is_some() {
        return Err(
            NotOnThisOs::linux("--netns", "it names a network namespace")
                .instead(
                    "run linerate audit inside the jail (jexec JAIL linerate audit) to judge a \
                 vnet jail's settings",
                )
                .into(),
        );
    }
    let devices = linerate_probe::freebsd::live::nic_nodes();
    let entries =
        super::read_live_freebsd(&mut SysctlBackend::new(LiveSysctls), "this host:", &devices)?;
    Ok(("sysctl(3)".to_string(), Os::Freebsd, entries))
}

/// No live reader on this OS: it says so.
///
/// # Errors
/// Always.
#[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
pub fn live(_netns: Option<&str>) -> Result<(String, Os, Vec<Entry>), SourceError> {
    Err(NotOnThisOs::needs(
        "Linux or FreeBSD",
        "a live audit",
        "it reads /proc/sys (Linux) or sysctl(3) (FreeBSD)",
    )
    .instead("audit this host's `sysctl -a` output with --snapshot FILE")
    .into())
}

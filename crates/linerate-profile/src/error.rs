//! What can go wrong while taking or reading a profile. The messages say what would allow a
//! refused sampling, and name the field of a stored breakdown that is wrong.

use std::io;

/// An error of this crate.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// Profiling was asked for on a system without `perf_event_open`.
    #[error(
        "linerate profile needs Linux: it samples through perf_event_open, which {os} does not \
         have (on FreeBSD, pmcstat samples CPU_CLK_UNHALTED_CORE)"
    )]
    NeedsLinux {
        /// The system it runs on (`std::env::consts::OS`).
        os: &'static str,
    },
    /// `perf_event_open` refused for lack of privilege.
    #[error(
        "perf_event_open refused {what}: permission denied (kernel.perf_event_paranoid \
         is {paranoid}, uid {euid}). Run as root or with CAP_PERFMON (CAP_SYS_ADMIN before \
         Linux 5.8), or allow it for everyone with `sysctl kernel.perf_event_paranoid=-1` \
         (every CPU) or `=1` (one process); in a container, its seccomp profile must \
         also allow perf_event_open"
    )]
    PermissionDenied {
        /// What was refused (`sampling every CPU`).
        what: String,
        /// `kernel.perf_event_paranoid` as read (or `unreadable`).
        paranoid: String,
        /// The effective user id.
        euid: u32,
    },
    /// The kernel has no `perf_event_open`, or a seccomp filter blocks it.
    #[error(
        "perf_event_open is not available here ({error}): the kernel lacks \
         CONFIG_PERF_EVENTS, or a seccomp filter blocks the call"
    )]
    Unavailable {
        /// The system's answer.
        error: io::Error,
    },
    /// The process to sample does not exist.
    #[error("no such process ({error})")]
    NoSuchProcess {
        /// The system's answer.
        error: io::Error,
    },
    /// `perf_event_open` failed otherwise.
    #[error("perf_event_open failed for {what}: {error}")]
    Open {
        /// What was being opened (`sampling every CPU`).
        what: String,
        /// The system's answer.
        error: io::Error,
    },
    /// Enabling or disabling the sampling events failed.
    #[error("{action}")]
    Sampling {
        /// `starting the sampling`, `stopping the sampling`.
        action: &'static str,
        /// The system's answer.
        source: io::Error,
    },
    /// The sampling thread could not be started.
    #[error("starting the sampling thread")]
    Thread(#[source] io::Error),
    /// The sampling thread panicked.
    #[error("the sampling thread panicked")]
    ThreadPanicked,
    /// The sampling thread ended without saying whether sampling started.
    #[error("the sampling thread ended before it started")]
    ThreadEnded,
    /// The list of online CPUs could not be read.
    #[error("reading {path}")]
    ReadCpus {
        /// The file read.
        path: &'static str,
        /// The system's answer.
        source: io::Error,
    },
    /// The list of online CPUs did not parse.
    #[error("{path}: bad CPU list {text:?}")]
    BadCpuList {
        /// The file read.
        path: &'static str,
        /// What it held.
        text: String,
        /// What is wrong with it.
        source: CpuListError,
    },
    /// `--cpu` that is not a CPU list.
    #[error("--cpu {list:?}: {source} (a list such as 0 or 0-3,6)")]
    CpuArg {
        /// The list as given.
        list: String,
        /// What is wrong.
        source: CpuListError,
    },
    /// `--cpu` names a CPU that is not online.
    #[error("--cpu {list}: CPU {cpu} is not online (online: {online})")]
    Offline {
        /// The list as given.
        list: String,
        /// The first CPU not online.
        cpu: u32,
        /// The online CPUs, comma-separated.
        online: String,
    },
    /// The command to profile could not be started.
    #[error("starting {program}")]
    Spawn {
        /// The program.
        program: String,
        /// The system's answer.
        source: io::Error,
    },
    /// Waiting for the profiled command failed.
    #[error("waiting for the command")]
    Wait(#[source] io::Error),
    /// A breakdown could not be turned into JSON.
    #[error("the breakdown as JSON: {0}")]
    BreakdownJson(#[source] serde_json::Error),
    /// A stored breakdown does not have the shape of [`crate::Breakdown`].
    #[error("the stored breakdown: {}{message}", at(.path))]
    StoredBreakdown {
        /// Where in the document (`by_subsystem[0].percent`; empty: the document itself).
        path: String,
        /// What is wrong there (`missing field `percent``, `invalid type: …`).
        message: String,
    },
}

/// `PATH: ` before a message, or nothing at the top of the document.
fn at(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("{path}: ")
    }
}

/// What is wrong with a CPU list (`0-3,6`).
#[derive(Debug, thiserror::Error)]
pub enum CpuListError {
    /// A part is not a CPU number.
    #[error(transparent)]
    Number(#[from] std::num::ParseIntError),
    /// The list names no CPU.
    #[error("no CPU listed")]
    Empty,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_on_this_os_names_the_os_and_the_alternative() {
        let e = ProfileError::NeedsLinux { os: "freebsd" };
        assert_eq!(
            e.to_string(),
            "linerate profile needs Linux: it samples through perf_event_open, which freebsd \
             does not have (on FreeBSD, pmcstat samples CPU_CLK_UNHALTED_CORE)"
        );
    }

    #[test]
    fn the_document_itself_has_no_path() {
        let e = ProfileError::StoredBreakdown {
            path: String::new(),
            message: "missing field `by_cpu`".to_owned(),
        };
        assert_eq!(
            e.to_string(),
            "the stored breakdown: missing field `by_cpu`"
        );
    }
}

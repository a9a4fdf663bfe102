//! `linerate profile`'s procedure: sampling starts, then the command (if any) is started, and
//! sampling lasts until the command exits, the duration is over, a stop is asked for, or the
//! sampled process is gone; a command still running then is stopped (SIGTERM).

use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use linerate_sys::perf::Target;

use crate::capture::{Capture, Captured};
use crate::error::ProfileError;

/// How often the command, the clock and the stop flag are looked at.
const TICK: Duration = Duration::from_millis(50);

/// What to sample, and for how long.
pub struct Session<'a> {
    /// Every task on `cpus`, or one process.
    pub target: Target,
    /// The CPUs to sample.
    pub cpus: &'a [u32],
    /// Samples per second on each CPU.
    pub frequency: u64,
    /// How long to sample (with a command: it is stopped if it runs longer); `None`: until
    /// the command exits, or until stopped.
    pub duration: Option<Duration>,
    /// A command to run while sampling, started once sampling runs.
    pub command: Option<Command>,
    /// Whether a stop was asked for (Ctrl-C); looked at every 50 ms.
    pub stop: &'a dyn Fn() -> bool,
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("target", &self.target)
            .field("cpus", &self.cpus)
            .field("frequency", &self.frequency)
            .field("duration", &self.duration)
            .field("command", &self.command)
            .finish_non_exhaustive()
    }
}

/// A finished session.
#[derive(Debug)]
pub struct Finished {
    /// The profile.
    pub captured: Captured,
    /// How the command ended, when there was one (and it could be waited for).
    pub command_status: Option<ExitStatus>,
    /// The command was still running when sampling ended, and was stopped (SIGTERM).
    pub command_stopped: bool,
}

/// Runs a session (see the module's documentation).
pub fn run(session: Session<'_>) -> Result<Finished, ProfileError> {
    let Session {
        target,
        cpus,
        frequency,
        duration,
        command,
        stop,
    } = session;
    let capture = Capture::start(target, cpus, frequency)?;
    let mut child: Option<Child> = match command {
        Some(mut command) => match command.spawn() {
            Ok(c) => Some(c),
            Err(source) => {
                let _ = capture.finish();
                return Err(ProfileError::Spawn {
                    program: command.get_program().to_string_lossy().into_owned(),
                    source,
                });
            }
        },
        None => None,
    };
    let end = duration.map(|d| Instant::now() + d);
    let mut status = None;
    loop {
        let now = Instant::now();
        let wake = end.map_or(now + TICK, |e| e.min(now + TICK));
        if !stop() {
            std::thread::sleep(wake.saturating_duration_since(now));
        }
        if let Some(c) = child.as_mut() {
            if let Some(s) = c.try_wait().map_err(ProfileError::Wait)? {
                status = Some(s);
                break;
            }
        }
        if stop() || end.is_some_and(|e| Instant::now() >= e) {
            break;
        }
        if let Target::Process(p) = target {
            if !std::path::Path::new(&format!("/proc/{p}")).exists() {
                break;
            }
        }
    }
    let captured = capture.finish()?;
    let mut command_stopped = false;
    if let Some(mut c) = child.take() {
        if status.is_none() {
            command_stopped = true;
            // Stopped by a signal or the duration first: the command goes too.
            let _ = linerate_sys::process::kill(c.id(), linerate_sys::signal::Signal::SIGTERM);
            status = c.wait().ok();
        }
    }
    Ok(Finished {
        captured,
        command_status: status,
        command_stopped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpus::online_cpus;

    /// Sampling this process needs perf_event_open to allow it here (root, or a low
    /// kernel.perf_event_paranoid); where it does not, the refusal is the test's subject.
    fn session<'a>(
        stop: &'a dyn Fn() -> bool,
        cpus: &'a [u32],
        command: Option<Command>,
    ) -> Session<'a> {
        Session {
            target: Target::Process(i32::try_from(std::process::id()).expect("a pid")),
            cpus,
            frequency: 99,
            duration: Some(Duration::from_secs(5)),
            command,
            stop,
        }
    }

    #[test]
    fn a_command_ends_the_session_and_its_status_is_kept() {
        let never = || false;
        let cpus = online_cpus().expect("online CPUs");
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "exit 3"]);
        let started = Instant::now();
        match run(session(&never, &cpus, Some(cmd))) {
            Ok(f) => {
                assert_eq!(f.command_status.and_then(|s| s.code()), Some(3));
                assert!(!f.command_stopped);
                assert!(started.elapsed() < Duration::from_secs(4));
            }
            Err(e @ ProfileError::PermissionDenied { .. }) => {
                eprintln!("skipped: sampling is not allowed here: {e}");
            }
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn a_stop_ends_the_session_and_stops_the_command() {
        let stop = || true;
        let cpus = online_cpus().expect("online CPUs");
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let started = Instant::now();
        match run(session(&stop, &cpus, Some(cmd))) {
            Ok(f) => {
                assert!(f.command_stopped);
                assert!(f.command_status.is_some_and(|s| !s.success()));
                assert!(started.elapsed() < Duration::from_secs(4));
            }
            Err(e @ ProfileError::PermissionDenied { .. }) => {
                eprintln!("skipped: sampling is not allowed here: {e}");
            }
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn a_command_that_cannot_start_is_named() {
        let never = || false;
        let cpus = online_cpus().expect("online CPUs");
        let cmd = Command::new("/nonexistent/linerate-no-such-program");
        match run(session(&never, &cpus, Some(cmd))) {
            Err(e @ ProfileError::Spawn { .. }) => {
                assert_eq!(
                    e.to_string(),
                    "starting /nonexistent/linerate-no-such-program"
                );
            }
            Err(e @ ProfileError::PermissionDenied { .. }) => {
                eprintln!("skipped: sampling is not allowed here: {e}");
            }
            other => panic!("{other:?}"),
        }
    }
}

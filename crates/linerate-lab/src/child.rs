//! Child processes of the lab's loads: waiting for one, bounded in time and by the stop
//! signals (used by the experiment runner and the RFC 2544 trials).

use std::time::{Duration, Instant};

use crate::LabError;

/// Waits for `child` to end, killing it when `interrupted` says so or `limit` passes.
pub(crate) fn wait_bounded(
    child: &mut std::process::Child,
    limit: Duration,
    interrupted: &dyn Fn() -> bool,
) -> Result<std::process::ExitStatus, LabError> {
    let started = Instant::now();
    loop {
        if let Some(status) = child
            .try_wait()
            .map_err(LabError::io("wait for the load generator"))?
        {
            return Ok(status);
        }
        if interrupted() || started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(LabError::Io {
                what: if interrupted() {
                    "load stopped by a signal".into()
                } else {
                    format!("load generator still running after {limit:?}")
                },
                source: std::io::Error::from(std::io::ErrorKind::TimedOut),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

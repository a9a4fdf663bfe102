//! One frame-generator measurement of a lab at a time. A second `lab rfc2544` (or `lab run`'s
//! frame workloads) on a lab another process is measuring would, when it resolves its path,
//! "repair" the DUT's `ip_forward` from the marker the first one wrote for its ceiling
//! measurement ([`super::forwarding`]), turning forwarding back on under it; and its frames
//! would mix with the first one's. So resolving a lab's path first takes the lab's lock, a
//! file beside its state file (`NAME.rfc2544.lock`) locked with `flock` and holding who
//! holds it (pid, command line, since when); a second taker is refused naming that holder.
//!
//! The kernel releases a `flock` when its holder dies, even by `kill -9`, so a lock whose
//! holder is gone is simply free; the file it left still names it, and the next taker says it
//! took the lock over from that process. A holder that ends normally removes the file.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::LabError;
use crate::state::StateDir;

/// Suffix of the lock's file name beside the lab's state file.
pub const LOCK_SUFFIX: &str = "rfc2544.lock";

/// Who holds (or held) a lab's lock.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// Its command line.
    pub command: String,
    /// When it took the lock, seconds since the Unix epoch.
    pub since: u64,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Holder {
    fn this_process() -> Holder {
        let mut command = std::env::args().collect::<Vec<_>>().join(" ");
        if command.len() > 300 {
            let mut cut = 300;
            while !command.is_char_boundary(cut) {
                cut -= 1;
            }
            command.truncate(cut);
            command.push('…');
        }
        Holder {
            pid: std::process::id(),
            command,
            since: now(),
        }
    }

    /// `pid 1234 (linerate lab rfc2544 demo), since 15:02:11 UTC (42 s ago)`.
    pub fn describe(&self, at: u64) -> String {
        let t = self.since % 86_400;
        format!(
            "pid {} ({}), since {:02}:{:02}:{:02} UTC ({} s ago)",
            self.pid,
            self.command,
            t / 3600,
            t / 60 % 60,
            t % 60,
            at.saturating_sub(self.since)
        )
    }
}

/// A lab's lock, held until dropped.
#[derive(Debug)]
pub struct Measuring {
    file: File,
    path: PathBuf,
    /// The process whose lock was taken over: it died holding it.
    pub took_over: Option<Holder>,
}

/// The lock file of lab `lab` in `dir`.
pub fn lock_path(dir: &StateDir, lab: &str) -> PathBuf {
    dir.side_file(lab, LOCK_SUFFIX)
}

fn io(what: String) -> impl FnOnce(io::Error) -> LabError {
    LabError::io(what)
}

/// Whether `path` still names the file `file` is open on (a holder that ended removed it, and
/// a newer taker may have made another).
fn same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

fn read_holder(file: &mut File) -> Option<Holder> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

impl Measuring {
    /// Takes lab `lab`'s lock; refused, naming the holder, while another process holds it.
    pub fn take(dir: &StateDir, lab: &str) -> Result<Measuring, LabError> {
        Measuring::take_named(dir, lab, &format!("lab {lab}"))
    }

    /// Takes the lock named `key` in `dir` (`what` says what it guards, for the refusal:
    /// `port eth1`); refused, naming the holder, while another process holds it.
    pub fn take_named(dir: &StateDir, key: &str, what: &str) -> Result<Measuring, LabError> {
        let path = lock_path(dir, key);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(format!("create {}", parent.display())))?;
        }
        // A holder removing its file between our open and our lock leaves us a file nobody
        // else sees: open again (a few times; each round is a holder ending).
        for _ in 0..16 {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io(format!("open {}", path.display())))?;
            match linerate_sys::fs::try_lock_exclusive(&file) {
                Ok(true) => {}
                Ok(false) => {
                    let holder = read_holder(&mut file).map_or_else(
                        || "a process whose record is not readable yet".to_owned(),
                        |h| h.describe(now()),
                    );
                    return Err(LabError::Io {
                        what: format!(
                            "{what} is being measured by {holder}: a second measurement \
                             would disturb its trials (and in a lab could turn the DUT's \
                             forwarding back on under its ceiling measurement); wait for it to \
                             end (lock {})",
                            path.display()
                        ),
                        source: io::Error::from(io::ErrorKind::ResourceBusy),
                    });
                }
                Err(e) => return Err(io(format!("lock {}", path.display()))(e)),
            }
            if !same_file(&file, &path) {
                continue;
            }
            let took_over = read_holder(&mut file);
            let me = Holder::this_process();
            let mut bytes = serde_json::to_vec(&me).map_err(|e| LabError::Io {
                what: format!("encode {}", path.display()),
                source: io::Error::other(e),
            })?;
            bytes.push(b'\n');
            let write = |f: &mut File| -> io::Result<()> {
                f.set_len(0)?;
                f.rewind()?;
                f.write_all(&bytes)?;
                f.sync_data()
            };
            write(&mut file).map_err(io(format!("write {}", path.display())))?;
            return Ok(Measuring {
                file,
                path,
                took_over,
            });
        }
        Err(LabError::Io {
            what: format!(
                "cannot take {}: it was replaced 16 times while being locked",
                path.display()
            ),
            source: io::Error::from(io::ErrorKind::ResourceBusy),
        })
    }

    /// What taking the lock repaired, for the record: the dead holder taken over from.
    pub fn took_over_note(&self) -> Option<String> {
        self.took_over.as_ref().map(|h| {
            format!(
                "took over the measuring lock from {}, which ended without releasing it",
                h.describe(now())
            )
        })
    }
}

impl Drop for Measuring {
    fn drop(&mut self) {
        // Remove the file first, then unlock (the file closes after this): a taker that opened
        // this file finds it no longer at the path once it has the lock, and opens the path
        // again.
        if same_file(&self.file, &self.path) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_is_refused_naming_the_holder_and_the_lock_is_gone_after() {
        let dir = tempfile::tempdir().expect("tempdir");
        let states = StateDir::resolve(Some(dir.path().to_owned()));
        let first = Measuring::take(&states, "demo").expect("first");
        assert_eq!(first.took_over, None);
        let err = Measuring::take(&states, "demo")
            .expect_err("second")
            .to_string();
        assert!(
            err.contains(&format!(
                "lab demo is being measured by pid {}",
                std::process::id()
            )),
            "{err}"
        );
        assert!(err.contains("s ago"), "{err}");
        // Another lab is another lock.
        let other = Measuring::take(&states, "other").expect("another lab");
        drop(other);
        drop(first);
        assert!(!lock_path(&states, "demo").exists());
        let again = Measuring::take(&states, "demo").expect("free again");
        assert_eq!(again.took_over, None);
    }

    #[test]
    fn a_lock_left_by_a_dead_process_is_taken_over_and_said() {
        let dir = tempfile::tempdir().expect("tempdir");
        let states = StateDir::resolve(Some(dir.path().to_owned()));
        // What a holder killed with -9 leaves: its record, and no lock (the kernel dropped it).
        let dead = Holder {
            pid: 999_999,
            command: "linerate lab rfc2544 demo".into(),
            since: now() - 30,
        };
        std::fs::write(
            lock_path(&states, "demo"),
            serde_json::to_vec(&dead).expect("encode"),
        )
        .expect("write");
        let taken = Measuring::take(&states, "demo").expect("taken over");
        assert_eq!(taken.took_over, Some(dead));
        let note = taken.took_over_note().expect("said");
        assert!(
            note.contains("pid 999999 (linerate lab rfc2544 demo)"),
            "{note}"
        );
        assert!(
            note.contains("30 s ago") || note.contains("31 s ago"),
            "{note}"
        );
    }

    #[test]
    fn the_holder_says_when_in_utc() {
        let h = Holder {
            pid: 7,
            command: "x".into(),
            since: 86_400 * 3 + 15 * 3600 + 2 * 60 + 11,
        };
        assert_eq!(
            h.describe(h.since + 42),
            "pid 7 (x), since 15:02:11 UTC (42 s ago)"
        );
    }
}

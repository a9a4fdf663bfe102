//! The network namespaces of sampled threads, read as their samples arrive (a lab removes its
//! namespaces when its run ends), and their names under /run/netns (`host` for the initial
//! one and the one linerate runs in).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt as _;

/// Network namespaces of the sampled threads, and their names.
#[derive(Debug, Default)]
pub(super) struct Namespaces {
    /// Thread id → namespace inode (`None`: gone before it was read).
    threads: HashMap<u32, Option<u64>>,
    /// Inode → name under /run/netns (`host` for the initial namespace).
    names: HashMap<u64, String>,
    /// An inode was seen that has no name yet: read /run/netns again.
    rescan: bool,
}

impl Namespaces {
    pub(super) fn new() -> Namespaces {
        let mut ns = Namespaces::default();
        // The initial namespace, and the one linerate runs in (in a container, the two differ).
        for path in ["/proc/1/ns/net", "/proc/self/ns/net"] {
            if let Ok(md) = std::fs::metadata(path) {
                ns.names
                    .entry(md.ino())
                    .or_insert_with(|| "host".to_owned());
            }
        }
        ns.scan();
        ns
    }

    /// Reads the names under /run/netns (those already known are kept: a lab removes its
    /// names when its run ends).
    fn scan(&mut self) {
        self.rescan = false;
        let Ok(dir) = std::fs::read_dir("/run/netns") else {
            return;
        };
        for e in dir.flatten() {
            if let Ok(md) = std::fs::metadata(e.path()) {
                self.names
                    .entry(md.ino())
                    .or_insert_with(|| e.file_name().to_string_lossy().into_owned());
            }
        }
    }

    /// Reads thread `tid`'s namespace while it lives (once per thread).
    pub(super) fn note(&mut self, pid: u32, tid: u32) {
        if pid == 0 || self.threads.contains_key(&tid) {
            return;
        }
        let ino = std::fs::metadata(format!("/proc/{pid}/task/{tid}/ns/net"))
            .or_else(|_| std::fs::metadata(format!("/proc/{pid}/ns/net")))
            .ok()
            .map(|md| md.ino());
        if ino.is_some_and(|i| !self.names.contains_key(&i)) {
            self.rescan = true;
        }
        self.threads.insert(tid, ino);
    }

    /// Reads /run/netns again when a namespace without a name was seen.
    pub(super) fn refresh(&mut self) {
        if self.rescan {
            self.scan();
        }
    }

    /// The name of thread `tid`'s namespace (`None`: it was gone before it was read).
    pub(super) fn name(&self, tid: u32) -> Option<String> {
        let ino = (*self.threads.get(&tid)?)?;
        Some(
            self.names
                .get(&ino)
                .cloned()
                .unwrap_or_else(|| format!("netns:[{ino}]")),
        )
    }
}

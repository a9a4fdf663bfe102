//! Writing output files whole or not at all.

use std::path::Path;

/// Writes `bytes` to `path` atomically (linerate-sys's `atomic_write`): readers see the old
/// file or the new one, never half of one. Creates the directory if needed.
pub fn atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    linerate_sys::atomic_write(path, bytes)
}

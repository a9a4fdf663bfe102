//! `linerate lint`'s inputs: directories expanded to their `*.conf` files (in the order
//! `sysctl --system` applies them), each file's format and OS told from its name and content
//! (or as stated), and the rules run once per OS and kind (files, or a `sysctl -a` dump) over
//! the entries of all files of that kind.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::catalogue::CatalogueError;
use crate::context::Context;
use crate::finding::Finding;
use crate::os::Os;
use crate::parse::{self, Entry, Format};

use super::Mode;

/// Why the files could not be linted.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    /// A directory that cannot be listed.
    #[error("cannot read directory {}: {source}", path.display())]
    ReadDir {
        /// The directory.
        path: PathBuf,
        /// The OS's reason.
        source: std::io::Error,
    },
    /// A directory without `*.conf` files.
    #[error("{}: no *.conf files in this directory", path.display())]
    NoConfs {
        /// The directory.
        path: PathBuf,
    },
    /// A file with settings whose OS cannot be told.
    #[error("cannot tell which OS {name} is for; pass --os linux|freebsd|openbsd|windows")]
    UnknownOs {
        /// The file.
        name: String,
    },
    /// The knob catalogue failed.
    #[error(transparent)]
    Catalogue(#[from] CatalogueError),
}

/// What one file was read as.
#[derive(Debug, serde::Serialize)]
pub struct FileInfo {
    /// The file's name as given.
    pub path: String,
    /// The OS it is for.
    pub os: Os,
    /// Its format.
    pub format: Format,
    /// How many settings it holds.
    pub entries: usize,
}

/// The result of linting files.
#[derive(Debug)]
pub struct Linted {
    /// Each file as read.
    pub files: Vec<FileInfo>,
    /// The context each OS and kind was judged for.
    pub contexts: Vec<Context>,
    /// Syntax and rule findings, in no particular order.
    pub findings: Vec<Finding>,
}

/// Directories (like /etc/sysctl.d) stand for their `*.conf` files in name order, the order
/// sysctl --system applies them in.
///
/// # Errors
/// A directory that cannot be read or has no `*.conf` file.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, FilesError> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() {
            out.push(path.clone());
            continue;
        }
        let mut confs: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|source| FilesError::ReadDir {
                path: path.clone(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "conf") && p.is_file())
            .collect();
        confs.sort();
        if confs.is_empty() {
            return Err(FilesError::NoConfs { path: path.clone() });
        }
        out.extend(confs);
    }
    Ok(out)
}

/// Lints `files` (each a name and its bytes, read by the caller): `os` and `format` as stated
/// or else detected (a file without settings counts as Linux), each OS and kind judged for
/// `context(os)`.
///
/// # Errors
/// A file whose OS cannot be told, or a catalogue failure.
pub fn lint_files(
    files: &[(PathBuf, Vec<u8>)],
    os: Option<Os>,
    format: Option<Format>,
    context: impl Fn(Os) -> Context,
) -> Result<Linted, FilesError> {
    let mut infos = Vec::new();
    let mut groups: BTreeMap<(Os, bool), Vec<Entry>> = BTreeMap::new();
    let mut findings = Vec::new();
    for (path, bytes) in files {
        let name = path.display().to_string();
        let text = parse::decode(bytes);
        let format = format.unwrap_or_else(|| parse::detect_format(&name, &text));
        let parsed = parse::parse(&name, &text, format);
        let os = match os.or_else(|| parse::detect_os(&parsed.entries, format)) {
            Some(os) => os,
            None if parsed.entries.is_empty() => Os::Linux,
            None => return Err(FilesError::UnknownOs { name }),
        };
        infos.push(FileInfo {
            path: name,
            os,
            format,
            entries: parsed.entries.len(),
        });
        findings.extend(parsed.syntax);
        groups
            .entry((os, format == Format::Dump))
            .or_default()
            .extend(parsed.entries);
    }
    let mut contexts = Vec::new();
    for ((os, dump), entries) in &groups {
        let ctx = context(*os);
        let mode = if *dump { Mode::Live } else { Mode::Files };
        findings.extend(super::lint(entries, &ctx, mode)?);
        contexts.push(ctx);
    }
    Ok(Linted {
        files: infos,
        contexts,
        findings,
    })
}

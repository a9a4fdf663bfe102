//! Shared output plumbing: JSON printing, error reporting and exit codes.
//!
//! Exit codes, for every command: 0 success; 1 a result the caller asked to fail on (lint
//! findings at or above `--fail-on`, a comparison that found a difference when asked); 2 usage,
//! input or I/O errors (as ministat and ripgrep do).

use std::io::{self, Write};
use std::process::ExitCode;

/// Exit code for usage, input and I/O errors.
pub const EXIT_ERROR: u8 = 2;

/// Prints an error chain on stderr and maps it to an exit code. A closed stdout (`| head`) is
/// not an error. The one place errors are rendered: see [`render_error`].
pub fn report_error(err: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(err) {
        return ExitCode::SUCCESS;
    }
    let _ = writeln!(io::stderr(), "linerate: {}", render_error(err));
    ExitCode::from(EXIT_ERROR)
}

/// An error chain in one line, `what: why: reason`: each cause once (a cause whose text an
/// outer message already holds is not repeated), and the operating system's reason without
/// Rust's ` (os error N)` suffix, so a missing file reads `cannot open x: No such file or
/// directory`.
pub fn render_error(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = without_os_error(&cause.to_string());
        if text.is_empty() || parts.iter().any(|p| p.contains(&text)) {
            continue;
        }
        parts.push(text);
    }
    parts.join(": ")
}

/// `text` without a trailing ` (os error N)`.
pub fn without_os_error(text: &str) -> String {
    if let Some(start) = text.rfind(" (os error ") {
        let tail = &text[start + " (os error ".len()..];
        if tail
            .strip_suffix(')')
            .is_some_and(|n| n.parse::<i32>().is_ok())
        {
            return text[..start].to_owned();
        }
    }
    text.to_owned()
}

/// Where the first NUL byte of `bytes` is (a file that is not text): the one check, stat's.
pub use linerate_stats::sets::binary_at;

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        let io_kind = cause
            .downcast_ref::<io::Error>()
            .map(io::Error::kind)
            // serde_json wraps the writer's io::Error in its own error type.
            .or_else(|| {
                cause
                    .downcast_ref::<serde_json::Error>()
                    .and_then(|e| e.io_error_kind())
            });
        io_kind == Some(io::ErrorKind::BrokenPipe)
    })
}

/// Prints a warning on stderr: `linerate: warning: …`.
pub fn warn(message: &str) {
    let _ = writeln!(io::stderr(), "linerate: warning: {message}");
}

/// Writes `value` as pretty JSON followed by a newline on stdout. A closed stdout surfaces as
/// an error that [`report_error`] treats as success.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// Writes `text` on stdout.
pub fn print_text(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_each_cause_once_without_os_error_numbers() {
        let io = io::Error::from_raw_os_error(2);
        let err = anyhow::Error::new(io).context("cannot open /nonexist");
        assert_eq!(
            render_error(&err),
            "cannot open /nonexist: No such file or directory"
        );
        // A message that already holds its cause's text does not repeat it.
        let inner = anyhow::anyhow!("timed out");
        let err = inner.context("client to x: timed out");
        assert_eq!(render_error(&err), "client to x: timed out");
        assert_eq!(without_os_error("a (os error 13)"), "a");
        assert_eq!(without_os_error("a (os error x)"), "a (os error x)");
    }
}

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
/// not an error.
pub fn report_error(err: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(err) {
        return ExitCode::SUCCESS;
    }
    let _ = writeln!(io::stderr(), "linerate: {err:#}");
    ExitCode::from(EXIT_ERROR)
}

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

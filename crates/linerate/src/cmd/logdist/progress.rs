//! The engine's read progress drawn with indicatif on a terminal's stderr, one file after
//! another (`access.log: ████▌      1.20 GB of 5.00 GB (24 %), 9s left`), erased when the
//! file is read. Nothing is drawn when stderr is not a terminal, nor for a file read within
//! its first half second (ordinary logs and every pipe stay quiet).

use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use linerate_logdist::Progress;

/// How long a file's read runs before its progress appears.
const QUIET_FOR: Duration = Duration::from_millis(500);
/// Redraws per second.
const REDRAWS: u8 = 5;
/// The longest file name shown (its end is kept).
const NAME: usize = 24;

/// The file being read: its bar counts from the start, hidden during the quiet time, so the
/// rate and the time left are right when it appears.
struct Reading {
    bar: ProgressBar,
    started: Instant,
    shown: bool,
}

/// Draws one bar per file read, on stderr when it is a terminal.
pub struct Bars {
    terminal: bool,
    reading: Mutex<Option<Reading>>,
    /// A stop signal ends the reading (what was read is the result).
    stop: Option<crate::stop::Stop>,
}

impl Bars {
    /// Draws when stderr is a terminal; otherwise every call does nothing.
    pub fn on_terminal() -> Self {
        Self {
            terminal: io::stderr().is_terminal(),
            reading: Mutex::new(None),
            stop: None,
        }
    }

    /// Never draws (`--quiet`).
    pub fn hidden() -> Self {
        Self {
            terminal: false,
            reading: Mutex::new(None),
            stop: None,
        }
    }

    /// Ends the reading when `stop` is raised.
    pub fn stopping_on(mut self, stop: &crate::stop::Stop) -> Self {
        self.stop = Some(stop.clone());
        self
    }
}

/// The file name without its folders, at most [`NAME`] characters (`…` and its end).
fn short_name(name: &str) -> String {
    let base = Path::new(name)
        .file_name()
        .map_or_else(|| name.to_owned(), |n| n.to_string_lossy().into_owned());
    let chars = base.chars().count();
    if chars <= NAME {
        return base;
    }
    let tail: String = base.chars().skip(chars - (NAME - 1)).collect();
    format!("…{tail}")
}

/// A hidden bar for one file; `total` gives a bar with a share and the time left, an unknown
/// size (a FIFO) the bytes read and the rate.
fn hidden_bar(name: &str, total: Option<u64>) -> ProgressBar {
    let (bar, template) = match total {
        Some(total) if total > 0 => (
            ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden()),
            "{prefix}: {wide_bar} {decimal_bytes} of {decimal_total_bytes} ({percent} %), \
             {eta} left",
        ),
        _ => (
            ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden()),
            "{prefix}: {decimal_bytes} read, {decimal_bytes_per_sec}",
        ),
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("█▉▊▋▌▍▎▏ "));
    }
    bar.set_prefix(short_name(name));
    bar
}

impl Progress for Bars {
    fn start(&self, name: &str, total: Option<u64>) {
        if !self.terminal {
            return;
        }
        if let Ok(mut reading) = self.reading.lock() {
            *reading = Some(Reading {
                bar: hidden_bar(name, total),
                started: Instant::now(),
                shown: false,
            });
        }
    }

    fn advance(&self, read: u64) {
        let Ok(mut reading) = self.reading.lock() else {
            return;
        };
        let Some(r) = reading.as_mut() else { return };
        r.bar.set_position(read);
        if !r.shown && r.started.elapsed() >= QUIET_FOR {
            r.shown = true;
            r.bar.set_draw_target(ProgressDrawTarget::term_like_with_hz(
                Box::new(Stderr),
                REDRAWS,
            ));
            r.bar.tick();
        }
    }

    fn finish(&self) {
        if let Ok(mut reading) = self.reading.lock() {
            if let Some(r) = reading.take() {
                r.bar.finish_and_clear();
            }
        }
    }

    fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(crate::stop::Stop::requested)
    }
}

/// Standard error as indicatif's terminal. Not console's `Term`: a line is cleared with
/// `\r` + ANSI "erase to end of line" (`ESC [K`), as linerate's reports have always expected
/// of their progress line, and the width comes from the terminal itself (80 when unknown,
/// as in a pseudo-terminal nobody sized).
#[derive(Debug)]
struct Stderr;

impl Stderr {
    /// Progress is best effort: a failing stderr must not fail the read.
    fn put(text: &str) -> io::Result<()> {
        let _ = io::stderr().lock().write_all(text.as_bytes());
        Ok(())
    }

    fn cursor(n: usize, direction: char) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        Self::put(&format!("\x1b[{n}{direction}"))
    }
}

impl TermLike for Stderr {
    fn width(&self) -> u16 {
        match rustix::termios::tcgetwinsize(io::stderr()) {
            Ok(size) if size.ws_col > 0 => size.ws_col,
            _ => 80,
        }
    }

    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        Self::cursor(n, 'A')
    }

    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        Self::cursor(n, 'B')
    }

    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        Self::cursor(n, 'C')
    }

    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        Self::cursor(n, 'D')
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        Self::put(&format!("{s}\n"))
    }

    fn write_str(&self, s: &str) -> io::Result<()> {
        Self::put(s)
    }

    fn clear_line(&self) -> io::Result<()> {
        Self::put("\r\x1b[K")
    }

    fn flush(&self) -> io::Result<()> {
        let _ = io::stderr().flush();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_shortened_from_the_left() {
        assert_eq!(short_name("/var/log/nginx/access.log"), "access.log");
        assert_eq!(short_name("slow.log"), "slow.log");
        let long = "/x/a-very-long-access-log-name-2026-10-10.log.gz";
        let short = short_name(long);
        assert_eq!(short.chars().count(), NAME);
        assert_eq!(short, "…-name-2026-10-10.log.gz");
    }
}

//! Progress of a long read on a terminal: `access.log: 1.2 GB of 5 GB (24 %)` on stderr,
//! redrawn in place a few times a second and erased when the file is read. Nothing is shown
//! when stderr is not a terminal, nor for a read that ends within the first half second (so
//! ordinary logs and every pipe stay quiet).

use std::io::{self, IsTerminal, Read, Write};
use std::time::{Duration, Instant};

/// How long a read runs before progress appears.
const QUIET_FOR: Duration = Duration::from_millis(500);
/// How often the line is redrawn.
const EVERY: Duration = Duration::from_millis(200);

/// One SI unit for both numbers of a line, chosen by the larger.
fn si_unit(bytes: u64) -> (f64, &'static str) {
    match bytes {
        0..1_000_000 => (1e3, "kB"),
        1_000_000..1_000_000_000 => (1e6, "MB"),
        _ => (1e9, "GB"),
    }
}

/// A reader that reports how much of its input it has read.
pub struct Progress<R> {
    inner: R,
    name: String,
    total: Option<u64>,
    read: u64,
    next_draw: Instant,
    shown: bool,
    out: Option<Box<dyn Write>>,
}

impl<R: Read> Progress<R> {
    /// Reports on stderr when it is a terminal; `total` is the input's size when known.
    pub fn on_terminal(inner: R, name: String, total: Option<u64>) -> Self {
        let out: Option<Box<dyn Write>> = if io::stderr().is_terminal() {
            Some(Box::new(io::stderr()))
        } else {
            None
        };
        Self::new(inner, name, total, out, QUIET_FOR)
    }
}

impl<R> Progress<R> {
    fn new(
        inner: R,
        name: String,
        total: Option<u64>,
        out: Option<Box<dyn Write>>,
        quiet_for: Duration,
    ) -> Self {
        Self {
            inner,
            name,
            total,
            read: 0,
            next_draw: Instant::now() + quiet_for,
            shown: false,
            out,
        }
    }

    fn line(&self) -> String {
        match self.total {
            Some(total) if total > 0 => {
                let (div, unit) = si_unit(total);
                format!(
                    "{}: {:.1} of {:.1} {unit} ({:.0} %)",
                    self.name,
                    self.read as f64 / div,
                    total as f64 / div,
                    self.read as f64 * 100.0 / total as f64
                )
            }
            _ => {
                let (div, unit) = si_unit(self.read);
                format!("{}: {:.1} {unit} read", self.name, self.read as f64 / div)
            }
        }
    }

    /// Progress output is best effort: a failing stderr must not fail the read.
    fn draw(&mut self) {
        let text = self.line();
        if let Some(out) = self.out.as_mut() {
            let _ = write!(out, "\r\x1b[K{text}");
            let _ = out.flush();
            self.shown = true;
        }
    }

    fn erase(&mut self) {
        if self.shown {
            if let Some(out) = self.out.as_mut() {
                let _ = write!(out, "\r\x1b[K");
                let _ = out.flush();
            }
            self.shown = false;
        }
    }
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.out.is_none() {
            return Ok(n);
        }
        if n == 0 {
            self.erase();
        } else {
            let now = Instant::now();
            if now >= self.next_draw {
                self.next_draw = now + EVERY;
                self.draw();
            }
        }
        Ok(n)
    }
}

impl<R> Drop for Progress<R> {
    fn drop(&mut self) {
        // An error or an early stop leaves no half-drawn line behind.
        self.erase();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A shared buffer standing in for the terminal.
    #[derive(Clone, Default)]
    struct Screen(Arc<Mutex<Vec<u8>>>);

    impl Write for Screen {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| io::ErrorKind::Other)?
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Screen {
        fn text(&self) -> String {
            let bytes = self.0.lock().map(|b| b.clone()).unwrap_or_default();
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }

    fn read_all(reader: &mut impl Read) -> u64 {
        let mut buf = [0u8; 1000];
        let mut total = 0;
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            total += n as u64;
        }
        total
    }

    #[test]
    fn draws_the_share_read_and_erases_it_at_the_end() {
        let screen = Screen::default();
        let data = vec![b'x'; 4000];
        let mut p = Progress::new(
            &data[..],
            "big.log".into(),
            Some(4000),
            Some(Box::new(screen.clone())),
            Duration::ZERO,
        );
        assert_eq!(read_all(&mut p), 4000);
        let text = screen.text();
        assert!(
            text.starts_with("\r\x1b[Kbig.log: 1.0 of 4.0 kB (25 %)"),
            "{text:?}"
        );
        assert!(text.ends_with("\r\x1b[K"), "{text:?}");
    }

    #[test]
    fn a_quick_read_shows_nothing() {
        let screen = Screen::default();
        let data = vec![b'x'; 4000];
        let mut p = Progress::new(
            &data[..],
            "small.log".into(),
            Some(4000),
            Some(Box::new(screen.clone())),
            Duration::from_secs(3600),
        );
        read_all(&mut p);
        drop(p);
        assert_eq!(screen.text(), "");
    }

    #[test]
    fn an_interrupted_read_erases_its_line() {
        let screen = Screen::default();
        let data = vec![b'x'; 4000];
        let mut p = Progress::new(
            &data[..],
            "-".into(),
            None,
            Some(Box::new(screen.clone())),
            Duration::ZERO,
        );
        let mut buf = [0u8; 1000];
        assert_eq!(p.read(&mut buf).ok(), Some(1000));
        drop(p);
        assert_eq!(screen.text(), "\r\x1b[K-: 1.0 kB read\r\x1b[K");
    }
}

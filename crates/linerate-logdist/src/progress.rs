//! How far a read has come, told to whoever shows it: the engine counts the bytes it takes
//! from each file and calls a [`Progress`]; it never draws anything itself (the binary draws a
//! bar on a terminal, tests record the calls, a pipe gets [`NoProgress`]).

use std::io::{self, Read};

/// Receives the progress of reading the files of a data set, one file after another, from the
/// thread that reads them. Standard input reports nothing: its size is unknown and it is
/// often a pipe that another program already shows progress for.
pub trait Progress: Send + Sync {
    /// A file begins: its name (as in messages) and its size when it is a regular file.
    fn start(&self, name: &str, total: Option<u64>);
    /// `read` bytes of the current file have been read so far (compressed bytes for gzip).
    fn advance(&self, read: u64);
    /// The current file is read to its end, or its read stopped early (an error, or enough
    /// was read). Called once per [`Progress::start`].
    fn finish(&self);
    /// Whether the reading should stop here (a stop signal): every input then reads as ended
    /// and the data set holds what was read before.
    fn stopped(&self) -> bool {
        false
    }
}

/// Shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: &str, _: Option<u64>) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// A reader that tells a [`Progress`] how much of its input it has read.
pub(crate) struct Counted<'p, R> {
    inner: R,
    progress: &'p dyn Progress,
    read: u64,
    finished: bool,
}

impl<'p, R> Counted<'p, R> {
    /// Starts reporting the read of `name` (`total` bytes when known).
    pub(crate) fn new(
        inner: R,
        progress: &'p dyn Progress,
        name: &str,
        total: Option<u64>,
    ) -> Self {
        progress.start(name, total);
        Self {
            inner,
            progress,
            read: 0,
            finished: false,
        }
    }

    fn finish(&mut self) {
        if !self.finished {
            self.finished = true;
            self.progress.finish();
        }
    }
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.progress.stopped() {
            self.finish();
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        if n == 0 {
            self.finish();
        } else {
            self.read += n as u64;
            self.progress.advance(self.read);
        }
        Ok(n)
    }
}

/// A reader (standard input, which shows no progress) that reads as ended once the
/// [`Progress`] says the reading should stop.
pub(crate) struct Stopping<'p, R> {
    pub(crate) inner: R,
    pub(crate) progress: &'p dyn Progress,
}

impl<R: Read> Read for Stopping<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.progress.stopped() {
            return Ok(0);
        }
        self.inner.read(buf)
    }
}

impl<R> Drop for Counted<'_, R> {
    fn drop(&mut self) {
        // An error or an early stop ends the report too, so nothing is left drawn.
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Records every call.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl Recorder {
        fn push(&self, event: String) {
            if let Ok(mut events) = self.0.lock() {
                events.push(event);
            }
        }
        fn events(&self) -> Vec<String> {
            self.0.lock().map(|e| e.clone()).unwrap_or_default()
        }
    }

    impl Progress for Recorder {
        fn start(&self, name: &str, total: Option<u64>) {
            self.push(format!("start {name} {total:?}"));
        }
        fn advance(&self, read: u64) {
            self.push(format!("advance {read}"));
        }
        fn finish(&self) {
            self.push("finish".to_owned());
        }
    }

    #[test]
    fn reports_the_bytes_read_and_finishes_once() {
        let recorder = Recorder::default();
        let data = vec![b'x'; 2500];
        let mut reader = Counted::new(&data[..], &recorder, "big.log", Some(2500));
        let mut buf = [0u8; 1000];
        while reader.read(&mut buf).map(|n| n > 0).unwrap_or(false) {}
        drop(reader);
        assert_eq!(
            recorder.events(),
            [
                "start big.log Some(2500)",
                "advance 1000",
                "advance 2000",
                "advance 2500",
                "finish"
            ]
        );
    }

    #[test]
    fn an_interrupted_read_still_finishes() {
        let recorder = Recorder::default();
        let data = vec![b'x'; 2500];
        let mut reader = Counted::new(&data[..], &recorder, "-", None);
        let mut buf = [0u8; 1000];
        assert_eq!(reader.read(&mut buf).ok(), Some(1000));
        drop(reader);
        assert_eq!(
            recorder.events(),
            ["start - None", "advance 1000", "finish"]
        );
    }
}

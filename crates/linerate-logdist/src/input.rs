//! Reading log files: plain, gzip (by magic bytes, so `access.log.1` that is really gzip works
//! too) or stdin, split into lines with big buffered reads and `memchr`, without a per-line
//! allocation. Lines longer than 1 MiB are reported, not buffered without bound.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use crate::error::Error;
use crate::progress::{Counted, Progress, Stopping};

/// Read size: large enough that syscalls and memchr setup vanish in the per-line cost.
const CHUNK: usize = 1 << 20;
/// The longest line kept whole; longer ones are counted as too long.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// Where lines come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Standard input (`-`).
    Stdin,
    /// A file.
    File(PathBuf),
}

impl Source {
    /// `-` is stdin, anything else a path.
    pub fn from_arg(arg: &Path) -> Self {
        if arg.as_os_str() == "-" {
            Self::Stdin
        } else {
            Self::File(arg.to_path_buf())
        }
    }

    /// The name used in messages.
    pub fn name(&self) -> String {
        match self {
            Self::Stdin => "<stdin>".to_owned(),
            Self::File(p) => p.display().to_string(),
        }
    }
}

/// One line handed to the consumer.
pub(crate) struct Line<'a> {
    /// 1-based line number in its input.
    pub number: u64,
    /// The bytes without the line ending (`\n` or `\r\n`).
    pub bytes: &'a [u8],
    /// Whether the line ended in `\r\n`.
    pub crlf: bool,
    /// Longer than [`MAX_LINE`]: `bytes` holds only its start.
    pub too_long: bool,
}

/// How reading one input ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReadEnd {
    /// Lines handed over.
    pub lines: u64,
    /// Whether the data was gzip-compressed.
    pub gzip: bool,
    /// Set when a compressed stream ended early or was corrupt: what happened. The lines
    /// before it were read; a partial last line is dropped (and counted as truncated).
    pub stream_error: Option<String>,
}

/// What [`LineReader::next_chunk`] handed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Chunk {
    /// Whole lines (the last one may lack its newline at the end of the input).
    Lines,
    /// The first bytes of one line longer than [`MAX_LINE`]; the rest of it is skipped.
    LongLine,
    /// The end of the input: a compressed stream's error, and whether a partial last line
    /// was dropped because of it.
    End {
        /// The error of a compressed stream that ended early or was corrupt.
        stream_error: Option<String>,
        /// A partial line was dropped.
        cut: bool,
    },
}

/// Streams lines from a reader into a callback, or whole-line chunks to worker threads.
pub(crate) struct LineReader<'p> {
    inner: Box<dyn Read + 'p>,
    gzip: bool,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    skipping_long: bool,
    stream_error: Option<String>,
    cut: bool,
}

impl<'p> LineReader<'p> {
    /// Opens a source, detecting gzip by its magic bytes; a file's read is reported to
    /// `progress`.
    pub fn open(source: &Source, progress: &'p dyn Progress) -> Result<Self, Error> {
        let mut raw: Box<dyn Read + 'p> = match source {
            Source::Stdin => Box::new(Stopping {
                inner: io::stdin(),
                progress,
            }),
            Source::File(path) => {
                let file = File::open(path).map_err(|source| Error::Open {
                    path: path.clone(),
                    source,
                })?;
                let size = file
                    .metadata()
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|m| m.len());
                Box::new(Counted::new(file, progress, &source.name(), size))
            }
        };
        let mut head = [0u8; 2];
        let mut got = 0;
        while got < 2 {
            let n = match raw.read(&mut head[got..]) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source_error) => {
                    return Err(Error::Read {
                        name: source.name(),
                        source: source_error,
                    });
                }
            };
            if n == 0 {
                break;
            }
            got += n;
        }
        let chained = io::Cursor::new(head[..got].to_vec()).chain(raw);
        let gzip = got == 2 && head == [0x1f, 0x8b];
        let inner: Box<dyn Read + 'p> = if gzip {
            Box::new(MultiGzDecoder::new(chained))
        } else {
            Box::new(chained)
        };
        Ok(Self {
            inner,
            gzip,
            buf: vec![0; CHUNK],
            start: 0,
            end: 0,
            eof: false,
            skipping_long: false,
            stream_error: None,
            cut: false,
        })
    }

    /// Whether the data is gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// The error that ended a compressed stream early, if one did so far.
    pub fn stream_error(&self) -> Option<&str> {
        self.stream_error.as_deref()
    }

    /// Moves whole lines, about half a chunk of them, into `out` (cleared first). Errors of a
    /// plain file or stdin are returned; a compressed stream's error ends the input after
    /// its complete lines, reported by [`Chunk::End`].
    pub fn next_chunk(&mut self, out: &mut Vec<u8>) -> io::Result<Chunk> {
        out.clear();
        loop {
            if self.skipping_long {
                match memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                    Some(nl) => {
                        self.start += nl + 1;
                        self.skipping_long = false;
                    }
                    None => self.start = self.end,
                }
            }
            let pending = &self.buf[self.start..self.end];
            if self.eof {
                if pending.is_empty() {
                    return Ok(Chunk::End {
                        stream_error: self.stream_error.take(),
                        cut: std::mem::take(&mut self.cut),
                    });
                }
                out.extend_from_slice(pending);
                self.start = self.end;
                return Ok(Chunk::Lines);
            }
            if pending.len() >= CHUNK / 2 && !self.skipping_long {
                if let Some(nl) = memchr::memrchr(b'\n', pending) {
                    out.extend_from_slice(&pending[..=nl]);
                    self.start += nl + 1;
                    return Ok(Chunk::Lines);
                }
                if pending.len() >= MAX_LINE {
                    out.extend_from_slice(&pending[..200]);
                    self.start = self.end;
                    self.skipping_long = true;
                    return Ok(Chunk::LongLine);
                }
            }
            self.fill_or_break()?;
        }
    }

    /// Reads more data after the unconsumed bytes; returns the bytes read (0 at the end).
    fn fill(&mut self) -> io::Result<usize> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(n) => {
                    self.end += n;
                    if n == 0 {
                        self.eof = true;
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The first buffered bytes (at least one chunk unless the input is shorter), for format
    /// detection before streaming.
    pub fn peek(&mut self) -> io::Result<&[u8]> {
        while !self.eof && self.end < CHUNK / 4 {
            self.fill_or_break()?;
        }
        Ok(&self.buf[self.start..self.end])
    }

    /// Reads more; a compressed stream's error ends the input instead of failing: the complete
    /// lines already buffered stay, a partial last line is dropped and remembered as cut.
    fn fill_or_break(&mut self) -> io::Result<()> {
        match self.fill() {
            Ok(_) => Ok(()),
            Err(e) if self.gzip => {
                self.stream_error = Some(e.to_string());
                self.eof = true;
                let pending = &self.buf[self.start..self.end];
                let keep = memchr::memrchr(b'\n', pending).map_or(0, |nl| nl + 1);
                self.cut = keep < pending.len() && !self.skipping_long;
                self.end = self.start + keep;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Hands every line to `each`. Errors of a plain file or stdin are fatal; a compressed
    /// stream that ends early or is corrupt ends the read with [`ReadEnd::stream_error`] set.
    pub fn for_each_line(
        mut self,
        mut each: impl FnMut(Line<'_>),
    ) -> io::Result<(ReadEnd, Option<u64>)> {
        let mut number = 0u64;
        let mut end = ReadEnd {
            gzip: self.gzip,
            ..ReadEnd::default()
        };
        loop {
            // Hand over every complete line in the buffer.
            let data = &self.buf[self.start..self.end];
            let mut consumed = 0;
            for nl in memchr::memchr_iter(b'\n', data) {
                let raw = &data[consumed..nl];
                consumed = nl + 1;
                if self.skipping_long {
                    self.skipping_long = false;
                    continue;
                }
                number += 1;
                let (bytes, crlf) = strip_cr(raw);
                each(Line {
                    number,
                    bytes,
                    crlf,
                    too_long: false,
                });
            }
            self.start += consumed;
            if self.eof {
                break;
            }
            let pending = self.end - self.start;
            if pending >= MAX_LINE && !self.skipping_long {
                number += 1;
                each(Line {
                    number,
                    bytes: &self.buf[self.start..self.start + 200],
                    crlf: false,
                    too_long: true,
                });
                self.skipping_long = true;
            }
            if self.skipping_long {
                self.start = self.end;
            }
            self.fill_or_break()?;
        }
        // The last line may lack a newline.
        if self.end > self.start && !self.skipping_long {
            number += 1;
            let raw = &self.buf[self.start..self.end];
            let (bytes, crlf) = strip_cr(raw);
            each(Line {
                number,
                bytes,
                crlf,
                too_long: false,
            });
        }
        end.lines = number;
        end.stream_error = self.stream_error.take();
        // the partial line a broken stream left is reported with the next number
        let cut = self.cut.then_some(number + 1);
        Ok((end, cut))
    }
}

/// A line without its `\r` (CRLF files), and whether it had one.
fn strip_cr(raw: &[u8]) -> (&[u8], bool) {
    match raw.split_last() {
        Some((b'\r', bytes)) => (bytes, true),
        _ => (raw, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;
    use std::io::Write;

    fn lines_of(data: &[u8]) -> Vec<(u64, Vec<u8>, bool)> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.log");
        std::fs::write(&path, data).expect("write");
        let reader = LineReader::open(&Source::File(path), &NoProgress).expect("open");
        let mut out = Vec::new();
        reader
            .for_each_line(|l| out.push((l.number, l.bytes.to_vec(), l.crlf)))
            .expect("read");
        out
    }

    #[test]
    fn splits_lf_crlf_and_a_last_line_without_newline() {
        let got = lines_of(b"a\r\nbb\n\nccc");
        assert_eq!(
            got,
            vec![
                (1, b"a".to_vec(), true),
                (2, b"bb".to_vec(), false),
                (3, b"".to_vec(), false),
                (4, b"ccc".to_vec(), false)
            ]
        );
    }

    #[test]
    fn lines_across_chunk_boundaries_stay_whole() {
        let mut data = Vec::new();
        for i in 0..300_000 {
            writeln!(data, "line {i} {}", "x".repeat(i % 13)).expect("write");
        }
        let got = lines_of(&data);
        assert_eq!(got.len(), 300_000);
        assert_eq!(
            got[123_456].1,
            format!("line 123456 {}", "x".repeat(123_456 % 13)).as_bytes()
        );
    }

    fn open_bytes(data: &[u8]) -> (tempfile::TempDir, LineReader<'static>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.log");
        std::fs::write(&path, data).expect("write");
        let reader = LineReader::open(&Source::File(path), &NoProgress).expect("open");
        (dir, reader)
    }

    #[test]
    fn overlong_lines_are_flagged_not_buffered() {
        let mut data = b"a\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', MAX_LINE * 2 + 10));
        data.extend_from_slice(b"\nb\n");
        let (_dir, reader) = open_bytes(&data);
        let mut seen = Vec::new();
        reader
            .for_each_line(|l| seen.push((l.number, l.too_long, l.bytes.len())))
            .expect("read");
        assert_eq!(seen, vec![(1, false, 1), (2, true, 200), (3, false, 1)]);

        let (_dir, mut reader) = open_bytes(&data);
        let mut out = Vec::new();
        let mut chunks = Vec::new();
        loop {
            let chunk = reader.next_chunk(&mut out).expect("read");
            let end = matches!(chunk, Chunk::End { .. });
            chunks.push((chunk, out.clone()));
            if end {
                break;
            }
        }
        assert_eq!(chunks.len(), 4);
        assert_eq!(chunks[0], (Chunk::Lines, b"a\n".to_vec()));
        assert_eq!(chunks[1].0, Chunk::LongLine);
        assert_eq!(chunks[1].1, vec![b'x'; 200]);
        assert_eq!(chunks[2], (Chunk::Lines, b"b\n".to_vec()));
        assert_eq!(
            chunks[3].0,
            Chunk::End {
                stream_error: None,
                cut: false
            }
        );
    }

    #[test]
    fn truncated_gzip_reports_the_lines_read() {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for i in 0..100_000 {
            writeln!(enc, "line number {i}").expect("write");
        }
        let full = enc.finish().expect("finish");
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.log.gz");
        std::fs::write(&path, &full[..full.len() / 2]).expect("write");
        let reader = LineReader::open(&Source::File(path), &NoProgress).expect("open");
        let mut n = 0;
        let (end, cut) = reader.for_each_line(|_| n += 1).expect("read");
        assert!(end.gzip);
        assert!(end.stream_error.is_some());
        assert_eq!(end.lines, n);
        assert!(n > 1000 && n < 100_000, "{n}");
        assert_eq!(cut, Some(n + 1));
    }
}

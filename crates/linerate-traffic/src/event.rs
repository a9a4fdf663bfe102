//! What the client reports while it runs, for live rendering (human lines, `--json-stream`).

use crate::result::{Interval, StartInfo};

/// A live event of a client run.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// Streams are connected; the test starts.
    Start(&'a StartInfo),
    /// One reporting interval ended.
    Interval(&'a Interval),
}

//! What the server reports: one record per event, rendered by the binary.

use std::net::SocketAddr;
use std::sync::Arc;

/// Severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Normal operation.
    Info,
    /// A client misbehaved or a test failed; the server goes on.
    Warn,
}

/// One log record.
#[derive(Debug, Clone)]
pub struct ServerLog {
    /// Severity.
    pub level: Level,
    /// Test number (1, 2, …) when the record is about a test.
    pub test: Option<u64>,
    /// The client, when known.
    pub peer: Option<SocketAddr>,
    /// What happened; empty for a refusal counted but not to be printed (the same source was
    /// refused for the same reason within the refusal log interval).
    pub message: String,
    /// For a refused connection or test, why, as a short word (`busy`, `timeout`, `http`,
    /// `garbage`, `evicted`, …), for counters by reason.
    pub refused: Option<&'static str>,
    /// The record that ends a test: its summary (info) or its failure (warning).
    pub ended: bool,
}

/// Where log records go.
pub type LogSink = Arc<dyn Fn(ServerLog) + Send + Sync>;

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
    /// What happened.
    pub message: String,
}

/// Where log records go.
pub type LogSink = Arc<dyn Fn(ServerLog) + Send + Sync>;

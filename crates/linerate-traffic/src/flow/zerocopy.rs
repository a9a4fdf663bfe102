//! What a bulk TCP stream's zero-copy paths did (`--zerocopy`): filled by the stream's
//! thread ([`crate::stream::tcp_zc`] on Linux), read by the side's report
//! ([`crate::modes::result::zerocopy`]). Data only, so every platform has it.

/// How a receiver took its bytes in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ZcOutcome {
    /// "zerocopy" or "copy".
    pub path: &'static str,
    /// Bytes mapped.
    pub mapped: u64,
    /// Bytes read by copy (skip hints and, after a fallback, everything).
    pub copied: u64,
    /// Why the copy path was taken, if it was.
    pub fallback: Option<String>,
}

/// How a sender put its bytes out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ZcSendOutcome {
    /// "msg_zerocopy" or "copy".
    pub path: &'static str,
    /// `MSG_ZEROCOPY` sends the kernel reported complete.
    pub sends: u64,
    /// Of those, sends the kernel copied after all.
    pub kernel_copied: u64,
    /// Why the copy path was taken, if it was.
    pub fallback: Option<String>,
}

/// One stream's zero-copy outcome: its receive or its send side.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ZcStream {
    /// Set by a receiving stream.
    pub receive: Option<ZcOutcome>,
    /// Set by a sending stream.
    pub send: Option<ZcSendOutcome>,
}

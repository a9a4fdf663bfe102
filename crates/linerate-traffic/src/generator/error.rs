//! What can go wrong in the frame generator and its counter. The messages name the flag of
//! `linerate gen` whose value was wrong, since that is how the configuration is given.

use std::io;

use crate::frame::FrameError;

/// An error of the generator or the receive counter.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// The interface does not exist (its sysfs file is not there).
    #[error("--dev {dev}: no such interface ({path})")]
    NoInterface {
        /// The interface.
        dev: String,
        /// The file read.
        path: String,
        /// Why it could not be read.
        #[source]
        source: io::Error,
    },
    /// A MAC address read from the system is not one.
    #[error("{path}: {reason}")]
    BadMac {
        /// Where it was read.
        path: String,
        /// What was wrong.
        reason: String,
    },
    /// No source address was given.
    #[error(
        "--src-ip is needed (the address linerate gen puts in its frames; the interface has no \
         IPv4 address to default to), e.g. --src-ip 198.18.0.1"
    )]
    NoSourceAddress,
    /// The destination's MAC is not in the neighbour table.
    #[error(
        "no neighbour entry for {ip} on {dev}: give --dst-mac, or resolve it first (e.g. ping \
         -c1 {ip})"
    )]
    NoNeighbour {
        /// The destination address.
        ip: std::net::Ipv4Addr,
        /// The interface.
        dev: String,
    },
    /// A frame could not be built.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// A CPU to pin to is not one this process may use.
    #[error("--cpu: CPU {cpu} is not one this process may run on (allowed: {allowed:?})")]
    CpuNotAllowed {
        /// The CPU asked for.
        cpu: usize,
        /// The CPUs this process may use.
        allowed: Vec<usize>,
    },
    /// Opening a packet or AF_XDP socket needs CAP_NET_RAW.
    #[error(
        "{program} needs CAP_NET_RAW to open {what} on {dev} (run as root or grant the \
         capability)"
    )]
    Permission {
        /// `linerate gen` or `linerate gen --receive`.
        program: &'static str,
        /// The socket (`a packet transmit ring`).
        what: &'static str,
        /// The interface.
        dev: String,
    },
    /// An operating-system call failed while doing `what`.
    #[error("{what}")]
    Io {
        /// What was being done (`sending from the ring`).
        what: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A frame too large for an AF_XDP UMEM chunk.
    #[error(
        "--engine xdp sends frames up to 2052 bytes (one 2 KiB UMEM chunk each); --frame \
         {largest} needs --engine packet"
    )]
    XdpFrameTooLarge {
        /// The largest frame asked for.
        largest: usize,
    },
    /// Fewer queues than AF_XDP threads.
    #[error(
        "--engine xdp with --threads {threads} needs {threads} queues on {dev} (it has \
         {queues}): one AF_XDP socket per queue. Create the veth with numtxqueues {threads} \
         numrxqueues {threads}, or use --engine packet"
    )]
    XdpQueues {
        /// Threads asked for.
        threads: usize,
        /// The interface.
        dev: String,
        /// Its transmit queues.
        queues: usize,
    },
    /// The kernel or driver refused an AF_XDP socket on a queue.
    #[error("--engine xdp: cannot bind an AF_XDP socket to {dev} queue {queue}: {why} ({error})")]
    XdpBind {
        /// The interface.
        dev: String,
        /// The queue.
        queue: u32,
        /// Why, in words (from the errno).
        why: String,
        /// The OS error.
        error: io::Error,
    },
    /// A sending thread panicked.
    #[error("a sender thread panicked")]
    Panicked,
    /// An interface counter did not read as a number.
    #[error("{path}: not a counter: {text:?}")]
    BadCounter {
        /// The sysfs file.
        path: String,
        /// What it held.
        text: String,
        /// The parse error.
        #[source]
        source: std::num::ParseIntError,
    },
    /// An operating-system call failed.
    #[error(transparent)]
    Os(#[from] io::Error),
}

impl GenError {
    /// `what` failed with `source`.
    #[cfg(target_os = "linux")]
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(io::Error) -> GenError {
        let what = what.into();
        move |source| GenError::Io { what, source }
    }

    /// The message with its causes, `what: why: reason`.
    pub fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            text.push_str(": ");
            text.push_str(&c.to_string());
            cause = c.source();
        }
        text
    }
}

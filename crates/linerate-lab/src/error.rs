//! The lab's errors: each names what was being done and, for missing capabilities, the fix.

use std::io;
use std::path::PathBuf;

use crate::spec::SpecError;
use linerate_sys::netlink::NetlinkError;

/// Everything that can go wrong building, using or removing a lab.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// An invalid lab name.
    #[error("invalid lab name {name:?}: {reason}")]
    BadName {
        /// The name as given.
        name: String,
        /// Why it is refused.
        reason: String,
    },
    /// An invalid flag value.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// Not root.
    #[error(
        "linerate lab needs root (CAP_SYS_ADMIN to create and mount network namespaces, \
         CAP_NET_ADMIN to configure them); run it as root, e.g. with sudo"
    )]
    NotRoot,
    /// The kernel cannot create network namespaces.
    #[error(
        "cannot create a network namespace ({0}); the kernel needs CONFIG_NET_NS, and inside a container the container needs CAP_SYS_ADMIN"
    )]
    NoNetns(io::Error),
    /// The kernel has no veth driver.
    #[error(
        "cannot create a veth pair: the kernel has no veth driver; load it with `modprobe veth` (CONFIG_VETH)"
    )]
    NoVeth(NetlinkError),
    /// Kernel netem was asked for but is missing.
    #[error(
        "--emulator kernel: this kernel has no netem qdisc (sch_netem: `modprobe sch_netem`, \
         CONFIG_NET_SCH_NETEM); use --emulator userspace or auto"
    )]
    NoNetem,
    /// A lab of that name exists.
    #[error("lab {name:?} already exists ({why}); remove it first with `linerate lab down {name}`")]
    Exists {
        /// The lab.
        name: String,
        /// What was found.
        why: String,
    },
    /// No lab of that name.
    #[error("no lab named {0:?} (see `linerate lab list`)")]
    NoSuchLab(String),
    /// A node that the lab does not have.
    #[error("lab {lab:?} has no node {node:?} (nodes: {nodes})")]
    NoSuchNode {
        /// The lab.
        lab: String,
        /// The node asked for.
        node: String,
        /// The nodes it has.
        nodes: String,
    },
    /// A netlink request failed.
    #[error(transparent)]
    Netlink(#[from] NetlinkError),
    /// A file or system operation failed.
    #[error("{what}")]
    Io {
        /// What was being done (names the path).
        what: String,
        /// The OS error.
        source: io::Error,
    },
    /// A state file could not be read.
    #[error("state file {path}: {reason}")]
    BadState {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A sysctl key that is not per network namespace.
    #[error("refusing {key}: {reason}")]
    HostOnlyKey {
        /// The key.
        key: String,
        /// Why it is host-wide.
        reason: String,
    },
    /// A sysctl key that does not exist.
    #[error("unknown sysctl {key}: no /proc/sys/{path} {place} or on the host")]
    UnknownKey {
        /// The key.
        key: String,
        /// Its path under /proc/sys.
        path: String,
        /// Where it was looked for, e.g. `in node gen`.
        place: String,
    },
    /// A sysctl write did not stick.
    #[error("sysctl {key} in node {node}: wrote {wrote:?} but read back {read:?}")]
    ReadBack {
        /// The key.
        key: String,
        /// The node.
        node: String,
        /// What was written.
        wrote: String,
        /// What was read back.
        read: String,
    },
    /// The userspace emulator failed to start or stopped.
    #[error("link emulator for {link}: {reason}")]
    Emulator {
        /// The link.
        link: String,
        /// What happened (with its log when there is one).
        reason: String,
    },
    /// A tool the lab needs is not installed.
    #[error(
        "`{tool}` is not installed; install it with `apt-get install {package}` (Debian/Ubuntu)"
    )]
    MissingTool {
        /// The program.
        tool: String,
        /// The Debian package that has it.
        package: String,
    },
    /// A real host refused, could not be reached, or failed a step; names the host.
    #[error("host {host}: {reason}")]
    Host {
        /// `role (ssh destination)`.
        host: String,
        /// What happened.
        reason: String,
    },
    /// nft refused a ruleset.
    #[error("nft in node {node}: {reason}")]
    Firewall {
        /// The node.
        node: String,
        /// nft's message.
        reason: String,
    },
    /// A tunnel daemon failed, with its log.
    #[error("tunnel: {reason}")]
    Tunnel {
        /// What happened (with the daemon's log when there is one).
        reason: String,
    },
    /// A program the lab ran printed a document that does not read as its schema: a field
    /// missing or of the wrong type (never read as zero).
    #[error("{program} printed a {schema} document that does not read: {source}")]
    Document {
        /// The program (`linerate gen --receive`).
        program: String,
        /// The schema expected.
        schema: &'static str,
        /// The field and what was wrong with it.
        source: linerate_traffic::generator::document::DocumentError,
    },
    /// A measurement was stopped by a signal before it ended.
    #[error("stopped by a signal")]
    Stopped,
    /// Bring-up was interrupted by a signal; everything created was removed.
    #[error("interrupted by signal {0}; everything created so far was removed")]
    Interrupted(i32),
}

impl LabError {
    /// Wraps an I/O error with what was being done.
    pub fn io(what: impl Into<String>) -> impl FnOnce(io::Error) -> LabError {
        let what = what.into();
        move |source| LabError::Io { what, source }
    }
}

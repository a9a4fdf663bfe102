//! One netlink client for route netlink ([`Rtnl`]: links, veth pairs, addresses, routes,
//! neighbours, qdiscs) and generic netlink ([`Genl`]: family lookup, the `netdev` family's
//! per-queue statistics). Synchronous and blocking: one socket, one request at a time, every
//! request acknowledged or its dump read to the end.
//!
//! The socket is netlink-sys's; message framing, acks, errors and attribute encoding are
//! netlink-packet-core's; route messages are netlink-packet-route's typed structs and generic
//! messages are framed by netlink-packet-generic. (The `rtnetlink`/`genetlink` client crates
//! on top of these are async-only, so the request loop here is our own, about sixty lines.)
//! Hand-written, with the reason at each place: the `netdev` family's attributes (no crate has
//! them), netem's option blob (a C struct followed by attributes, which netlink-packet-route's
//! qdisc options cannot express), and reading nlctrl's family-id reply raw (the typed
//! `GenlCtrl` parser refuses the whole reply on any attribute it does not know).

mod generic;
mod route;

use std::io;

use netlink_packet_core::{
    NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST, NetlinkBuffer, NetlinkDeserializable, NetlinkHeader,
    NetlinkMessage, NetlinkPayload, NetlinkSerializable,
};
use netlink_sys::{Socket, SocketAddr};

pub use generic::{Genl, QueueKind, QueueStats};
pub use route::{Address, Link, Mac, Netem, Rtnl, VethEnd};

/// What a request that failed was trying to do, with the kernel's answer.
#[derive(Debug, thiserror::Error)]
#[error("netlink: {what}: {cause}")]
pub struct NetlinkError {
    /// The operation, e.g. "create veth lr-a-g0 <-> lr-a-d0".
    pub what: String,
    /// The kernel's error (errno), or why the answer could not be read.
    pub cause: io::Error,
}

impl NetlinkError {
    /// The errno the kernel answered, if any.
    pub fn errno(&self) -> Option<i32> {
        self.cause.raw_os_error()
    }
}

/// Receive buffer: the kernel sizes dump batches to the reader's buffer up to 32 KiB, and one
/// link message with all its statistics is a few KiB.
const RECV_BUFFER: usize = 64 * 1024;

/// A netlink socket connected to the kernel, in the network namespace of the thread that
/// opened it (it stays bound to that namespace whichever thread uses it later).
struct Conn {
    sock: Socket,
    seq: u32,
    buf: Vec<u8>,
}

/// How a request ends: with an acknowledgement, or with the end of a dump.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ack,
    Dump,
}

impl Conn {
    fn open(protocol: isize) -> io::Result<Conn> {
        let mut sock = Socket::new(protocol)?;
        sock.bind_auto()?;
        sock.connect(&SocketAddr::new(0, 0))?;
        Ok(Conn {
            sock,
            seq: 0,
            buf: Vec::with_capacity(RECV_BUFFER),
        })
    }

    /// Sends `payload` with `flags` (plus REQUEST, and ACK or DUMP by `kind`) and returns every
    /// reply message of this request, in order.
    fn request<M>(&mut self, payload: M, flags: u16, kind: Kind) -> io::Result<Vec<M>>
    where
        M: NetlinkSerializable + NetlinkDeserializable,
        M::Error: std::fmt::Display,
    {
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST
            | flags
            | match kind {
                Kind::Ack => NLM_F_ACK,
                Kind::Dump => NLM_F_DUMP,
            };
        header.sequence_number = seq;
        let mut msg = NetlinkMessage::new(header, NetlinkPayload::InnerMessage(payload));
        msg.finalize();
        let mut bytes = vec![0u8; msg.buffer_len()];
        msg.serialize(&mut bytes);
        self.sock.send(&bytes, 0)?;

        let mut replies = Vec::new();
        loop {
            self.buf.clear();
            match self.sock.recv(&mut self.buf, 0) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            let mut at = 0;
            while at < self.buf.len() {
                let rest = &self.buf[at..];
                let frame = NetlinkBuffer::new_checked(rest).map_err(invalid)?;
                let len = frame.length() as usize;
                let this_seq = frame.sequence_number();
                at += len.next_multiple_of(4).max(16);
                // Leftovers of an earlier request that ended early carry its number.
                if this_seq != seq {
                    continue;
                }
                let message = NetlinkMessage::<M>::deserialize(&rest[..len]).map_err(invalid)?;
                match message.payload {
                    NetlinkPayload::InnerMessage(m) => replies.push(m),
                    NetlinkPayload::Done(_) => return Ok(replies),
                    NetlinkPayload::Error(e) => {
                        return match e.code {
                            // An acknowledgement is an error message with code 0.
                            None => Ok(replies),
                            Some(_) => Err(e.to_io()),
                        };
                    }
                    _ => {}
                }
            }
        }
    }
}

fn invalid(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("unreadable netlink reply: {e}"),
    )
}

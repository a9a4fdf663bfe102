//! The pre-cookie stage on one event loop (epoll/kqueue through mio): every new connection
//! waits here, costing a table entry and a 37-byte buffer rather than a thread, until its
//! cookie is complete, it closes, it times out or it is evicted. Only a connection with a
//! whole cookie gets a thread.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use super::{Level, Shared, accept};
use crate::error::TrafficError;
use crate::protocol::cookie::COOKIE_LEN;

const LISTENER: Token = Token(usize::MAX);

/// The longest the loop sleeps before looking at the stop flag and the timeouts.
const TICK: Duration = Duration::from_millis(100);

/// A connection before its cookie.
struct Conn {
    stream: TcpStream,
    peer: SocketAddr,
    buf: [u8; COOKIE_LEN],
    got: usize,
    since: Instant,
}

/// What reading a connection came to.
enum Step {
    Waiting,
    Cookie,
    Closed,
}

/// The event loop's state: the poller and the pending connections by accept order.
struct Loop<'a> {
    sh: &'a Arc<Shared>,
    poll: Poll,
    conns: BTreeMap<u64, Conn>,
    seq: u64,
}

/// Accepts and takes cookies until `stop` is set (or the one test of `--one-off` is over).
pub fn run(sh: &Arc<Shared>, tcp: &TcpListener, stop: &AtomicBool) -> Result<(), TrafficError> {
    let poll = Poll::new().map_err(|e| TrafficError::socket("creating the event loop", e))?;
    tcp.set_nonblocking(true)
        .map_err(|e| TrafficError::socket("making the listener non-blocking", e))?;
    let fd = tcp.as_raw_fd();
    poll.registry()
        .register(&mut SourceFd(&fd), LISTENER, Interest::READABLE)
        .map_err(|e| TrafficError::socket("watching the listener", e))?;
    let mut lp = Loop {
        sh,
        poll,
        conns: BTreeMap::new(),
        seq: 0,
    };
    let mut events = Events::with_capacity(1024);
    loop {
        if stop.load(Ordering::Relaxed) {
            sh.log(Level::Info, None, None, "shutting down".to_owned());
            break;
        }
        if sh.cfg.one_off
            && sh.finished.load(Ordering::Relaxed) >= 1
            && sh.active.load(Ordering::Relaxed) == 0
        {
            break;
        }
        match lp.poll.poll(&mut events, Some(TICK)) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(TrafficError::socket("waiting for connections", e)),
        }
        for ev in &events {
            if ev.token() == LISTENER {
                lp.accept_all(tcp);
            } else {
                lp.read(ev.token().0 as u64);
            }
        }
        lp.expire(Instant::now());
    }
    let seqs: Vec<u64> = lp.conns.keys().copied().collect();
    for s in seqs {
        lp.drop_conn(s);
    }
    Ok(())
}

impl Loop<'_> {
    fn accept_all(&mut self, tcp: &TcpListener) {
        loop {
            match tcp.accept() {
                Ok((stream, peer)) => self.add(stream, accept::unmap(peer)),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    // Out of descriptors, typically: the next tick tries again.
                    self.sh
                        .log(Level::Warn, None, None, format!("accept failed: {e}"));
                    return;
                }
            }
        }
    }

    fn add(&mut self, stream: TcpStream, peer: SocketAddr) {
        let allow = &self.sh.cfg.allow;
        if !allow.is_empty() && !allow.iter().any(|p| p.contains(peer.ip())) {
            let rules: Vec<String> = allow.iter().map(ToString::to_string).collect();
            self.sh.refuse(
                peer,
                "allow",
                format!(
                    "refused: {} is not in any --allow prefix ({})",
                    peer.ip(),
                    rules.join(", ")
                ),
            );
            return;
        }
        self.seq += 1;
        let seq = self.seq;
        for old in accept::admit(self.sh, peer, seq) {
            self.drop_conn(old);
        }
        let Ok(token) = usize::try_from(seq) else {
            super::lock(&self.sh.pending).finish(seq);
            return;
        };
        let fd = stream.as_raw_fd();
        let watched = stream.set_nonblocking(true).is_ok()
            && self
                .poll
                .registry()
                .register(&mut SourceFd(&fd), Token(token), Interest::READABLE)
                .is_ok();
        if !watched {
            super::lock(&self.sh.pending).finish(seq);
            self.sh.log(
                Level::Warn,
                None,
                Some(peer),
                "closed: cannot watch the connection".into(),
            );
            return;
        }
        self.conns.insert(
            seq,
            Conn {
                stream,
                peer,
                buf: [0; COOKIE_LEN],
                got: 0,
                since: Instant::now(),
            },
        );
        // Bytes that came with the connection raise no new edge: read them now.
        self.read(seq);
    }

    fn read(&mut self, seq: u64) {
        let Some(c) = self.conns.get_mut(&seq) else {
            return;
        };
        let step = loop {
            if c.got == COOKIE_LEN {
                break Step::Cookie;
            }
            match c.stream.read(&mut c.buf[c.got..]) {
                Ok(0) => break Step::Closed,
                Ok(n) => c.got += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break Step::Waiting,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break Step::Closed,
            }
        };
        match step {
            Step::Waiting => {}
            Step::Closed => {
                if let Some(c) = self.drop_conn(seq) {
                    accept::incomplete(self.sh, c.peer, &c.buf[..c.got], true);
                }
            }
            Step::Cookie => {
                if let Some(c) = self.drop_conn(seq) {
                    if c.stream.set_nonblocking(false).is_ok() {
                        accept::spawn_after_cookie(self.sh, c.stream, c.peer, seq, c.buf);
                    }
                }
            }
        }
    }

    /// Closes the connections older than the handshake timeout (the map is in accept order,
    /// so the scan stops at the first young one).
    fn expire(&mut self, now: Instant) {
        let limit = self.sh.cfg.handshake_timeout;
        let old: Vec<u64> = self
            .conns
            .iter()
            .take_while(|(_, c)| now.duration_since(c.since) >= limit)
            .map(|(s, _)| *s)
            .collect();
        for s in old {
            if let Some(c) = self.drop_conn(s) {
                accept::incomplete(self.sh, c.peer, &c.buf[..c.got], false);
            }
        }
    }

    /// Takes connection `seq` out of the loop and the pending table; the caller closes it
    /// (by dropping it) or hands it on.
    fn drop_conn(&mut self, seq: u64) -> Option<Conn> {
        let c = self.conns.remove(&seq)?;
        let fd = c.stream.as_raw_fd();
        let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
        super::lock(&self.sh.pending).finish(seq);
        Some(c)
    }
}

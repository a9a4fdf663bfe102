//! Cookies of the tests in progress: what a new connection presenting one of them is for.

use std::collections::HashMap;
use std::net::TcpStream;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};

use crate::protocol::Cookie;
use crate::stream::StreamCounters;

/// The channel a test waiting for streams receives them on: (accept order, socket).
pub type StreamSender = SyncSender<(u64, TcpStream)>;

/// A connect/request/response test in progress: each connection is one transaction.
#[derive(Debug)]
pub struct CrrServe {
    /// Request size.
    pub request: usize,
    /// Response size.
    pub response: usize,
    /// Transactions served and bytes moved.
    pub counters: Arc<StreamCounters>,
}

/// What a test accepts now.
#[derive(Debug)]
enum Slot {
    /// Nothing: a connection with this cookie is refused.
    Idle,
    /// Its data streams.
    Streams(StreamSender),
    /// One transaction per connection.
    Crr(Arc<CrrServe>),
}

/// Where a connection with a known cookie goes.
#[derive(Debug)]
pub enum Route {
    /// Handed to the test.
    Delivered,
    /// A transaction of a connect/request/response test: serve it on this connection.
    Transaction(TcpStream, Arc<CrrServe>),
    /// The test is not accepting connections now.
    Refused(TcpStream),
    /// No test has this cookie.
    Unknown(TcpStream),
}

/// The tests in progress.
#[derive(Debug, Default)]
pub struct Registry {
    tests: Mutex<HashMap<Cookie, Slot>>,
}

impl Registry {
    fn with<R>(&self, f: impl FnOnce(&mut HashMap<Cookie, Slot>) -> R) -> R {
        let mut g = match self.tests.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut g)
    }

    /// Registers a new test; false if the cookie is already in use.
    pub fn insert(&self, cookie: Cookie) -> bool {
        self.with(|m| match m.entry(cookie) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Slot::Idle);
                true
            }
        })
    }

    fn set(&self, cookie: &Cookie, slot: Slot) {
        self.with(|m| {
            if let Some(s) = m.get_mut(cookie) {
                *s = slot;
            }
        });
    }

    /// Opens (`Some`) or closes the test's stream channel.
    pub fn set_accepting(&self, cookie: &Cookie, tx: Option<StreamSender>) {
        self.set(cookie, tx.map_or(Slot::Idle, Slot::Streams));
    }

    /// Serves connect/request/response transactions for the test until [`Registry::set_accepting`].
    pub fn set_crr(&self, cookie: &Cookie, serve: Arc<CrrServe>) {
        self.set(cookie, Slot::Crr(serve));
    }

    /// Forgets a test.
    pub fn remove(&self, cookie: &Cookie) {
        self.with(|m| {
            m.remove(cookie);
        });
    }

    /// Routes a connection that presented `cookie`. `seq` is the connection's accept order,
    /// which is the client's connect order: the test sorts its streams by it, since the
    /// cookie readers race each other.
    pub fn route(&self, cookie: &Cookie, seq: u64, stream: TcpStream) -> Route {
        self.with(|m| match m.get(cookie) {
            None => Route::Unknown(stream),
            Some(Slot::Idle) => Route::Refused(stream),
            Some(Slot::Crr(serve)) => Route::Transaction(stream, Arc::clone(serve)),
            Some(Slot::Streams(tx)) => match tx.try_send((seq, stream)) {
                Ok(()) => Route::Delivered,
                Err(std::sync::mpsc::TrySendError::Full((_, s)))
                | Err(std::sync::mpsc::TrySendError::Disconnected((_, s))) => Route::Refused(s),
            },
        })
    }
}

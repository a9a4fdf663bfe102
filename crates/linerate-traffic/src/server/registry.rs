//! Cookies of the tests in progress, and the channel of each test still waiting for streams.

use std::collections::HashMap;
use std::net::TcpStream;
use std::sync::Mutex;
use std::sync::mpsc::SyncSender;

use crate::protocol::Cookie;

/// The channel a test waiting for streams receives them on: (accept order, socket).
pub type StreamSender = SyncSender<(u64, TcpStream)>;

/// Where a connection with a known cookie goes.
#[derive(Debug)]
pub enum Route {
    /// Handed to the test.
    Delivered,
    /// The test is not accepting streams now.
    Refused(TcpStream),
    /// No test has this cookie.
    Unknown(TcpStream),
}

/// The tests in progress.
#[derive(Debug, Default)]
pub struct Registry {
    tests: Mutex<HashMap<Cookie, Option<StreamSender>>>,
}

impl Registry {
    fn with<R>(&self, f: impl FnOnce(&mut HashMap<Cookie, Option<StreamSender>>) -> R) -> R {
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
                v.insert(None);
                true
            }
        })
    }

    /// Opens or closes the test's stream channel.
    pub fn set_accepting(&self, cookie: &Cookie, tx: Option<StreamSender>) {
        self.with(|m| {
            if let Some(slot) = m.get_mut(cookie) {
                *slot = tx;
            }
        });
    }

    /// Forgets a test.
    pub fn remove(&self, cookie: &Cookie) {
        self.with(|m| {
            m.remove(cookie);
        });
    }

    /// Routes a connection that presented `cookie`.
    /// `seq` is the connection's accept order, which is the client's connect order: the
    /// test sorts its streams by it, since the cookie readers race each other.
    pub fn route(&self, cookie: &Cookie, seq: u64, stream: TcpStream) -> Route {
        self.with(|m| match m.get(cookie) {
            None => Route::Unknown(stream),
            Some(None) => Route::Refused(stream),
            Some(Some(tx)) => match tx.try_send((seq, stream)) {
                Ok(()) => Route::Delivered,
                Err(std::sync::mpsc::TrySendError::Full((_, s)))
                | Err(std::sync::mpsc::TrySendError::Disconnected((_, s))) => Route::Refused(s),
            },
        })
    }
}

//! linerate's frame-counter session on the control channel: a client whose `"linerate"` key
//! asks for it ([`Extension::frame_counter`](super::Extension::frame_counter)) and whose test
//! the server accepts (it was started with `--allow-frame-counter`, the client is on its
//! allow-list and authenticated like any test) gets, after the hello, a request/reply loop of
//! length-prefixed JSON messages instead of streams: clock exchanges (NTP's four timestamps),
//! and counts of `linerate gen`'s frames on one of the server's interfaces, opened, then
//! stopped with the counter's `linerate.gen-receive/1` document as the reply. iperf3 never
//! sees any of it: it never sends the key.
//!
//! Times are nanoseconds since the Unix epoch on each side's `CLOCK_REALTIME`, the clock the
//! generator stamps its frames with.

use serde::{Deserialize, Serialize};

use crate::generator::document::Received;

/// A request of the client. Each count lasts at most the `time` of the session's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Request {
    /// The server answers with its receive and send times ([`Reply::Clock`]).
    Clock,
    /// Open a counter on `dev` for at most `seconds` (it then stops by itself); the server
    /// answers [`Reply::Ready`] once its receive ring is open.
    Open {
        /// The server's interface to count on.
        dev: String,
        /// The longest the count may run, seconds.
        seconds: f64,
    },
    /// Stop the open count; the server answers [`Reply::Counted`].
    Stop,
    /// The session is over.
    Done,
}

/// The kernel clock's discipline on one side (`adjtimex`), for the clock judgment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelClock {
    /// A time daemon keeps the clock synchronised.
    pub synchronised: bool,
    /// Its estimated error, microseconds.
    pub est_error_us: i64,
    /// The largest error the kernel allows for, microseconds.
    pub max_error_us: i64,
}

/// A reply of the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Reply {
    /// The server's clock at the request's arrival (`t2_ns`) and at the reply's departure
    /// (`t3_ns`), its kernel's boot id and clock discipline.
    Clock {
        /// When the request arrived.
        t2_ns: u64,
        /// When the reply left.
        t3_ns: u64,
        /// The server kernel's boot id (`None`: not readable there).
        boot_id: Option<String>,
        /// The server kernel's clock discipline (`None`: not readable there).
        kernel: Option<KernelClock>,
    },
    /// The counter's ring is open on the interface whose MAC this is.
    Ready {
        /// `aa:bb:cc:dd:ee:ff`.
        mac: String,
    },
    /// What the count counted.
    Counted {
        /// The counter's document.
        received: Box<Received>,
    },
    /// The request could not be done.
    Error {
        /// Why.
        error: String,
    },
}

/// Nanoseconds since the Unix epoch now, on `CLOCK_REALTIME` (0 before 1970).
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// This kernel's boot id and clock discipline, where they read (Linux; `None` elsewhere).
pub fn this_kernel() -> (Option<String>, Option<KernelClock>) {
    #[cfg(target_os = "linux")]
    {
        let kernel = linerate_sys::clock::kernel_clock()
            .ok()
            .map(|k| KernelClock {
                synchronised: k.synchronised,
                est_error_us: k.est_error_us,
                max_error_us: k.max_error_us,
            });
        (linerate_sys::clock::boot_id().ok(), kernel)
    }
    #[cfg(not(target_os = "linux"))]
    {
        (None, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_read_as_written() {
        let open = Request::Open {
            dev: "eth1".into(),
            seconds: 2.5,
        };
        let text = serde_json::to_string(&open).expect("encode");
        assert_eq!(text, r#"{"op":"open","dev":"eth1","seconds":2.5}"#);
        assert_eq!(
            serde_json::from_str::<Request>(&text).expect("decode"),
            open
        );
        assert_eq!(
            serde_json::to_string(&Request::Stop).expect("encode"),
            r#"{"op":"stop"}"#
        );
        let clock = Reply::Clock {
            t2_ns: 1,
            t3_ns: 2,
            boot_id: None,
            kernel: Some(KernelClock {
                synchronised: true,
                est_error_us: 3,
                max_error_us: 4,
            }),
        };
        let text = serde_json::to_string(&clock).expect("encode");
        assert_eq!(serde_json::from_str::<Reply>(&text).expect("decode"), clock);
        // A request the server does not know is an error, not a default.
        assert!(serde_json::from_str::<Request>(r#"{"op":"reboot"}"#).is_err());
        assert!(serde_json::from_str::<Request>(r#"{"op":"open","dev":"x"}"#).is_err());
    }
}

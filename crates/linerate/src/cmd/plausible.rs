//! Values that parse but are probably not what the user meant: warned about on stderr, never
//! refused (a 12-second RTT exists, over a geostationary hop with retransmissions).

use linerate_units::{ByteSize, Duration};

/// Less RAM than this is more likely a unit slip (`--ram 8MiB` for 8 GiB) than a host.
const LEAST_RAM: ByteSize = ByteSize::from_mib(64);
/// A longer round trip is more likely seconds typed for milliseconds.
const LONGEST_RTT: Duration = Duration::from_secs(10);

/// The warnings for a stated RAM and RTT, in words.
pub fn warnings(ram: Option<ByteSize>, rtt: Option<Duration>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(ram) = ram.filter(|r| *r < LEAST_RAM) {
        out.push(format!(
            "--ram {}: less than {} of RAM is unusual for a host; did you mean {}GiB?",
            ram.human(),
            LEAST_RAM.human(),
            ram.bytes()
        ));
    }
    if let Some(rtt) = rtt.filter(|r| *r > LONGEST_RTT) {
        out.push(format!(
            "--rtt {}: a round trip longer than {} is unusual; did you mean milliseconds?",
            rtt.human(),
            LONGEST_RTT.human()
        ));
    }
    out
}

/// Prints [`warnings`] on stderr.
pub fn warn(ram: Option<ByteSize>, rtt: Option<Duration>) {
    for w in warnings(ram, rtt) {
        crate::output::warn(&w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_ram_and_long_rtts_are_questioned() {
        assert!(warnings(Some(ByteSize::from_gib(8)), Some(Duration::from_millis(80))).is_empty());
        let w = warnings(Some(ByteSize::from_mib(8)), Some(Duration::from_secs(80)));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("less than 64 MiB"), "{w:?}");
        assert!(w[1].contains("did you mean milliseconds"), "{w:?}");
    }
}

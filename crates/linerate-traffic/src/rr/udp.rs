//! Request/response with one UDP datagram each way.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::UDP_TIMEOUT;
use crate::config::RrSize;
use crate::flow::{POLL, StreamCounters, StreamSpec, is_retry, pattern};
use crate::latency::Latency;

/// Bytes of the sequence number carried in each datagram.
fn seq_bytes(size: RrSize) -> usize {
    size.request.min(size.response).min(8) as usize
}

/// Writes the low `k` bytes of `seq` (big-endian) at the start of `buf`.
fn put_seq(buf: &mut [u8], seq: u64, k: usize) {
    buf[..k].copy_from_slice(&seq.to_be_bytes()[8 - k..]);
}

/// The requester: one outstanding request at a time; no answer within [`UDP_TIMEOUT`] is a
/// lost transaction, and answers to earlier requests are dropped.
pub fn client(
    spec: &StreamSpec,
    size: RrSize,
    sock: UdpSocket,
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> UdpSocket {
    let k = seq_bytes(size);
    let _ = sock.set_read_timeout(Some(POLL.min(UDP_TIMEOUT)));
    let mut req = pattern(size.request as usize);
    let mut resp = vec![0u8; size.response as usize + 1];
    let per = size.request + size.response;
    let mut lat = Latency::new();
    let (mut seq, mut done, mut lost, mut stale) = (0u64, 0u64, 0u64, 0u64);
    let placement = &spec.work.report.placement;
    'outer: while !stop.load(Ordering::Relaxed) {
        seq += 1;
        put_seq(&mut req, seq, k);
        let t0 = Instant::now();
        match sock.send(&req) {
            Ok(_) => {}
            Err(e) if is_retry(&e) => continue,
            Err(_) => {
                counters
                    .failed
                    .store(!stop.load(Ordering::Relaxed), Ordering::Relaxed);
                break;
            }
        }
        loop {
            if t0.elapsed() >= UDP_TIMEOUT {
                lost += 1;
                counters.lost.store(lost, Ordering::Relaxed);
                break;
            }
            match sock.recv(&mut resp) {
                Ok(n) if n == size.response as usize && resp[..k] == seq.to_be_bytes()[8 - k..] => {
                    lat.record(t0.elapsed().as_nanos() as u64);
                    done += 1;
                    counters.packets.store(done, Ordering::Relaxed);
                    counters.bytes.store(done * per, Ordering::Relaxed);
                    break;
                }
                Ok(_) => {
                    stale += 1;
                    counters.out_of_order.store(stale, Ordering::Relaxed);
                }
                Err(e) if is_retry(&e) => {
                    if stop.load(Ordering::Relaxed) {
                        break 'outer;
                    }
                }
                Err(_) => {
                    counters
                        .failed
                        .store(!stop.load(Ordering::Relaxed), Ordering::Relaxed);
                    break 'outer;
                }
            }
        }
        if seq % 8192 == 0 {
            placement.note();
        }
    }
    spec.work.store_latency(lat);
    sock
}

/// The responder: answers every request-sized datagram, echoing its sequence bytes; other
/// datagrams are counted as foreign.
pub fn server(
    _spec: &StreamSpec,
    size: RrSize,
    sock: UdpSocket,
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> UdpSocket {
    let k = seq_bytes(size);
    let _ = sock.set_read_timeout(Some(POLL));
    let mut req = vec![0u8; size.request as usize + 1];
    let mut resp = pattern(size.response as usize);
    let per = size.request + size.response;
    let (mut done, mut foreign) = (0u64, 0u64);
    while !stop.load(Ordering::Relaxed) {
        match sock.recv(&mut req) {
            Ok(n) if n == size.request as usize => {
                resp[..k].copy_from_slice(&req[..k]);
                match sock.send(&resp) {
                    Ok(_) => {
                        done += 1;
                        counters.packets.store(done, Ordering::Relaxed);
                        counters.bytes.store(done * per, Ordering::Relaxed);
                    }
                    Err(e) if is_retry(&e) => {}
                    Err(_) => break,
                }
            }
            Ok(_) => {
                foreign += 1;
                counters.foreign.store(foreign, Ordering::Relaxed);
            }
            Err(e) if is_retry(&e) => {}
            Err(_) => {
                counters
                    .failed
                    .store(!stop.load(Ordering::Relaxed), Ordering::Relaxed);
                break;
            }
        }
    }
    sock
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_bytes_fit_the_smaller_message() {
        assert_eq!(
            seq_bytes(RrSize {
                request: 1,
                response: 1
            }),
            1
        );
        assert_eq!(
            seq_bytes(RrSize {
                request: 64,
                response: 3
            }),
            3
        );
        assert_eq!(
            seq_bytes(RrSize {
                request: 64,
                response: 64
            }),
            8
        );
        let mut b = [0u8; 4];
        put_seq(&mut b, 0x0102_0304_0506, 3);
        assert_eq!(b, [4, 5, 6, 0]);
    }
}

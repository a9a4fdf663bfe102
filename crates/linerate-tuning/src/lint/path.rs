//! Rules about the stated path (`--rate`, `--rtt`): buffers too small for the bandwidth-delay
//! product.

use linerate_units::{BitRate, ByteSize, Duration};

use crate::buffers::{self, BufferInput};
use crate::finding::{Finding, Fix, Severity};
use crate::formula;
use crate::lint::{State, about};
use crate::os::Os;
use crate::wording::bytes;

pub(crate) fn check(st: &State<'_>, out: &mut Vec<Finding>) {
    let ctx = st.ctx;
    let Some(bdp) = ctx.bdp() else { return };
    if !ctx.judges_tcp_buffers() {
        return;
    }
    let (rate, rtt) = (ctx.rate.unwrap_or_default(), ctx.rtt.unwrap_or_default());
    let path = format!("{rate} × {rtt} = BDP {}", bytes(bdp.bytes()));
    if ctx.os == Os::Linux {
        linux(st, rate, rtt, &path, out);
        return;
    }
    let needs: Vec<(&str, usize, u64, &str)> = match ctx.os {
        Os::Freebsd => vec![
            (
                "net.inet.tcp.recvbuf_max",
                0,
                formula::sndbuf_need(bdp),
                "one BDP of window",
            ),
            (
                "net.inet.tcp.sendbuf_max",
                0,
                formula::sndbuf_need(bdp),
                "one BDP of unacknowledged data",
            ),
            (
                "kern.ipc.maxsockbuf",
                0,
                formula::sndbuf_need(bdp),
                "it caps both autotuning maxima",
            ),
        ],
        Os::Linux | Os::Windows | Os::Openbsd => vec![],
    };
    for (key, index, need, why) in needs {
        let Some(eff) = st.effective(key) else {
            continue;
        };
        let have = eff.value.numbers().get(index).copied().unwrap_or(0);
        if (have.max(0) as u64) < need {
            // The fix is what `tune` would set: 2 × BDP as a power of two (≤ 1 GiB), doubled
            // for maxsockbuf, which also pays for mbuf overhead.
            let target = formula::next_pow2(bdp.bytes().saturating_mul(2)).min(formula::MAX_WINDOW);
            let target = if key == "kern.ipc.maxsockbuf" {
                target * 2
            } else {
                target
            };
            let fix = match eff.value.as_ints() {
                Some(v) if v.len() == 3 => Fix::Set(format!("{} {} {target}", v[0], v[1])),
                _ => Fix::Set(target.to_string()),
            };
            out.push(about(
                "path-too-small",
                Severity::Warning,
                key,
                &eff,
                format!("caps buffers at {} but {path} needs {} ({why}); one connection cannot fill the path", bytes(have), bytes(need)),
                fix,
                st.cat.get(key),
            ));
        }
    }
    windows(st, bdp, &path, out);
}

/// Linux: the TCP maxima against the one buffer answer ([`buffers::linux`]), so what `calc
/// bdp` and `tune` advise is exactly what passes here, and the fix is what they would set.
fn linux(st: &State<'_>, rate: BitRate, rtt: Duration, path: &str, out: &mut Vec<Finding>) {
    let ctx = st.ctx;
    let Ok(advice) = buffers::linux(&BufferInput {
        rate,
        rtt,
        version: ctx.version.clone(),
        ram: ctx.ram,
        page_size: ctx.page_size,
    }) else {
        return;
    };
    for (key, why) in [
        (
            "net.ipv4.tcp_rmem",
            "2 × BDP: about half of a Linux receive buffer carries window",
        ),
        (
            "net.ipv4.tcp_wmem",
            "2 × BDP: one BDP unacknowledged in flight, plus the same skb overhead",
        ),
    ] {
        let Some(eff) = st.effective(key) else {
            continue;
        };
        let have = eff.value.numbers().get(2).copied().unwrap_or(0);
        if (have.max(0) as u64) >= advice.need {
            continue;
        }
        let target = advice.max(key).unwrap_or(advice.need);
        let fix = match eff.value.as_ints() {
            Some(v) if v.len() == 3 => Fix::Set(format!("{} {} {target}", v[0], v[1])),
            _ => Fix::Set(target.to_string()),
        };
        out.push(about(
            "path-too-small",
            Severity::Warning,
            key,
            &eff,
            format!(
                "caps buffers at {} but {path} needs {} ({why}); one connection cannot fill the path",
                bytes(have),
                bytes(advice.need)
            ),
            fix,
            st.cat.get(key),
        ));
    }
}

fn windows(st: &State<'_>, bdp: ByteSize, path: &str, out: &mut Vec<Finding>) {
    let ctx = st.ctx;
    if ctx.os == Os::Windows && bdp.bytes() > formula::WINDOWS_NORMAL_WINDOW {
        if let Some(eff) = st.effective("netsh.autotuninglevel") {
            if eff.value.to_string() != "experimental" {
                out.push(about(
                    "path-too-small",
                    Severity::Warning,
                    "netsh.autotuninglevel",
                    &eff,
                    format!("level {} scales the window to at most {} but {path}; only `experimental` (scale 14) reaches it", eff.value, bytes(formula::WINDOWS_NORMAL_WINDOW)),
                    Fix::Set("experimental".into()),
                    st.cat.get("netsh.autotuninglevel"),
                ));
            }
        }
    }
}

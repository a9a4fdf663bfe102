#!/usr/bin/env bash
# bench/peers.sh: linerate against the tools operators use, on loopback, side by side.
#
#   TCP 1 stream          linerate vs iperf3                 (receiver bits/s)
#   TCP 2 streams         linerate vs iperf3, iperf2         (receiver bits/s)
#   UDP 64-byte frames    linerate --mode pps vs iperf3 -u -l 18 -b 0   (received packets/s),
#                         linerate with UDP GSO (its default) and without (--no-gso)
#   UDP 64 B equal loss   each tool's received datagrams/s at the highest offered rate where its
#                         receiver loses at most LOSS_BOUND % (linerate --no-gso vs iperf3):
#                         the rate is stepped down from the tool's own unlimited figure
#   TCP rr 1 byte         linerate --mode rr vs sockperf ping-pong --tcp (transactions/s, p99)
#                         each without and with CPU pinning
#
# Runs are interleaved (A B C A B C ...) so drift hits every tool alike; each is bounded by
# `timeout`. Prints the medians and the ratios linerate/peer as a Markdown table and keeps the
# raw numbers in $OUT. Numbers on a shared machine are noisy: compare ratios, not absolutes.
#
# Beside throughput, the cost of a bit: each side's CPU seconds per GB (TCP) or per million
# datagrams received (UDP), user and system apart. linerate's from its document's
# `linerate.cost`; iperf3's computed the same way from its `cpu_utilization_percent`
# (percent of the test's wall time × seconds ÷ units moved).
#
# Environment: DURATION (seconds per run, default 10), REPS (default 5), OUT (results folder),
# LINERATE (a built binary; default: build target/release/linerate), CASES (default
# "tcp1 tcp2 udp64 udp64_nogso rr rr_pinned"; udp64_equal_loss and udp64_gro on request).
# udp64_equal_loss: LOSS_BOUND (percent, default 1), EL_DURATION (seconds per step, default 4),
# EL_STEPS (fractions of the unlimited received rate tried, highest first); every step is kept
# in $OUT/equal-loss.tsv. udp64_gro: linerate's GSO sender, its receiver with UDP_GRO (the
# default) and without (--no-gro); udp64_busy: --no-gso with --busy-poll BUSY_POLL (µs,
# default 50) against without. tcp1_zc: linerate --zerocopy=on and =auto against iperf3 and
# iperf3 -Z. tcp1_len: linerate's write size (LENS) against iperf3's.
set -euo pipefail

cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
REPS=${REPS:-5}
CASES=${CASES:-"tcp1 tcp2 udp64 udp64_nogso rr rr_pinned"}
OUT=${OUT:-bench/results/peers-$(date -u +%Y%m%dT%H%M%SZ)}
LIMIT=$((DURATION + 30))
mkdir -p "$OUT"
RAW="$OUT/raw.tsv"
: >"$RAW"

need() {
    local missing=()
    for p in "$@"; do
        command -v "${p%%:*}" >/dev/null 2>&1 || missing+=("${p##*:}")
    done
    if ((${#missing[@]})); then
        echo "installing ${missing[*]} from Debian" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >/dev/null
    fi
}
need iperf3:iperf3 iperf:iperf sockperf:sockperf python3:python3

if [[ -z "${LINERATE:-}" ]]; then
    cargo build --release -p linerate >&2
    LINERATE=target/release/linerate
fi

free_port() {
    python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

CPU0=$(python3 -c 'import os; print(sorted(os.sched_getaffinity(0))[0])')

P_LR=$(free_port)
"$LINERATE" server -B 127.0.0.1 -p "$P_LR" --max-duration "$((DURATION + 10))s" 2>"$OUT/linerate-server.log" &
PIDS+=($!)
P_I3=$(free_port)
iperf3 -s -B 127.0.0.1 -p "$P_I3" >"$OUT/iperf3-server.log" 2>&1 &
PIDS+=($!)
P_I2=$(free_port)
iperf -s -B 127.0.0.1 -p "$P_I2" >"$OUT/iperf2-server.log" 2>&1 &
PIDS+=($!)
P_SP=$(free_port)
sockperf sr --tcp -i 127.0.0.1 -p "$P_SP" >"$OUT/sockperf-server.log" 2>&1 &
PIDS+=($!)
P_SP1=$(free_port)
taskset -c "$CPU0" sockperf sr --tcp -i 127.0.0.1 -p "$P_SP1" >"$OUT/sockperf-pinned-server.log" 2>&1 &
PIDS+=($!)
sleep 1

# json_get FILE EXPR: evaluates a Python expression over the JSON document `d`.
json_get() {
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

record() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-}" "${6:-}" >>"$RAW"; }

# cost FILE: "client_user,client_system,server_user,server_system" CPU s per GB (TCP) or per
# million received datagrams (UDP); empty fields where a side is unknown.
cost() {
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
c = (d.get("linerate") or {}).get("cost")
if c is None:
    e = d["end"]
    udp = d["start"].get("test_start", {}).get("protocol", "").upper() == "UDP"
    s = e["sum"] if udp else e["sum_received"]
    moved = (s["packets"] - s["lost_packets"]) / 1e6 if udp else s["bytes"] / 1e9
    u = e.get("cpu_utilization_percent", {})
    def side(user, system):
        if user not in u or u.get(user, 0) + u.get(system, 0) <= 0:
            return None
        return {k: u[f] / 100 * s["seconds"] / moved for k, f in (("user_seconds", user), ("system_seconds", system))}
    c = {"local": side("host_user", "host_system"), "remote": side("remote_user", "remote_system")}
def f(side, k):
    v = (c.get(side) or {}).get(k)
    return "" if v is None else f"{v:.4f}"
print(",".join(f(s, k) for s in ("local", "remote") for k in ("user_seconds", "system_seconds")))' "$1"
}

LOSS_BOUND=${LOSS_BOUND:-1}
EL_DURATION=${EL_DURATION:-4}
EL_STEPS=${EL_STEPS:-"1.0 0.9 0.8 0.7 0.6 0.5 0.4 0.3 0.2 0.1"}

# udp_step TOOL BITS FILE: one 64-byte run (18-byte payloads, no GSO) offered BITS payload
# bit/s (0: unlimited) for EL_DURATION seconds; prints "received_pps lost_percent".
udp_step() {
    local tool=$1 bps=$2 f=$3
    if [[ $tool == linerate ]]; then
        timeout "$LIMIT" "$LINERATE" client 127.0.0.1 -p "$P_LR" --mode pps -l 18 --no-gso -b "$bps" -t "${EL_DURATION}s" -i 0 --json >"$f"
        json_get "$f" "f\"{d['linerate']['received_pps']} {d['linerate']['pps']['lost_percent']}\""
    else
        timeout "$LIMIT" iperf3 -c 127.0.0.1 -p "$P_I3" -u -l 18 -b "$bps" -t "$EL_DURATION" -J >"$f"
        json_get "$f" "f\"{(d['end']['sum']['packets'] - d['end']['sum']['lost_packets']) / d['end']['sum']['seconds']} {d['end']['sum']['lost_percent']}\""
    fi
}

# equal_loss TOOL REP: the tool's unlimited received rate R, then offered rates R × EL_STEPS,
# highest first, until the receiver loses at most LOSS_BOUND %; records the received rate
# and loss of that step (or of the last step tried, marked in equal-loss.tsv, when none met it).
equal_loss() {
    local tool=$1 rep=$2 f r loss base step bps met=no cost_of
    f="$OUT/udp64_equal_loss-$rep-$tool"
    read -r r loss < <(udp_step "$tool" 0 "$f-unlimited.json")
    printf '%s\t%s\tunlimited\t0\t%s\t%s\n' "$tool" "$rep" "$r" "$loss" >>"$OUT/equal-loss.tsv"
    base=$r
    cost_of="$f-unlimited.json"
    if python3 -c "import sys; sys.exit(0 if float('$loss') <= float('$LOSS_BOUND') else 1)"; then
        met=yes
    else
        for step in $EL_STEPS; do
            bps=$(python3 -c "print(int($base * $step * 18 * 8))")
            read -r r loss < <(udp_step "$tool" "$bps" "$f-$step.json")
            printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$rep" "$step" "$bps" "$r" "$loss" >>"$OUT/equal-loss.tsv"
            cost_of="$f-$step.json"
            if python3 -c "import sys; sys.exit(0 if float('$loss') <= float('$LOSS_BOUND') else 1)"; then
                met=yes
                break
            fi
        done
    fi
    printf '%s\t%s\tchosen\t%s\t%s\t%s\n' "$tool" "$rep" "$met" "$r" "$loss" >>"$OUT/equal-loss.tsv"
    record udp64_equal_loss "$tool" "$rep" "$r" "$loss" "$(cost "$cost_of")"
}

run_case() {
    local case=$1 rep=$2 f v p99
    f="$OUT/$case-$rep"
    case $case in
    tcp1 | tcp2)
        local par=1
        [[ $case == tcp2 ]] && par=2
        timeout "$LIMIT" "$LINERATE" client 127.0.0.1 -p "$P_LR" -t "${DURATION}s" -P "$par" -i 0 --json >"$f-linerate.json"
        record "$case" linerate "$rep" "$(json_get "$f-linerate.json" "d['end']['sum_received']['bits_per_second']")" "" "$(cost "$f-linerate.json")"
        timeout "$LIMIT" iperf3 -c 127.0.0.1 -p "$P_I3" -t "$DURATION" -P "$par" -J >"$f-iperf3.json"
        record "$case" iperf3 "$rep" "$(json_get "$f-iperf3.json" "d['end']['sum_received']['bits_per_second']")" "" "$(cost "$f-iperf3.json")"
        if [[ $case == tcp2 ]]; then
            timeout "$LIMIT" iperf -c 127.0.0.1 -p "$P_I2" -t "$DURATION" -P 2 -y C >"$f-iperf2.csv"
            # Per-stream CSV lines (and a sum line, id -1, on some versions): last field is bit/s.
            v=$(python3 -c 'import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) >= 9]
s = [r for r in rows if r[5] == "-1"]
print(float(s[-1][8]) if s else sum(float(r[8]) for r in rows))' "$f-iperf2.csv")
            record "$case" iperf2 "$rep" "$v"
        fi
        ;;
    tcp1_zc)
        # --zerocopy: on (both sides: MSG_ZEROCOPY sends, mapped receives), auto (the default:
        # sendfile sends, receives mapped where pages map), off (write/read, as iperf3), against
        # iperf3 as is and with its own -Z (sendfile).
        local z
        for z in on auto off; do
            timeout "$LIMIT" "$LINERATE" client 127.0.0.1 -p "$P_LR" -t "${DURATION}s" -i 0 --zerocopy="$z" --json >"$f-linerate-zc-$z.json"
            record "$case" "linerate-zc-$z" "$rep" "$(json_get "$f-linerate-zc-$z.json" "d['end']['sum_received']['bits_per_second']")" "" "$(cost "$f-linerate-zc-$z.json")"
        done
        timeout "$LIMIT" iperf3 -c 127.0.0.1 -p "$P_I3" -t "$DURATION" -J >"$f-iperf3.json"
        record "$case" iperf3 "$rep" "$(json_get "$f-iperf3.json" "d['end']['sum_received']['bits_per_second']")" "" "$(cost "$f-iperf3.json")"
        timeout "$LIMIT" iperf3 -c 127.0.0.1 -p "$P_I3" -t "$DURATION" -Z -J >"$f-iperf3-Z.json"
        record "$case" iperf3-Z "$rep" "$(json_get "$f-iperf3-Z.json" "d['end']['sum_received']['bits_per_second']")" "" "$(cost "$f-iperf3-Z.json")"
        ;;
    tcp1_len)
        # The write size: linerate at each of LENS (default "128K 256K 1M") against iperf3's
        # default 128 KiB.
        local l
        for l in ${LENS:-128K 256K 1M}; do
            timeout "$LIMIT" "$LINERATE" client 127.0.0.1 -p "$P_LR" -t "${DURATION}s" -i 0 -l "$l" --json >"$f-linerate-$l.json"
            record "$case" "linerate-$l" "$rep" "$(json_get "$f-linerate-$l.json" "d['end']['sum_received']['bits_per_second']")" "" "$(cost "$f-linerate-$l.json")"
        done
        timeout "$LIMIT" iperf3 -c 127.0.0.1 -p "$P_I3" -t "$DURATION" -J >"$f-iperf3.json"
        record "$case" iperf3 "$rep" "$(json_get "$f-iperf3.json" "d['end']['sum_received']['bits_per_second']")" "" "$(cost "$f-iperf3.json")"
        ;;
    udp64 | udp64_nogso)
        local gso=()
        [[ $case == udp64_nogso ]] && gso=(--no-gso)
        timeout "$LIMIT" "$LINERATE" client 127.0.0.1 -p "$P_LR" --mode pps -l 18 "${gso[@]}" -t "${DURATION}s" -i 0 --json >"$f-linerate.json"
        record "$case" linerate "$rep" "$(json_get "$f-linerate.json" "d['linerate']['received_pps']")" \
            "$(json_get "$f-linerate.json" "d['linerate']['pps']['lost_percent']")" "$(cost "$f-linerate.json")"
        timeout "$LIMIT" iperf3 -c 127.0.0.1 -p "$P_I3" -u -l 18 -b 0 -t "$DURATION" -J >"$f-iperf3.json"
        record "$case" iperf3 "$rep" "$(json_get "$f-iperf3.json" "(d['end']['sum']['packets'] - d['end']['sum']['lost_packets']) / d['end']['sum']['seconds']")" \
            "$(json_get "$f-iperf3.json" "d['end']['sum']['lost_percent']")" "$(cost "$f-iperf3.json")"
        ;;
    udp64_gro | udp64_busy)
        local flags=(-l 18) other=(--no-gro) name=linerate-nogro
        if [[ $case == udp64_busy ]]; then
            flags=(-l 18 --no-gso)
            other=(--busy-poll "${BUSY_POLL:-50}")
            name=linerate-busypoll
        fi
        timeout "$LIMIT" "$LINERATE" client 127.0.0.1 -p "$P_LR" --mode pps "${flags[@]}" -t "${DURATION}s" -i 0 --json >"$f-linerate.json"
        record "$case" linerate "$rep" "$(json_get "$f-linerate.json" "d['linerate']['received_pps']")" \
            "$(json_get "$f-linerate.json" "d['linerate']['pps']['lost_percent']")" "$(cost "$f-linerate.json")"
        timeout "$LIMIT" "$LINERATE" client 127.0.0.1 -p "$P_LR" --mode pps "${flags[@]}" "${other[@]}" -t "${DURATION}s" -i 0 --json >"$f-$name.json"
        record "$case" "$name" "$rep" "$(json_get "$f-$name.json" "d['linerate']['received_pps']")" \
            "$(json_get "$f-$name.json" "d['linerate']['pps']['lost_percent']")" "$(cost "$f-$name.json")"
        ;;
    udp64_equal_loss)
        equal_loss linerate "$rep"
        equal_loss iperf3 "$rep"
        ;;
    rr | rr_pinned)
        local aff=() pin=() port=$P_SP
        if [[ $case == rr_pinned ]]; then
            aff=(--affinity)
            pin=(taskset -c "$CPU0")
            port=$P_SP1
        fi
        timeout "$LIMIT" "$LINERATE" client 127.0.0.1 -p "$P_LR" --mode rr --rr-size 1/1 "${aff[@]}" -t "${DURATION}s" -i 0 --json >"$f-linerate.json"
        record "$case" linerate "$rep" \
            "$(json_get "$f-linerate.json" "d['linerate']['rr']['transactions_per_second']")" \
            "$(json_get "$f-linerate.json" "d['linerate']['rr']['latency']['p99_us']")"
        # sockperf's smallest message is 14 bytes (its header); --full-rtt for round trips.
        timeout "$LIMIT" "${pin[@]}" sockperf pp --tcp -i 127.0.0.1 -p "$port" -m 14 --mps=max --full-rtt -t "$DURATION" >"$f-sockperf.txt" 2>&1
        v=$(python3 -c 'import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=\d+; ReceivedMessages=(\d+)", t)
print(int(m.group(2)) / float(m.group(1)))' "$f-sockperf.txt")
        p99=$(python3 -c 'import re, sys
t = open(sys.argv[1]).read()
print(re.search(r"percentile 99\.000 =\s*([\d.]+)", t).group(1))' "$f-sockperf.txt")
        record "$case" sockperf "$rep" "$v" "$p99"
        ;;
    *)
        echo "unknown case $case" >&2
        exit 2
        ;;
    esac
}

echo "linerate vs peers on loopback: ${DURATION} s per run, ${REPS} repetitions, cases: $CASES" >&2
for rep in $(seq 1 "$REPS"); do
    for c in $CASES; do
        echo "  repetition $rep: $c" >&2
        run_case "$c" "$rep"
    done
done

python3 - "$RAW" "$DURATION" "$REPS" <<'EOF' | tee "$OUT/summary.md"
import statistics, sys
from collections import defaultdict

raw, duration, reps = sys.argv[1], sys.argv[2], sys.argv[3]
vals, p99, loss, costs = defaultdict(list), defaultdict(list), defaultdict(list), defaultdict(list)
for line in open(raw):
    case, tool, rep, v, q, c = (line.rstrip("\n").split("\t") + ["", ""])[:6]
    vals[(case, tool)].append(float(v))
    if q and case.startswith("udp"):
        loss[(case, tool)].append(float(q))
    elif q:
        p99[(case, tool)].append(float(q))
    if c:
        costs[(case, tool)].append([float(x) if x else None for x in c.split(",")])

def fmt(case, v):
    if case.startswith("tcp"):
        return f"{v / 1e9:.2f} Gbit/s"
    if case.startswith("udp64"):
        return f"{v / 1e3:.0f} kpps"
    return f"{v / 1e3:.1f} k trans/s"

titles = {
    "tcp1": ("TCP, 1 stream", {"iperf3": 1.0}),
    "tcp2": ("TCP, 2 streams", {"iperf3": 1.4, "iperf2": 1.0}),
    "udp64": ("UDP 64-byte frames, received (GSO)", {"iperf3": 2.5}),
    "udp64_nogso": ("UDP 64-byte frames, received, --no-gso", {"iperf3": 2.5}),
    "udp64_gro": ("UDP 64 B, GSO sender, receiver with UDP_GRO vs --no-gro", {"linerate-nogro": 1.0}),
    "udp64_busy": ("UDP 64 B, no GSO, without vs with --busy-poll", {"linerate-busypoll": 1.0}),
    "udp64_equal_loss": ("UDP 64 B, no GSO, at equal loss (each tool's highest rate losing ≤ the bound)", {"iperf3": 2.0}),
    "rr": ("TCP rr 1 B (sockperf 14 B)", {"sockperf": 1.0}),
    "rr_pinned": ("TCP rr 1 B, pinned", {"sockperf": 1.0}),
}
print(f"{duration} s per run, median of {reps} interleaved repetitions (min … max in brackets)\n")
print("| case | linerate | peer | peer median | ratio | target | met |")
print("|---|---|---|---|---|---|---|")
for case, (title, peers) in titles.items():
    lr = vals.get((case, "linerate"))
    if not lr:
        continue
    m = statistics.median(lr)
    lr_txt = f"{fmt(case, m)} [{fmt(case, min(lr))} … {fmt(case, max(lr))}]"
    if p99.get((case, "linerate")):
        lr_txt += f", p99 {statistics.median(p99[(case, 'linerate')]):.1f} µs"
    for peer, target in peers.items():
        pv = vals.get((case, peer))
        if not pv:
            continue
        pm = statistics.median(pv)
        peer_txt = f"{fmt(case, pm)} [{fmt(case, min(pv))} … {fmt(case, max(pv))}]"
        if p99.get((case, peer)):
            peer_txt += f", p99 {statistics.median(p99[(case, peer)]):.1f} µs"
        ratio = m / pm if pm else float("inf")
        ok = ratio >= target
        if p99.get((case, peer)) and p99.get((case, "linerate")):
            ok = ok and statistics.median(p99[(case, "linerate")]) <= statistics.median(p99[(case, peer)])
        print(f"| {title} | {lr_txt} | {peer} | {peer_txt} | {ratio:.2f}× | ≥ {target}× | {'yes' if ok else 'NO'} |")

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def cost_txt(case, tool):
    rows = costs.get((case, tool))
    if not rows:
        return None, "–"
    cols = [med([r[i] for r in rows]) for i in range(4)]
    def side(u, s):
        return "unknown" if u is None or s is None else f"{u + s:.3f} ({u:.3f} u + {s:.3f} s)"
    total = None if None in cols[:2] else cols[0] + cols[1]
    return total, f"client {side(cols[0], cols[1])}, server {side(cols[2], cols[3])}"

rows = []
for case, (title, peers) in titles.items():
    lt, ltxt = cost_txt(case, "linerate")
    if ltxt == "–":
        continue
    for peer in peers:
        pt, ptxt = cost_txt(case, peer)
        if ptxt == "–":
            continue
        ratio = f"{lt / pt:.2f}×" if lt and pt else "–"
        lo = med(loss.get((case, "linerate"), [])), med(loss.get((case, peer), []))
        lo_txt = "–" if None in lo else f"{lo[0]:.2f} / {lo[1]:.2f}"
        rows.append(f"| {title} | {ltxt} | {peer} | {ptxt} | {ratio} | {lo_txt} |")
if rows:
    print("\nCPU seconds per GB (TCP) or per million received datagrams (UDP), medians; the ratio is")
    print("linerate's client total over the peer's (≤ 0.9× is the goal for TCP)\n")
    print("| case | linerate | peer | peer | client ratio | loss % linerate / peer |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))

# Cases whose linerate runs are variants (tcp1_zc, tcp1_len): every tool against iperf3,
# throughput and CPU per GB of the client and of both ends.
variants = {"tcp1_zc": "TCP, 1 stream, zero-copy", "tcp1_len": "TCP, 1 stream, write sizes"}
def both(case, tool):
    rows = costs.get((case, tool)) or []
    return (med([r[0] + r[1] for r in rows if None not in r[:2]]),
            med([sum(r) for r in rows if None not in r]))
for case, title in variants.items():
    base = vals.get((case, "iperf3"))
    if not base:
        continue
    bm = statistics.median(base)
    bcl, ball = both(case, "iperf3")
    print(f"\n{title}: medians of {reps}, ratios to iperf3 (throughput; CPU s/GB of the client and of both ends)\n")
    print("| tool | throughput | ratio | CPU s/GB | client ratio | both ends ratio |")
    print("|---|---|---|---|---|---|")
    for (c, tool), v in sorted(vals.items()):
        if c != case:
            continue
        m = statistics.median(v)
        _, txt = cost_txt(case, tool)
        cl, al = both(case, tool)
        r1 = f"{cl / bcl:.2f}×" if cl and bcl else "–"
        r2 = f"{al / ball:.2f}×" if al and ball else "–"
        print(f"| {tool} | {fmt(case, m)} [{fmt(case, min(v))} … {fmt(case, max(v))}] | {m / bm:.2f}× | {txt} | {r1} | {r2} |")
EOF
echo "raw numbers and logs: $OUT" >&2

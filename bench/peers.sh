#!/usr/bin/env bash
# linerate against its peers on loopback, side by side in one run, interleaved repetitions,
# medians and ratios (issue "Traffic engine, part 2"):
#   TCP 1 stream and 2 streams: linerate vs iperf3 3.12 vs iperf2
#   UDP 64-byte frames (18-byte payload), received packets/s: linerate --mode pps vs iperf3 -u -l 18 -b 0
#   TCP request/response: linerate --mode rr vs sockperf ping-pong --tcp (14-byte messages,
#   sockperf's smallest), transactions/s and p50/p99 round-trip latency (sockperf's
#   half-round-trip figures doubled)
# Usage: bench/peers.sh [SECONDS_PER_RUN (default 10)] [REPETITIONS (default 3)]
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-10}
reps=${2:-3}
need=()
for tool in iperf3 iperf sockperf python3; do command -v "$tool" >/dev/null || need+=("$tool"); done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq "${need[@]/python3/python3-minimal}" >/dev/null
  else
    echo "missing: ${need[*]} (apt-get install ${need[*]})" >&2; exit 2
  fi
fi
cargo build --release -q -p linerate
lr=$PWD/target/release/linerate
base=$((20000 + RANDOM % 20000))
p_lr=$base; p_ip3=$((base + 1)); p_ip2=$((base + 2)); p_sp=$((base + 3))
$lr server -p $p_lr 2>/dev/null & pids=($!)
iperf3 -s -p $p_ip3 >/dev/null 2>&1 & pids+=($!)
iperf -s -p $p_ip2 >/dev/null 2>&1 & pids+=($!)
sockperf server --tcp -i 127.0.0.1 -p $p_sp >/dev/null 2>&1 & pids+=($!)
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
sleep 1
out=$(mktemp)
t=$((dur + 30))

j() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
rec() { echo "$1 $2 $3 ${4:-0} ${5:-0}" >>"$out"; }

for rep in $(seq 1 "$reps"); do
  echo "repetition $rep/$reps" >&2
  # TCP, 1 and 2 streams (received bit/s).
  for p in 1 2; do
    rec tcp-$p linerate "$(timeout $t $lr client 127.0.0.1 -p $p_lr -t "$dur" -P $p -i 0 --json | j "d['end']['sum_received']['bits_per_second']")"
    rec tcp-$p iperf3 "$(timeout $t iperf3 -c 127.0.0.1 -p $p_ip3 -t "$dur" -P $p -J | j "d['end']['sum_received']['bits_per_second']")"
    rec tcp-$p iperf2 "$(timeout $t iperf -c 127.0.0.1 -p $p_ip2 -t "$dur" -P $p -y C | tail -1 | awk -F, '{print $NF}')"
  done
  # UDP 64-byte frames: received packets/s.
  rec udp64-pps linerate "$(timeout $t $lr client 127.0.0.1 -p $p_lr -t "$dur" --mode pps -i 0 --json | j "d['linerate']['received_pps']")"
  rec udp64-pps iperf3 "$(timeout $t iperf3 -c 127.0.0.1 -p $p_ip3 -t "$dur" -u -l 18 -b 0 -J | j "(d['end']['sum']['packets'] - d['end']['sum']['lost_packets']) / d['end']['sum']['seconds']")"
  # TCP request/response: transactions/s, p50 and p99 in µs.
  rec tcp-rr linerate $(timeout $t $lr client 127.0.0.1 -p $p_lr -t "$dur" --mode rr --rr-size 14/14 -i 0 --json | j "' '.join(str(d['linerate']['rr'][k]) for k in ('transactions_per_second','p50_us','p99_us'))")
  sp=$(timeout $t sockperf ping-pong --tcp -i 127.0.0.1 -p $p_sp -t "$dur" -m 14 2>&1)
  rec tcp-rr sockperf $(echo "$sp" | python3 -c "
import re, sys
s = sys.stdin.read()
rt = float(re.search(r'RunTime=([0-9.]+)', s).group(1))
rx = int(re.search(r'ReceivedMessages=([0-9]+)', s).group(1))
# sockperf reports half the round trip; linerate reports the whole transaction.
p50 = 2 * float(re.search(r'percentile 50\.000 =\s*([0-9.]+)', s).group(1))
p99 = 2 * float(re.search(r'percentile 99\.000 =\s*([0-9.]+)', s).group(1))
print(rx / rt, p50, p99)")
done

python3 - "$out" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
data = {}
for test, tool, v, a, b in rows:
    data.setdefault(test, {}).setdefault(tool, []).append((float(v), float(a), float(b)))
unit = {"tcp-1": ("Gbit/s", 1e9), "tcp-2": ("Gbit/s", 1e9), "udp64-pps": ("Mpps", 1e6), "tcp-rr": ("k trans/s", 1e3)}
print(f"{'test':10} {'tool':9} {'median':>10} {'unit':10} {'vs linerate':>11}   runs")
for test, tools in data.items():
    u, scale = unit[test]
    lr = statistics.median(v for v, _, _ in tools["linerate"])
    for tool, runs in tools.items():
        m = statistics.median(v for v, _, _ in runs)
        ratio = lr / m if m else float("nan")
        extra = ""
        if test == "tcp-rr":
            extra = f"  p50 {statistics.median(a for _, a, _ in runs):.1f} us, p99 {statistics.median(b for _, _, b in runs):.1f} us"
        runs_s = " ".join(f"{v/scale:.2f}" for v, _, _ in runs)
        print(f"{test:10} {tool:9} {m/scale:10.2f} {u:10} {ratio:10.2f}x   {runs_s}{extra}")
PY
rm -f "$out"

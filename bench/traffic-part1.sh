#!/usr/bin/env bash
# Side-by-side loopback throughput: linerate vs iperf3, TCP and UDP, both client and server
# of the same tool, 3 repetitions interleaved, medians and ratios. Short and bounded:
# 6 configurations x 3 repetitions x DURATION seconds.
# Usage: bench/traffic-part1.sh [DURATION_SECONDS (default 3)] [REPETITIONS (default 3)]
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-3}
reps=${2:-3}
command -v iperf3 >/dev/null || { echo "iperf3 missing: apt-get install -y iperf3" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 missing" >&2; exit 2; }
cargo build --release -q -p linerate
lr=target/release/linerate

port_lr=$((20000 + RANDOM % 20000))
port_ip=$((port_lr + 1))
$lr server -p "$port_lr" 2>/dev/null &
lr_pid=$!
iperf3 -s -p "$port_ip" >/dev/null 2>&1 &
ip_pid=$!
trap 'kill $lr_pid $ip_pid 2>/dev/null || true' EXIT
sleep 1

results=$(mktemp)
# name | args
configs=(
  "tcp-1|"
  "tcp-2|-P 2"
  "tcp-rev|-R"
  "udp-1G-1400|-u -b 1G -l 1400"
  "udp-max-1400|-u -b 0 -l 1400"
  "udp-max-64K|-u -b 0 -l 32000"
)
# Received bit rate: TCP end.sum_received; UDP end.sum (sender's rate) less the lost share.
extract() {
  python3 -c '
import json, sys
d = json.load(sys.stdin)
e = d["end"]
if "sum" in e:
    s = e["sum"]
    print(sys.argv[1], sys.argv[2], s["bits_per_second"] * (1 - s["lost_percent"] / 100), s["lost_percent"])
else:
    print(sys.argv[1], sys.argv[2], e["sum_received"]["bits_per_second"], 0)
' "$1" "$2"
}
for rep in $(seq 1 $reps); do
  for c in "${configs[@]}"; do
    name=${c%%|*}; args=${c#*|}
    # shellcheck disable=SC2086
    timeout $((dur + 20)) $lr client 127.0.0.1 -p "$port_lr" -t "$dur" -i 0 $args --json \
      | extract linerate "$name" >>"$results"
    # shellcheck disable=SC2086
    timeout $((dur + 20)) iperf3 -c 127.0.0.1 -p "$port_ip" -t "$dur" $args -J \
      | extract iperf3 "$name" >>"$results"
  done
done

python3 - "$results" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
data = {}
for tool, name, bps, loss in rows:
    data.setdefault(name, {}).setdefault(tool, []).append((float(bps), float(loss)))
print(f"{'test':14} {'linerate Gbit/s':>16} {'iperf3 Gbit/s':>14} {'ratio':>7}   runs: linerate | iperf3 (received Gbit/s)")
for name, tools in data.items():
    lr = statistics.median(b for b, _ in tools.get('linerate', [(0, 0)]))
    ip = statistics.median(b for b, _ in tools.get('iperf3', [(0, 0)]))
    ratio = lr / ip if ip else float('nan')
    runs = ' '.join(f"{b/1e9:.2f}" for b, _ in tools.get('linerate', [])) + ' | ' + \
        ' '.join(f"{b/1e9:.2f}" for b, _ in tools.get('iperf3', []))
    print(f"{name:14} {lr/1e9:16.2f} {ip/1e9:14.2f} {ratio:7.2f}   {runs}")
PY
rm -f "$results"

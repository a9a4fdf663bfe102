#!/usr/bin/env bash
# Two linerate binaries side by side on the lab's userspace emulator hot path (packet socket
# -> recvmmsg batch -> shaper -> sendmmsg): the 64-byte UDP flood it forwards (2 iperf3
# streams, offloads off, no delay) and one TCP stream through 1 Gbit/s + 20 ms. Runs are
# alternated A B A B … so drift on a shared machine hits both alike; medians and ratios B/A.
# Needs root and iperf3. Every load is bounded (-t seconds).
# Usage: bench/emulator-ab.sh BINARY_A BINARY_B [REPETITIONS (default 3)] [SECONDS (default 5)]
set -euo pipefail
A=${1:?binary A}; B=${2:?binary B}; reps=${3:-3}; dur=${4:-5}
export LINERATE_LAB_STATE_DIR=${LINERATE_LAB_STATE_DIR:-/tmp/linerate-bench-emu-ab}
N=lab$$; N=${N:0:8}
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }
command -v iperf3 >/dev/null || { echo "needs iperf3 (apt-get install iperf3)" >&2; exit 2; }
cleanup() { "$A" lab down "$N" >/dev/null 2>&1 || true; rm -f "/tmp/$N".*; }
trap cleanup EXIT INT TERM
results=$(mktemp)
BUF='4096 131072 33554432'
for r in $(seq "$reps"); do
  for side in A B; do
    bin=$A; [ $side = B ] && bin=$B
    "$bin" lab up "$N" --offloads off --delay 0ms >/dev/null
    "$bin" lab exec "$N" recv -- iperf3 -s -D -1 >/dev/null; sleep 0.3
    "$bin" lab exec "$N" gen -- iperf3 -c 198.18.0.2 -u -b 0 -l 64 -t "$dur" -P 2 -J >"/tmp/$N.flood"
    "$bin" lab show "$N" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["emulators"][0]["counters"]["fwd"]
print(sys.argv[1], "flood_kpps", d["tx_frames"] / float(sys.argv[2]) / 1e3)' "$side" "$dur" >>"$results"
    "$bin" lab down "$N" >/dev/null
    "$bin" lab up "$N" --rate 1G --delay 20ms --limit 10000 --offloads off \
      --sysctl "gen:net.ipv4.tcp_wmem=$BUF" --sysctl "recv:net.ipv4.tcp_rmem=$BUF" >/dev/null
    "$bin" lab exec "$N" recv -- iperf3 -s -D -1 >/dev/null; sleep 0.3
    "$bin" lab exec "$N" gen -- iperf3 -c 198.18.0.2 -t $((dur + 2)) -O 2 -J >"/tmp/$N.tcp"
    python3 -c '
import json, sys
e = json.load(open(sys.argv[2]))["end"]
print(sys.argv[1], "tcp_mbps", e["sum_received"]["bits_per_second"] / 1e6)' "$side" "/tmp/$N.tcp" >>"$results"
    "$bin" lab down "$N" >/dev/null
  done
done
python3 - "$results" <<'EOF'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
for metric, unit in (("flood_kpps", "kpps forwarded, 64-byte flood"), ("tcp_mbps", "Mbit/s TCP, 1G + 20 ms")):
    med = {s: st.median(float(v) for sd, m, v in rows if sd == s and m == metric) for s in "AB"}
    runs = {s: [round(float(v)) for sd, m, v in rows if sd == s and m == metric] for s in "AB"}
    print(f"{unit:32}: A median {med['A']:7.1f} {runs['A']} | B median {med['B']:7.1f} {runs['B']} | B/A {med['B']/med['A']:.3f}")
EOF
rm -f "$results"

#!/usr/bin/env bash
# Is the emulated link a wire? One TCP stream (cubic, 10 s, first 2 s omitted) through the
# userspace emulator at RATE with 10 ms one-way delay, MTU 1500, against what real Ethernet
# at that rate allows: `calc rate`'s frames/s of a 1518-byte frame × the 1448-byte TCP payload
# (MSS 1460 minus 12 bytes of timestamps). Each CASE is a linerate binary and its extra
# `lab up` arguments (quoted together); the cases alternate, N rounds (default 3), e.g.
#   bench/lab-wire.sh 100M target/debug/linerate "target/debug/linerate --rate-layer l2"
#   bench/lab-wire.sh 1G /tmp/linerate-main target/release/linerate
# Needs root, iperf3 and python3. Every load is bounded in time (10 s a run).
set -euo pipefail
RATE=${1:?usage: bench/lab-wire.sh RATE CASE...}; shift
CASES=("$@"); [ ${#CASES[@]} -gt 0 ] || CASES=("target/debug/linerate")
L=${CASES[0]%% *}
N=${N:-3}
export LINERATE_LAB_STATE_DIR=${LINERATE_LAB_STATE_DIR:-/tmp/linerate-bench-wire}
LAB=lbw$$; LAB=${LAB:0:8}
cleanup() { for c in "${CASES[@]}"; do "${c%% *}" lab down "$LAB" >/dev/null 2>&1 || true; done; }
trap cleanup EXIT INT TERM
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }
command -v iperf3 >/dev/null || { echo "needs iperf3 (apt-get install iperf3)" >&2; exit 2; }
FPS=$("$L" calc rate --link "$RATE" --frame 1518 --json | python3 -c "import json,sys; print(json.load(sys.stdin)['rows'][0]['frames_per_second'])")
PRED=$(python3 -c "print($FPS*1448*8/1e6)")
echo "link $RATE, MTU 1500: real Ethernet carries at most $(printf %.2f "$PRED") Mbit/s of TCP payload (calc rate: $(printf %.1f "$FPS") frames/s of 1518 bytes)"
for i in $(seq "$N"); do
  for c in "${CASES[@]}"; do
    B=${c%% *}; [ "$B" = "$c" ] && A="" || A=${c#* }
    # shellcheck disable=SC2086
    "$B" lab up "$LAB" --emulator userspace --rate "$RATE" --delay 10ms $A >/dev/null
    "$B" lab exec "$LAB" recv -- iperf3 -s -D -1 >/dev/null; sleep 0.3
    "$B" lab exec "$LAB" gen -- iperf3 -c 198.18.0.2 -t 10 -O 2 -J > "/tmp/$LAB.json"
    "$B" lab down "$LAB" >/dev/null
    python3 - "$c" "$PRED" "/tmp/$LAB.json" <<'PY'
import json, sys
case, pred, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
r = json.load(open(path))["end"]["sum_received"]["bits_per_second"] / 1e6
print(f"  [{case}]: {r:.2f} Mbit/s = {r / pred:.4f} x the Ethernet ceiling")
PY
  done
done
rm -f "/tmp/$LAB.json"

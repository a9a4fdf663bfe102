#!/usr/bin/env bash
# The RFC 2544 search against a fine manual sweep and against the plain binary search, on one
# router lab whose DUT forwards at most LIMIT frames/s (an nftables token bucket, burst 1000):
#   - `lab rfc2544 --search mlr` (the MLRsearch-style search), `--search binary --max-load line`
#     (the plain RFC 2544 binary search: one goal after the other, every trial at TRIAL, from
#     the line rate) and `--search binary` (the same from the generator's measured ceiling, a
#     narrower range that only linerate's headroom check gives it), alternated ROUNDS times;
#   - a manual sweep: 64-byte frames at loads from 95 % to 105 % of LIMIT in steps of STEP %,
#     one TRIAL each, linerate gen in gen and linerate gen --receive in recv; its NDR is the
#     highest load below the first one that lost a frame.
# Prints each method's NDR, trials, trial seconds and wall time, and the ratios (search NDR /
# sweep NDR, search trials / binary trials). Every trial is bounded (TRIAL); the lab is removed
# on exit. Needs root, nft and python3.
# Usage: bench/rfc2544.sh [BINARY] [TRIAL (2s)] [LIMIT (50000)] [ROUNDS (2)] [STEP (0.5)]
set -euo pipefail
BIN=${1:-target/debug/linerate}; TRIAL=${2:-2s}; LIMIT=${3:-50000}; ROUNDS=${4:-2}
STEP=${5:-0.5}
command -v python3 >/dev/null || { echo "python3 missing" >&2; exit 2; }
command -v nft >/dev/null || { echo "nft missing (apt-get install nftables)" >&2; exit 2; }
BIN=$(readlink -f "$BIN")
secs=${TRIAL%s}
NAME=b$(( $$ % 1000000 ))
STATE=$(mktemp -d)
export LINERATE_LAB_STATE_DIR=$STATE
trap '"$BIN" lab down "$NAME" >/dev/null 2>&1 || true; rm -rf "$STATE"' EXIT
"$BIN" lab up "$NAME" --topology router >/dev/null
cat > "$STATE/limit.nft" <<EOF
table inet lrbench {
  chain forward {
    type filter hook forward priority 0; policy accept;
    limit rate over $LIMIT/second burst 1000 packets drop
  }
}
EOF
"$BIN" lab firewall "$NAME" "file:$STATE/limit.nft" >/dev/null
DMAC=$("$BIN" lab show "$NAME" --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
print([i["mac"] for n in s["nodes"] if n["name"] == "dut" for i in n["interfaces"] if i["link"] == "l0"][0])')
results=$STATE/results
search() { # LABEL METHOD MAX-LOAD
  "$BIN" lab rfc2544 "$NAME" --frame 64 --trial "$TRIAL" --search "$2" --max-load "$3" --json \
    --no-store -q --latency-trial 200ms --headroom-trial 1s |
    python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
print(sys.argv[1], r["ndr_pps"], r["pdr_pps"], r["trial_count"], r["trial_seconds"],
      r["search_seconds"])' "$1" >> "$results"
}
for r in $(seq "$ROUNDS"); do
  search mlr mlr ceiling
  search binary-line binary line
  search binary binary ceiling
done
# The manual sweep.
sweep=$STATE/sweep
start=$(date +%s.%N)
for load in $(python3 -c "
l, s = $LIMIT, $STEP / 100
print(' '.join(str(round(l * (0.95 + i * s))) for i in range(int(0.10 / s) + 1)))"); do
  ip netns exec "lr-$NAME-recv" "$BIN" gen --receive --dev "lr-$NAME-r1" --json \
    -t "$(python3 -c "print($secs + 2)")s" > "$STATE/rx.json" &
  rx=$!
  sleep 0.7
  ip netns exec "lr-$NAME-gen" "$BIN" gen --dev "lr-$NAME-g0" --src-ip 198.18.0.1 \
    --dst-ip 198.19.0.1 --dst-mac "$DMAC" --rate "${load}pps" -t "$TRIAL" --json > "$STATE/tx.json"
  wait $rx
  python3 -c '
import json, sys
tx = json.load(open(sys.argv[2])); rx = json.load(open(sys.argv[3]))
print(sys.argv[1], tx["sent_frames"], rx["received_frames"])' "$load" "$STATE/tx.json" \
    "$STATE/rx.json" >> "$sweep"
done
end=$(date +%s.%N)
python3 - "$results" "$sweep" "$LIMIT" "$secs" "$start" "$end" <<'EOF'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
sweep = [tuple(map(float, l.split())) for l in open(sys.argv[2])]
limit, secs = float(sys.argv[3]), float(sys.argv[4])
ndr = 0.0
for load, sent, recv in sweep:
    if recv < sent:
        break
    ndr = load
wall = float(sys.argv[6]) - float(sys.argv[5])
print(f"nftables limit {limit:.0f} frames/s on the DUT, 64-byte frames, final trials {secs:g} s")
print(f"{'method':11} {'NDR fps':>9} {'PDR fps':>9} {'trials':>6} {'trial s':>8} {'wall s':>7}")
med = {}
for m in ("mlr", "binary-line", "binary"):
    r = [list(map(float, x[1:])) for x in rows if x[0] == m]
    for x in r:
        print(f"{m:11} {x[0]:9.0f} {x[1]:9.0f} {x[2]:6.0f} {x[3]:8.1f} {x[4]:7.1f}")
    med[m] = [st.median(c) for c in zip(*r)]
print(f"{'sweep':11} {ndr:9.0f} {'':>9} {len(sweep):6d} {len(sweep) * secs:8.1f} {wall:7.1f}"
      f"   ({len(sweep)} loads, step {100 * (sweep[1][0] - sweep[0][0]) / limit:.2f} % of the limit)")
mlr = med["mlr"]
print(f"search NDR / sweep NDR: {mlr[0] / ndr:.4f} (median of {len([x for x in rows if x[0] == 'mlr'])})")
for m, what in (("binary-line", "plain binary search from the line rate"),
                ("binary", "binary search from the generator's ceiling")):
    b = med[m]
    print(f"against the {what}: NDR / sweep NDR {b[0] / ndr:.4f}; search / it: trials "
          f"{mlr[2] / b[2]:.3f}, trial seconds {mlr[3] / b[3]:.3f}, wall time {mlr[4] / b[4]:.3f}")
EOF

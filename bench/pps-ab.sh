#!/usr/bin/env bash
# Two linerate binaries side by side on the pps engine's hot path (sendmmsg/recvmmsg batches):
# loopback, 64-byte frames, with and without UDP GSO, runs alternated A B A B … so drift on a
# shared machine hits both alike; medians and the ratio B/A. Each run is bounded (-t seconds).
# Usage: bench/pps-ab.sh BINARY_A BINARY_B [SECONDS (default 3)] [REPETITIONS (default 3)]
set -euo pipefail
A=${1:?binary A}; B=${2:?binary B}; dur=${3:-3}; reps=${4:-3}
command -v python3 >/dev/null || { echo "python3 missing" >&2; exit 2; }
pa=$((20000 + RANDOM % 20000)); pb=$((pa + 1))
"$A" server -p "$pa" 2>/dev/null & sa=$!
"$B" server -p "$pb" 2>/dev/null & sb=$!
trap 'kill $sa $sb 2>/dev/null || true' EXIT
sleep 1
results=$(mktemp)
for r in $(seq "$reps"); do
  for gso in gso no-gso; do
    extra=(); [ $gso = no-gso ] && extra=(--no-gso)
    for side in A B; do
      if [ $side = A ]; then bin=$A; port=$pa; else bin=$B; port=$pb; fi
      "$bin" client 127.0.0.1 -p "$port" --mode pps -t "$dur" "${extra[@]}" --no-store --json |
        python3 -c '
import json, sys
l = json.load(sys.stdin)["linerate"]
print(sys.argv[1], sys.argv[2], l["sent_pps"], l["received_pps"])' "$gso" "$side" >> "$results"
    done
  done
done
python3 - "$results" <<'EOF'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
for gso in ("gso", "no-gso"):
    med = {}
    for side in ("A", "B"):
        r = [(float(s), float(v)) for g, sd, s, v in rows if g == gso and sd == side]
        med[side] = (st.median(x for x, _ in r), st.median(y for _, y in r), len(r))
    a, b = med["A"], med["B"]
    print(f"pps 64 B {gso:6}: A sent {a[0]/1e3:8.0f} kpps recv {a[1]/1e3:8.0f} kpps | "
          f"B sent {b[0]/1e3:8.0f} kpps recv {b[1]/1e3:8.0f} kpps | "
          f"B/A recv {b[1]/a[1]:.3f} (median of {a[2]})")
EOF
rm -f "$results"

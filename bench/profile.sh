#!/usr/bin/env bash
# What profiling costs (issue 15), measured side by side, alternated, on this machine:
#  1. a TCP stream over loopback (linerate client, 2 s) with and without `linerate profile`
#     around it (every CPU, 99 Hz), N repetitions each, alternated; verdict by `linerate stat`;
#  2. the router lab's forwarded 64-byte frames (`lab run`, one variant) with and without
#     `--profile`, alternated;
#  3. sampling into folded stacks against `perf record -a -g` + `perf script` on the same
#     workload and duration (perf's side lacks the collapse step, which favours it): CPU
#     seconds (user + sys) each tool spent besides the sampled duration.
# Root. Every run is bounded (-t). Usage: bench/profile.sh [REPETITIONS (default 5)]
set -euo pipefail
reps=${1:-5}
bin=${LINERATE:-target/release/linerate}
[ -x "$bin" ] || { echo "build first: cargo build --release (or set LINERATE)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "needs root (perf_event_open every CPU, namespaces)" >&2; exit 2; }
work=$(mktemp -d); export LINERATE_DB=$work/runs.db
port=$((20000 + RANDOM % 20000))
"$bin" server -B 127.0.0.1 -p "$port" >/dev/null 2>&1 & srv=$!
trap 'kill $srv 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 1
tcp_bps() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"])' "$1"; }
for r in $(seq "$reps"); do
  "$bin" client 127.0.0.1 -p "$port" -t 2s --no-store --json > "$work/one.json"
  tcp_bps "$work/one.json" >> "$work/tcp-plain"
  "$bin" profile -t 10s -- sh -c "$bin client 127.0.0.1 -p $port -t 2s --no-store --json > $work/one.json" >/dev/null
  tcp_bps "$work/one.json" >> "$work/tcp-profiled"
done
echo "== 1. TCP over loopback, bit/s, without (x) and with (+) linerate profile at 99 Hz"
"$bin" stat "$work/tcp-plain" "$work/tcp-profiled"
python3 - "$work/tcp-plain" "$work/tcp-profiled" <<'PY'
import statistics as st, sys
a, b = ([float(l) for l in open(p)] for p in sys.argv[1:3])
print(f"TCP: profiled/plain median ratio {st.median(b)/st.median(a):.3f} (N={len(a)} each)")
PY

echo "== 2. router lab, 64-byte frames forwarded, without (x) and with (+) lab run --profile"
exp=$work/fwd.toml
cat > "$exp" <<TOML
[experiment]
name = "profile-overhead"
repetitions = 1
[lab]
topology = "router"
[workload]
mode = "pps"
frame = 64
duration = "3s"
streams = 1
[[variant]]
name = "no-firewall"
TOML
for r in $(seq "$reps"); do
  for side in plain profiled; do
    extra=(); [ $side = profiled ] && extra=(--profile)
    "$bin" lab run "$exp" -q --json --no-store "${extra[@]}" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["variants"][0]["values"][0])' >> "$work/fwd-$side"
  done
done
"$bin" stat "$work/fwd-plain" "$work/fwd-profiled"
python3 - "$work/fwd-plain" "$work/fwd-profiled" <<'PY'
import statistics as st, sys
a, b = ([float(l) for l in open(p)] for p in sys.argv[1:3])
print(f"router: profiled/plain median ratio {st.median(b)/st.median(a):.3f} (N={len(a)} each)")
PY

echo "== 3. CPU seconds to sample 5 s of a TCP stream into stacks: linerate vs perf record+script"
if command -v perf >/dev/null; then
  for r in $(seq "$reps"); do
    for side in linerate perf; do
      "$bin" client 127.0.0.1 -p "$port" -t 6s --no-store >/dev/null 2>&1 & cl=$!
      sleep 0.5
      if [ $side = linerate ]; then
        /usr/bin/time -f "%U %S" -o "$work/t" "$bin" profile -t 5s --folded "$work/l.folded" >/dev/null
      else
        /usr/bin/time -f "%U %S" -o "$work/t" sh -c "perf record -q -F 99 -a -g -o $work/perf.data -- sleep 5 2>/dev/null; perf script -i $work/perf.data > $work/perf.txt 2>/dev/null"
      fi
      wait $cl || true
      awk -v s=$side '{print s, $1 + $2}' "$work/t" >> "$work/cpu"
    done
  done
  python3 - "$work/cpu" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
m = {s: st.median(float(v) for k, v in rows if k == s) for s in ("linerate", "perf")}
print(f"CPU s: linerate profile {m['linerate']:.2f}, perf record+script {m['perf']:.2f}, "
      f"ratio linerate/perf {m['linerate']/m['perf']:.2f} (median of {len(rows)//2})")
PY
else
  echo "perf missing (Debian linux-perf): part 3 skipped"
fi

#!/usr/bin/env bash
# What sampling the evidence costs (issue 30: < 2 % of throughput): one TCP stream over
# loopback, client and server linerate, with the evidence sampled at HZ readings a second on
# both sides (--evidence-hz HZ) and with it off (--evidence-hz 0), alternated on (A) and off
# (B), the order swapped every repetition so drift and order hit both alike. Prints every
# run, the medians, the ratio on/off, and `linerate stat`'s verdict on the two samples; and,
# from the evidence itself, the recorder threads' own CPU beside the stream threads': on a
# CPU-bound loopback that share bounds what sampling can take from the rate.
# Only TCP streams are sampled (UDP streams have no TCP_INFO; their side's CPU is read once a
# second), so only TCP is measured. Each run is bounded by -t.
# Usage: bench/evidence.sh BINARY [SECONDS (default 5)] [REPETITIONS (default 7)] [HZ (default 100)]
set -euo pipefail
bin=${1:?linerate binary (a release build)}; dur=${2:-5}; reps=${3:-7}; hz=${4:-100}
command -v python3 >/dev/null || { echo "python3 missing" >&2; exit 2; }
[ "$reps" -ge 5 ] || { echo "at least 5 repetitions" >&2; exit 2; }
port=$((20000 + RANDOM % 20000))
"$bin" server -B 127.0.0.1 -p "$port" 2>/dev/null & server=$!
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 1

run() { # $1: on|off; appends the received bit rate to $work/$1
  local flag=0; [ "$1" = on ] && flag=$hz
  "$bin" client 127.0.0.1 -p "$port" -t "$dur" --evidence-hz "$flag" --no-store --json |
    python3 -c '
import json, sys
d = json.load(sys.stdin)
bps = d["end"]["sum_received"]["bits_per_second"]
ev = d["linerate"].get("evidence")
if sys.argv[1] == "on":
    # The evidence really was sampled, on both sides.
    n = [s["tcp"][0]["samples"] / s["seconds"] for s in (ev["local"], ev["remote"])]
    note = "readings/s client %.1f server %.1f" % tuple(n)
    cpu = lambda s, name: sum(t["user_percent"] + t["system_percent"]
                              for t in s["cpu"]["threads"] if t["name"].startswith(name))
    with open(sys.argv[2], "a") as f:
        for s in (ev["local"], ev["remote"]):
            print(s["side"], cpu(s, "lr-evidence"), cpu(s, "lr-stream"), file=f)
else:
    assert ev is None, "sampling was not off"
    note = ""
print(bps)
print("%-3s %8.2f Gbit/s %s" % (sys.argv[1], bps / 1e9, note), file=sys.stderr)' "$1" "$work/threads" >> "$work/$1"
}

for r in $(seq "$reps"); do
  if [ $((r % 2)) -eq 1 ]; then run on; run off; else run off; run on; fi
done

python3 - "$work" "$hz" "$dur" <<'EOF'
import statistics as st, sys
work, hz, dur = sys.argv[1], sys.argv[2], sys.argv[3]
on = [float(x) for x in open(f"{work}/on")]
off = [float(x) for x in open(f"{work}/off")]
m_on, m_off = st.median(on), st.median(off)
print(f"TCP 1 stream, loopback, {dur} s runs, {len(on)} each, alternated")
print(f"  sampling at {hz} Hz: median {m_on/1e9:7.2f} Gbit/s (min {min(on)/1e9:.2f}, max {max(on)/1e9:.2f})")
print(f"  sampling off:     median {m_off/1e9:7.2f} Gbit/s (min {min(off)/1e9:.2f}, max {max(off)/1e9:.2f})")
print(f"  on/off: {m_on/m_off:.4f} (cost {100*(1-m_on/m_off):+.2f} %)")
rows = [l.split() for l in open(f"{work}/threads")]
for side in ("client", "server"):
    rec = [float(r[1]) for r in rows if r[0] == side]
    strm = [float(r[2]) for r in rows if r[0] == side]
    print(f"  {side} recorder thread: mean {st.mean(rec):.2f} % of a core "
          f"(max {max(rec):.2f}) beside its stream thread's {st.mean(strm):.1f} %")
EOF
echo "linerate stat (95 %):"
"$bin" stat "$work/on" "$work/off" || true

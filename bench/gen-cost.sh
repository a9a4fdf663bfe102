#!/usr/bin/env bash
# The generator's cost per frame, two linerate binaries A and B (before/after a change) side by
# side: frames `linerate gen` sends into a sink per CPU-second of its own (user + system, from
# /usr/bin/time), --count frames a run, pinned to CPU 0 (or 0,1), both engines, 1 and 2
# threads, A and B alternated (which goes first alternating by repetition). A figure per CPU
# second holds up on a loaded machine, where frames per wall-clock second (bench/gen.sh) swing
# with the other processes' share of the CPUs. Prints each pair, then B/A per configuration.
#
# Usage (root): bench/gen-cost.sh A B [REPETITIONS (8)] [FRAMES (3000000)]
# Addresses: 198.18.102.0/24; frames go to a MAC that is not the sink's (dropped on arrival).
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "bench/gen-cost.sh needs root (namespaces, packet sockets)" >&2; exit 2; }
[ $# -ge 2 ] && [ -x "$1" ] && [ -x "$2" ] || { echo "usage: bench/gen-cost.sh A B [REPETITIONS] [FRAMES]" >&2; exit 2; }
A=$1; B=$2; reps=${3:-8}; count=${4:-3000000}
tag=lrc$$; G=$tag-g; S=$tag-s
rows=$(mktemp)
cleanup() { ip netns del $G 2>/dev/null || true; ip netns del $S 2>/dev/null || true; rm -f "$rows"; }
trap cleanup EXIT
ip netns add $G; ip netns add $S
ip link add s0 netns $G numtxqueues 2 numrxqueues 2 type veth peer name s1 netns $S numtxqueues 2 numrxqueues 2
ip -n $G addr add 198.18.102.1/24 dev s0; ip -n $S addr add 198.18.102.2/24 dev s1
ip -n $G link set s0 up; ip -n $S link set s1 up; ip -n $G link set lo up
one() { # BIN ENGINE THREADS
  local cpu=0; [ "$3" = 2 ] && cpu=0,1
  local out
  out=$( { /usr/bin/time -f "TIME %U %S" timeout -k 5 120 ip netns exec $G "$1" gen --dev s0 --dst-mac 02:00:00:00:00:01 \
      --src-ip 198.18.102.1 --dst-ip 198.18.102.2 --count $count --threads $3 --cpu $cpu --engine $2 --json; } 2>&1 )
  python3 -c '
import json,sys
t=sys.argv[1]
js=t[t.index("{"):t.rindex("}")+1]; d=json.loads(js)
u,s=[float(x) for x in t.split("TIME ")[1].split()[:2]]
print(d["sent_frames"]/(u+s), d["sent_pps"])' "$out"
}
echo "engine threads repetition A_frames_per_cpu_s A_sent_pps B_frames_per_cpu_s B_sent_pps"
for r in $(seq "$reps"); do
  for e in packet xdp; do
    for n in 1 2; do
      if (( r % 2 )); then a=$(one "$A" $e $n); b=$(one "$B" $e $n); else b=$(one "$B" $e $n); a=$(one "$A" $e $n); fi
      echo "$e $n $r $a $b" | tee -a "$rows"
    done
  done
done
python3 - "$rows" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
for e in ("packet", "xdp"):
    for n in ("1", "2"):
        rs = [r for r in rows if r[0] == e and r[1] == n]
        cost = [float(r[5]) / float(r[3]) for r in rs]
        print(f"{e} {n} thread(s): frames per CPU-second A {st.median(float(r[3]) for r in rs)/1e6:.2f} M, "
              f"B {st.median(float(r[5]) for r in rs)/1e6:.2f} M; B/A per pair median {st.median(cost):.3f} "
              f"({min(cost):.3f} … {max(cost):.3f})")
every = [float(r[5]) / float(r[3]) for r in rows]
print(f"all {len(every)} pairs: B/A median {st.median(every):.3f}, geometric mean {st.geometric_mean(every):.3f}")
PY

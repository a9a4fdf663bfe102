#!/usr/bin/env bash
# linerate gen against trafgen (netsniff-ng), side by side, alternated, N repetitions, ratios.
#
# (a) router: namespaces gen → router → recv joined by veth pairs (the router forwards, no
#     other work); 64-byte frames sent for SECONDS by each generator in turn, counted at recv's
#     interface (/sys/class/net/…/statistics/rx_packets in recv). 1 and 2 threads/CPUs.
# (b) sink: the generator alone into a namespace with no forwarding (frames addressed to a MAC
#     that is not the sink's, dropped on arrival), frames/s at the sink's interface divided by
#     the threads/CPUs used (per core).
#
# Both generators are pinned the same way: trafgen pins fork i to CPU i; linerate gen gets
# --cpu 0 (1 thread) or --cpu 0,1 (2 threads). pktgen is absent on this kernel (no
# /proc/net/pktgen, modprobe pktgen fails), so it is not in the table.
#
# Usage (root): bench/gen.sh [SECONDS (default 3)] [REPETITIONS (default 3)] [ENGINES (default
#   "packet xdp")]. Binary: $LINERATE or target/release/linerate. Each run is bounded by timeout.
#   With $LINERATE_B set to a second binary (before/after a change), each repetition runs both
#   right after one another, alternated, and the table adds B's ratio to A (the binary above)
#   per engine: the machine's drift and load hit both alike.
# Addresses: 198.18.100.0/24 (gen–router), 198.18.101.0/24 (router–recv), 198.18.102.0/24 (sink).
set -euo pipefail
dur=${1:-3}; reps=${2:-3}; engines=${3:-packet xdp}
BIN=${LINERATE:-$(dirname "$0")/../target/release/linerate}
[ "$(id -u)" = 0 ] || { echo "bench/gen.sh needs root (namespaces, packet sockets)" >&2; exit 2; }
command -v trafgen >/dev/null || { echo "trafgen missing (apt-get install netsniff-ng)" >&2; exit 2; }
[ -x "$BIN" ] || { echo "$BIN missing: cargo build --release -p linerate" >&2; exit 2; }
BIN_B=${LINERATE_B:-}
[ -z "$BIN_B" ] || [ -x "$BIN_B" ] || { echo "LINERATE_B=$BIN_B is not an executable" >&2; exit 2; }
(( reps >= 1 && dur >= 1 )) || { echo "SECONDS and REPETITIONS must be ≥ 1" >&2; exit 2; }
cpus=$(nproc)
new_cli=$("$BIN" gen --help | grep -c -- --engine || true); [ "$new_cli" = 0 ] && new_cli=

tag=lrb$$
G=$tag-gen; R=$tag-rtr; V=$tag-recv; S=$tag-sink
cleanup() {
  for ns in $G $R $V $S; do ip netns del "$ns" 2>/dev/null || true; done
  rm -f "$tmp"/* 2>/dev/null || true; rmdir "$tmp" 2>/dev/null || true
}
tmp=$(mktemp -d)
trap cleanup EXIT
for ns in $G $R $V $S; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
# Two queues each way, so an AF_XDP socket per thread has its own queue.
q="numtxqueues 2 numrxqueues 2"
ip link add g0 netns $G $q type veth peer name r0 netns $R $q
ip link add r1 netns $R $q type veth peer name v1 netns $V $q
ip link add s0 netns $G $q type veth peer name s1 netns $S $q
ip -n $G addr add 198.18.100.1/24 dev g0
ip -n $R addr add 198.18.100.2/24 dev r0
ip -n $R addr add 198.18.101.1/24 dev r1
ip -n $V addr add 198.18.101.2/24 dev v1
ip -n $G addr add 198.18.102.1/24 dev s0
ip -n $S addr add 198.18.102.2/24 dev s1
for l in "$G g0" "$R r0" "$R r1" "$V v1" "$G s0" "$S s1"; do set -- $l; ip -n "$1" link set "$2" up; done
ip netns exec $R sysctl -qw net.ipv4.ip_forward=1
ip netns exec $S sysctl -qw net.ipv4.ip_forward=0
ip -n $G route add 198.18.101.0/24 via 198.18.100.2
rmac=$(ip netns exec $R cat /sys/class/net/r0/address)
vmac=$(ip netns exec $V cat /sys/class/net/v1/address)
# Static neighbours: no ARP during a run. Frames go to 198.18.101.3, which the router sends to
# recv's MAC and recv (no forwarding, not its address) drops without answering: no ICMP storm
# back through the router, so the router's forwarding is what is measured.
ip -n $R neigh replace 198.18.101.3 lladdr "$vmac" dev r1 nud permanent
# The sink: frames to a MAC that is not the sink's are counted by its interface and dropped
# at once (PACKET_OTHERHOST), so the sink costs the generator's CPU as little as it can.
smac=02:00:00:00:00:01

rxcount() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/rx_packets"; }

# trafgen's 64-byte frame (60 bytes + FCS): Ethernet, IPv4, UDP, 18 bytes of payload.
tgcfg() { # DST_MAC DST_IP SRC_IP
  echo "{ eth(da=$1, type=0x0800), ipv4(sa=$3, da=$2, ttl=64, df), udp(sp=10000, dp=9), fill(0, 18) }"
}
tgcfg "$rmac" 198.18.101.3 198.18.100.1 > "$tmp/router.cfg"
tgcfg "$smac" 198.18.102.2 198.18.102.1 > "$tmp/sink.cfg"

# One run: prints frames/s counted at the receiving interface.
run() { # SCENARIO TOOL THREADS [ENGINE [BINARY]]
  local sc=$1 tool=$2 n=$3 eng=${4:-} bin=${5:-$BIN} dev mac dst src cns cdev before after cpu
  if [ "$sc" = router ]; then dev=g0; mac=$rmac; dst=198.18.101.3; src=198.18.100.1; cns=$V; cdev=v1
  else dev=s0; mac=$smac; dst=198.18.102.2; src=198.18.102.1; cns=$S; cdev=s1; fi
  cpu=0; [ "$n" = 2 ] && cpu=0,1
  before=$(rxcount "$cns" "$cdev")
  local t0 t1 prof=
  # PROFILE=1: every CPU sampled while the generator runs through the router with every thread.
  if [ -n "${PROFILE:-}" ] && [ "$sc" = router ] && [ "$n" = "${threads##* }" ]; then
    ( sleep 0.5; "$BIN" profile -t "$(( dur > 2 ? dur - 1 : 1 ))s" --frequency 499 \
        --folded "$tmp/prof-$tool${eng:+-$eng}-$r.folded" >/dev/null 2>&1 ) & prof=$!
  fi
  t0=$(date +%s.%N)
  if [ "$tool" = trafgen ]; then
    timeout -s INT -k 5 "$dur" ip netns exec $G trafgen --dev "$dev" --conf "$tmp/$sc.cfg" \
      --cpus "$n" --no-sock-mem --notouch-irq --no-cpu-stats >/dev/null 2>&1 || true
  else
    local extra=(--cpu "$cpu" --engine "$eng") pin=()
    # A binary from before --cpu/--engine (for before/after figures): pinned with taskset.
    if [ -z "$new_cli" ]; then extra=(); pin=(taskset -c "$cpu"); fi
    timeout -k 5 $((dur + 10)) ip netns exec $G "${pin[@]}" "$bin" gen --dev "$dev" \
      --dst-mac "$mac" --src-ip "$src" --dst-ip "$dst" --frame 64 -t "${dur}s" --threads "$n" \
      "${extra[@]}" --json > "$tmp/out.json" 2> "$tmp/err" \
      || { echo "linerate gen failed: $(cat "$tmp/err")" >&2; echo 0; return; }
  fi
  t1=$(date +%s.%N)
  [ -z "$prof" ] || wait "$prof" || true
  sleep 0.3 # let the veth backlogs drain into the counter
  after=$(rxcount "$cns" "$cdev")
  python3 -c "import sys; print((int(sys.argv[2]) - int(sys.argv[1])) / (float(sys.argv[4]) - float(sys.argv[3])))" \
    "$before" "$after" "$t0" "$t1"
}

results=$tmp/results
: > "$results"
threads="1"; (( cpus >= 2 )) && threads="1 2"
for r in $(seq "$reps"); do
  for sc in router sink; do
    for n in $threads; do
      echo "$sc $n trafgen $(run $sc trafgen "$n")" >> "$results"
      for e in $engines; do
        # A and B alternate which goes first from one repetition to the next.
        if [ -n "$BIN_B" ] && (( r % 2 == 0 )); then
          echo "$sc $n B:$e $(run $sc linerate "$n" "$e" "$BIN_B") $r" >> "$results"
        fi
        echo "$sc $n $e $(run $sc linerate "$n" "$e") $r" >> "$results"
        if [ -n "$BIN_B" ] && (( r % 2 == 1 )); then
          echo "$sc $n B:$e $(run $sc linerate "$n" "$e" "$BIN_B") $r" >> "$results"
        fi
      done
    done
  done
done
python3 - "$results" "$dur" "$reps" "$engines" <<'EOF'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
dur, reps, engines = sys.argv[2], sys.argv[3], sys.argv[4].split()
print(f"linerate gen vs trafgen, 64-byte frames, {dur} s runs, median of {reps}, alternated, "
      "both pinned (CPU 0, or CPUs 0,1)")
for sc, what in (("router", "forwarded, counted at recv's interface"),
                 ("sink", "into a sink, per core")):
    print(f"\n{sc}: {what}")
    for n in sorted({r[1] for r in rows}):
        def med(tool):
            v = [float(r[3]) for r in rows if r[0] == sc and r[1] == n and r[2] == tool]
            m = st.median(v) if v else 0.0
            return m / int(n) if sc == "sink" else m
        t = med("trafgen")
        line = f"  {n} thread(s): trafgen {t/1e3:8.0f} kpps"
        for e in engines:
            g = med(e)
            ratio = g / t if t else float("nan")
            line += f" | linerate gen --engine {e} {g/1e3:8.0f} kpps ({ratio:.2f}x)"
            if any(r[2] == "B:" + e for r in rows):
                # B over A run by run (each pair measured back to back): median, min … max.
                a = {r[4]: float(r[3]) for r in rows if r[0] == sc and r[1] == n and r[2] == e}
                pairs = sorted(float(r[3]) / a[r[4]] for r in rows
                               if r[0] == sc and r[1] == n and r[2] == "B:" + e and a.get(r[4]))
                if pairs:
                    line += (f", B/A {st.median(pairs):.3f} ({pairs[0]:.3f} … {pairs[-1]:.3f})")
        print(line)
EOF
[ -n "${PROFILE:-}" ] || exit 0
# Where the two CPUs went while each generator sent through the router with every thread: the
# generator's own user space, its kernel send path (syscall, ring kick, veth transmit), the
# forwarding (softirq: veth NAPI, IP receive/forward, neighbour output — on whichever stack it
# ran), idle, and everything else (other processes of a shared machine).
python3 - "$tmp" $engines <<'EOF2'
import glob, os, sys
from collections import Counter
tmp, engines = sys.argv[1], sys.argv[2:]
FWD = ("net_rx_action", "__napi_poll", "veth_poll", "ip_forward", "ip_rcv", "__netif_receive_skb",
       "process_backlog", "ip_finish_output", "neigh_resolve_output", "handle_softirqs")
KERNEL = ("entry_SYSCALL", "do_syscall_64", "asm_", "ret_from_fork", "__x64_sys", "x64_sys_call")
IDLE = ("swapper", "do_idle", "cpu_startup_entry", "default_idle", "cpuidle")
print("\nwhere the CPUs went, through the router, every thread (linerate profile, 499 Hz, all CPUs)")
print("| generator | samples | its user space | its kernel send path | forwarding (softirq) | idle | other |")
print("|---|---|---|---|---|---|---|")
for tool in ["trafgen"] + engines:
    c = Counter()
    comm = "trafgen" if tool == "trafgen" else "linerate"
    for f in glob.glob(os.path.join(tmp, f"prof-{'trafgen' if tool == 'trafgen' else 'linerate-' + tool}-*.folded")):
        for line in open(f):
            stack, _, n = line.rstrip().rpartition(" ")
            frames = stack.split(";")
            if any(x.startswith(FWD) for x in frames):
                kind = "fwd"
            elif frames[0].startswith(IDLE) or any(x.startswith(IDLE) for x in frames):
                kind = "idle"
            elif frames[0] == comm:
                kind = "kernel" if any(x.startswith(KERNEL) for x in frames) else "user"
            else:
                kind = "other"
            c[kind] += int(n)
    tot = sum(c.values())
    if not tot:
        continue
    pct = lambda k: f"{c[k] / tot * 100:.1f} %"
    name = "trafgen" if tool == "trafgen" else f"linerate gen --engine {tool}"
    print(f"| {name} | {tot} | {pct('user')} | {pct('kernel')} | {pct('fwd')} | {pct('idle')} | {pct('other')} |")
EOF2

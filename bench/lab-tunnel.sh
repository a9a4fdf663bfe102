#!/usr/bin/env bash
# Benchmark of tunnels in `linerate lab`: lab bring-up time with each tunnel, and one TCP
# stream through plain veth, WireGuard (kernel or wireguard-go) and OpenVPN (UDP, two AEAD
# ciphers), variants alternated (A B C D A B C D ...), with the tunnel daemons' CPU share
# (utime + stime from /proc/PID/stat over the run, 100 % = one core). Prints mean ± sd per
# variant and its ratio to plain veth. Needs root, openvpn, wireguard-go, wg and python3.
# Usage: bench/lab-tunnel.sh [path/to/linerate] [N] [DURATION]   (defaults: target/release/linerate 5 10s)
set -euo pipefail
L=${1:-target/release/linerate}; N=${2:-5}; D=${3:-10s}
export LINERATE_LAB_STATE_DIR=${LINERATE_LAB_STATE_DIR:-/tmp/linerate-bench-lab}
LAB=lbt$$; LAB=${LAB:0:8}
cleanup() { "$L" lab down "$LAB" >/dev/null 2>&1 || true; }
trap cleanup EXIT INT TERM
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }
for t in openvpn wireguard-go wg python3; do command -v $t >/dev/null || { echo "needs $t" >&2; exit 2; }; done
HZ=$(getconf CLK_TCK)
state() { cat "$LINERATE_LAB_STATE_DIR/$LAB.json"; }
cpu_ticks() { # sum of utime+stime of the recorded daemons
  state | python3 -c '
import json,sys
t=json.load(sys.stdin).get("tunnel") or {}
s=0
for p in t.get("processes",[]):
    try: f=open("/proc/%d/stat"%p["pid"]).read().rsplit(")",1)[1].split(); s+=int(f[11])+int(f[12])
    except OSError: pass
print(s)'
}
variants=("plain" "wireguard" "openvpn cipher=AES-256-GCM" "openvpn cipher=CHACHA20-POLY1305")
args_of() { set -- $1; [ "$1" = plain ] && return; printf -- "--tunnel %s" "$1"; shift; for o in "$@"; do printf -- " --tunnel-opt %s" "$o"; done; }
target_of() { [ "$1" = plain ] && echo 198.18.0.2 || echo 198.19.128.2; }

echo "== bring-up with a tunnel (pair), 5 runs each: total ms (tunnel ms)"
for v in "${variants[@]:1}"; do
  line="$v:"
  for i in 1 2 3 4 5; do
    "$L" lab up "$LAB" $(args_of "$v") --json > /tmp/lbt-up.json
    line+=" $(python3 -c 'import json; d=json.load(open("/tmp/lbt-up.json")); print("%.0f(%.0f)"%(d["bringup_ms"], d["tunnel"]["bringup_ms"]))')"
    "$L" lab down "$LAB" >/dev/null
  done
  echo "  $line"
done

echo "== one TCP stream for $D, $N rounds, variants alternated"
out=/tmp/lbt-results.txt; : > "$out"
for r in $(seq "$N"); do
  for v in "${variants[@]}"; do
    "$L" lab up "$LAB" $(args_of "$v") >/dev/null
    # The server lives in recv until `lab down` kills it; a short run proves it listens.
    ( "$L" lab exec "$LAB" recv -- "$L" server >/dev/null 2>&1 & )
    for _ in $(seq 50); do "$L" lab exec "$LAB" gen -- "$L" client "$(target_of "$v")" -t 100ms --no-store >/dev/null 2>&1 && break; sleep 0.1; done
    c0=$(cpu_ticks); t0=$(date +%s%N)
    bps=$("$L" lab exec "$LAB" gen -- "$L" client "$(target_of "$v")" -t "$D" --no-store --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])')
    c1=$(cpu_ticks); t1=$(date +%s%N)
    cpu=$(python3 -c "print(($c1-$c0)/$HZ/(($t1-$t0)/1e9)*100)")
    echo "$v|$bps|$cpu" >> "$out"
    echo "  round $r $v: $(python3 -c "print('%.1f Mbit/s, daemons %.0f %% CPU'%($bps/1e6,$cpu))")"
    "$L" lab down "$LAB" >/dev/null
  done
done
python3 - "$out" <<'PY'
import sys, statistics as st
rows={}
for l in open(sys.argv[1]):
    v,b,c=l.strip().split("|"); rows.setdefault(v,[]).append((float(b),float(c)))
base=st.mean(b for b,_ in rows["plain"])
print("== summary (mean ± sd, N=%d)"%len(rows["plain"]))
for v,xs in rows.items():
    b=[x for x,_ in xs]; c=[y for _,y in xs]
    sd=st.stdev(b) if len(b)>1 else 0
    print("  %-34s %9.1f ± %6.1f Mbit/s  %6.3f x plain  daemons %5.0f %% CPU"%(v,st.mean(b)/1e6,sd/1e6,st.mean(b)/base,st.mean(c)))
PY

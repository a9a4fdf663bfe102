#!/usr/bin/env bash
# Benchmark of `linerate lab`: bring-up time (netlink vs an `ip` script), and the userspace
# link emulator at 1 Gbit/s + 20 ms one-way delay: single-stream TCP throughput, RTT accuracy,
# loss accuracy and its packet-rate ceiling. Needs root, iperf3 and python3.
# Usage: bench/lab-emulator.sh [path/to/linerate]   (default: target/release/linerate)
# Short runs on purpose (shared machine): every load is bounded in time.
set -euo pipefail
L=${1:-target/release/linerate}
export LINERATE_LAB_STATE_DIR=${LINERATE_LAB_STATE_DIR:-/tmp/linerate-bench-lab}
N=lbb$$; N=${N:0:8}
cleanup() { "$L" lab down "$N" >/dev/null 2>&1 || true; for s in gen dut recv; do ip netns del "lr-ipb-$s" 2>/dev/null || true; done; }
trap cleanup EXIT INT TERM
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }
command -v iperf3 >/dev/null || { echo "needs iperf3 (apt-get install iperf3)" >&2; exit 2; }
py() { python3 -c "$1"; }
ms() { echo $(( $(date +%s%N) / 1000 )); }

echo "== bring-up of the router topology (gen - dut - recv), 10 runs each"
lr=(); ipt=()
for i in $(seq 10); do
  t0=$(ms); "$L" lab up "$N" --topology router >/dev/null; t1=$(ms); "$L" lab down "$N" >/dev/null
  lr+=($(( t1 - t0 )))
  t0=$(ms)
  for s in gen dut recv; do ip netns add lr-ipb-$s; ip -n lr-ipb-$s link set lo up; done
  ip link add ipb-g0 netns lr-ipb-gen type veth peer name ipb-d0 netns lr-ipb-dut
  ip link add ipb-d1 netns lr-ipb-dut type veth peer name ipb-r1 netns lr-ipb-recv
  ip -n lr-ipb-gen addr add 198.18.0.1/24 dev ipb-g0; ip -n lr-ipb-gen link set ipb-g0 up
  ip -n lr-ipb-dut addr add 198.18.0.254/24 dev ipb-d0; ip -n lr-ipb-dut link set ipb-d0 up
  ip -n lr-ipb-dut addr add 198.19.0.254/24 dev ipb-d1; ip -n lr-ipb-dut link set ipb-d1 up
  ip -n lr-ipb-recv addr add 198.19.0.1/24 dev ipb-r1; ip -n lr-ipb-recv link set ipb-r1 up
  ip netns exec lr-ipb-dut sysctl -qw net.ipv4.ip_forward=1
  ip -n lr-ipb-gen route add 198.19.0.0/24 via 198.18.0.254
  ip -n lr-ipb-recv route add 198.18.0.0/24 via 198.19.0.254
  ip -n lr-ipb-gen neigh add 198.18.0.254 lladdr 02:00:00:00:00:02 dev ipb-g0
  ip -n lr-ipb-dut neigh add 198.18.0.1 lladdr 02:00:00:00:00:01 dev ipb-d0
  ip -n lr-ipb-dut neigh add 198.19.0.1 lladdr 02:00:00:00:00:04 dev ipb-d1
  ip -n lr-ipb-recv neigh add 198.19.0.254 lladdr 02:00:00:00:00:03 dev ipb-r1
  t1=$(ms); for s in gen dut recv; do ip netns del lr-ipb-$s; done
  ipt+=($(( t1 - t0 )))
done
py "
import statistics as s
a=[$(IFS=,; echo "${lr[*]}")]; b=[$(IFS=,; echo "${ipt[*]}")]
print(f'linerate lab up (whole process, wall): median {s.median(a)/1000:.1f} ms  min {min(a)/1000:.1f} ms')
print(f'ip script (17 ip commands):           median {s.median(b)/1000:.1f} ms  min {min(b)/1000:.1f} ms')
print(f'ratio ip/linerate: {s.median(b)/s.median(a):.2f}')"
"$L" lab up "$N" --topology router --rate 1G --delay 20ms --json | py "import json,sys; print('router with two emulated links, bring-up incl. emulator start:', round(json.load(sys.stdin)['bringup_ms'],1), 'ms')"
"$L" lab down "$N" >/dev/null

BUF='4096 131072 33554432'
for off in off on; do
  echo "== 1 Gbit/s, 20 ms one-way, limit 10000, offloads $off: one TCP stream, 10 s (first 2 s omitted)"
  "$L" lab up "$N" --rate 1G --delay 20ms --limit 10000 --offloads $off \
     --sysctl "gen:net.ipv4.tcp_wmem=$BUF" --sysctl "recv:net.ipv4.tcp_rmem=$BUF" >/dev/null
  "$L" lab exec "$N" recv -- iperf3 -s -D -1 >/dev/null; sleep 0.3
  "$L" lab exec "$N" gen -- iperf3 -c 198.18.0.2 -t 10 -O 2 -J > /tmp/$N-tcp.json
  py "
import json; d=json.load(open('/tmp/$N-tcp.json')); e=d['end']
r=e['sum_received']['bits_per_second']
print(f'  receiver {r/1e6:.1f} Mbit/s = {100*r/1e9:.1f} % of 1 Gbit/s (TCP payload; the most a 1500-byte MTU allows is 94.9 %)')
print('  per second:', [round(i['sum']['bits_per_second']/1e6) for i in d['intervals']])"
  "$L" lab show "$N" | grep counters || true
  "$L" lab down "$N" >/dev/null
done

echo "== RTT: TCP handshake probe (SYN -> SYN-ACK, no delayed ACKs) through 1 Gbit/s + 20 ms each way (configured RTT 40 ms)"
"$L" lab up "$N" --rate 1G --delay 20ms >/dev/null
( "$L" lab exec "$N" recv -- python3 -c "
import socket,time; s=socket.socket(); s.bind(('0.0.0.0',9)); s.listen(4096); time.sleep(30)" &) 2>/dev/null
sleep 0.5
"$L" lab exec "$N" gen -- python3 -c "
import socket,time
r=[]
for i in range(50):
    s=socket.socket(); t=time.perf_counter(); s.connect(('198.18.0.2',9)); r.append((time.perf_counter()-t)*1e3); s.close(); time.sleep(0.01)
r.sort(); m=r[len(r)//2]
print(f'  connect RTT over 50 probes: min {r[0]:.3f} ms, median {m:.3f} ms, max {r[-1]:.3f} ms; median error vs 40 ms: {100*(m-40)/40:+.2f} %')"
"$L" lab down "$N" >/dev/null
wait 2>/dev/null || true

echo "== loss accuracy: 1 % configured, UDP 20 Mbit/s of 1200-byte datagrams for 5 s"
"$L" lab up "$N" --loss l0:fwd=1% --offloads off >/dev/null
"$L" lab exec "$N" recv -- iperf3 -s -D -1 >/dev/null; sleep 0.3
"$L" lab exec "$N" gen -- iperf3 -c 198.18.0.2 -u -b 20M -l 1200 -t 5 -J > /tmp/$N-loss.json
py "
import json; e=json.load(open('/tmp/$N-loss.json'))['end']['sum']
print(f\"  iperf3: {e['lost_packets']} lost of {e['packets']} = {e['lost_percent']:.3f} %\")"
"$L" lab show "$N" --json | py "
import json,sys; d=json.load(sys.stdin)['emulators'][0]['counters']['fwd']
print(f\"  emulator counters: {d['lost']} lost of {d['rx_frames']} = {100*d['lost']/max(d['rx_frames'],1):.3f} %\")"
"$L" lab down "$N" >/dev/null

echo "== ceiling: 64-byte UDP flood for 5 s (2 iperf3 streams), direct veth vs through the emulator"
for mode in direct emulated; do
  if [ $mode = direct ]; then extra=(); else extra=(--delay 0ms); fi
  "$L" lab up "$N" --offloads off "${extra[@]}" >/dev/null
  "$L" lab exec "$N" recv -- iperf3 -s -D -1 >/dev/null; sleep 0.3
  "$L" lab exec "$N" gen -- iperf3 -c 198.18.0.2 -u -b 0 -l 64 -t 5 -P 2 -J > /tmp/$N-pps-$mode.json
  py "
import json; e=json.load(open('/tmp/$N-pps-$mode.json'))['end']['sum']
recv=e['packets']-e['lost_packets']; secs=e['seconds']
print(f'  $mode: sent {e[\"packets\"]/secs/1e3:.0f} kpps, received {recv/secs/1e3:.0f} kpps ({e[\"lost_percent\"]:.1f} % lost)')"
  [ $mode = emulated ] && "$L" lab show "$N" --json | py "
import json,sys; d=json.load(sys.stdin)['emulators'][0]['counters']['fwd']
print(f\"  emulator forwarded {d['tx_frames']/5/1e3:.0f} kpps (received {d['rx_frames']/5/1e3:.0f} kpps, errors {d['errors']}) with sender, receiver and emulator sharing 2 cores\")"
  "$L" lab down "$N" >/dev/null
done
rm -f /tmp/$N-*.json

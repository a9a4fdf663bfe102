#!/usr/bin/env bash
# Regenerates the report fixtures from a REAL experiment: Debian's iperf3 between two network
# namespaces joined by a veth pair whose egress is shaped by a token bucket (tbf), sweeping the
# bottleneck rate over 4 variants (100, 200, 400, 800 Mbit/s) × 3 repetitions, interleaved
# (A B C D A B C D …), 2 parallel streams, 3 s each, 0.5 s intervals. (This machine's kernel
# has no netem, so the experiment varies the rate rather than the delay.)
# Also writes rr.json: a request/response document whose latency histogram is built from 300
# real ping RTTs over the same veth (linerate's rr mode is not in this tree yet).
# Needs root, iproute2, iperf3, ping. Everything it creates is removed on exit.
set -euo pipefail
cd "$(dirname "$0")"
tag="lr-sr-$$"
a="$tag-a"; b="$tag-b"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  ip netns del "$a" 2>/dev/null || true; ip netns del "$b" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$a"; ip netns add "$b"
ip link add "lrsr$$a" type veth peer name "lrsr$$b"
ip link set "lrsr$$a" netns "$a"; ip link set "lrsr$$b" netns "$b"
ip -n "$a" addr add 198.18.0.1/30 dev "lrsr$$a"; ip -n "$b" addr add 198.18.0.2/30 dev "lrsr$$b"
ip -n "$a" link set "lrsr$$a" up; ip -n "$b" link set "lrsr$$b" up
ip -n "$a" link set lo up; ip -n "$b" link set lo up
ip netns exec "$b" iperf3 -s -B 198.18.0.2 -p 5201 >/dev/null 2>&1 &
server=$!
sleep 0.5
mkdir -p sweep
rm -f sweep/*.json
for rep in 1 2 3; do
  for rate in 100 200 400 800; do
    ip netns exec "$a" tc qdisc replace dev "lrsr$$a" root tbf rate "${rate}mbit" burst 256kb latency 20ms
    ip netns exec "$a" iperf3 -c 198.18.0.2 -p 5201 -t 3 -i 0.5 -P 2 -J > "sweep/rate$rate-r$rep.json"
    sleep 0.2
  done
done
ip netns exec "$a" tc qdisc del dev "lrsr$$a" root
ip netns exec "$a" ping -c 300 -i 0.01 -q 198.18.0.2 >/dev/null
ip netns exec "$a" ping -c 300 -i 0.01 198.18.0.2 | sed -n 's/.*time=\([0-9.]*\) ms/\1/p' > rtts.txt
python3 - <<'PY'
import json, math
rtts = sorted(float(x) * 1000 for x in open("rtts.txt"))  # µs
base = json.load(open("sweep/rate100-r1.json"))
start = dict(base["start"])
start["test_start"] = dict(start["test_start"], num_streams=1)
edges = [5 * 2 ** (i / 4) for i in range(0, 80)]
buckets = []
prev = 0.0
for e in edges:
    n = sum(1 for r in rtts if prev < r <= e)
    if n:
        buckets.append({"upper_us": round(e, 1), "count": n})
    prev = e
    if e > rtts[-1]:
        break
def pct(p):
    return rtts[min(len(rtts) - 1, math.ceil(p / 100 * len(rtts)) - 1)]
secs = 3.0
tps = len(rtts) / secs
intervals = []
for i in range(6):
    s = {"socket": 5, "start": i * 0.5, "end": (i + 1) * 0.5, "seconds": 0.5, "bytes": 64 * 50,
         "bits_per_second": 64 * 50 * 8 / 0.5, "omitted": False, "sender": True}
    intervals.append({"streams": [s], "sum": dict(s)})
summ = {"start": 0, "end": secs, "seconds": secs, "bytes": 64 * len(rtts),
        "bits_per_second": 64 * len(rtts) * 8 / secs, "sender": True}
doc = {"start": start, "intervals": intervals,
       "end": {"streams": [], "sum_sent": summ, "sum_received": dict(summ, sender=False)},
       "linerate": {"mode": "rr", "transactions_per_second": tps,
                    "latency": {"buckets": buckets, "mean_us": sum(rtts) / len(rtts),
                                "percentiles": {"p50": pct(50), "p90": pct(90), "p99": pct(99)}}}}
json.dump(doc, open("rr.json", "w"), indent=1)
PY
rm rtts.txt

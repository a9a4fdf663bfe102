#!/usr/bin/env bash
# Regenerates the iperf3 fixtures of the store/import tests from REAL iperf3 runs on loopback
# (Debian's iperf3 3.12). Debian's iperf3 has no --json-stream (added in 3.17), so
# tcp-stream.jsonl is tcp.json re-emitted line by line in the --json-stream event framing
# ({"event":"start"|"interval"|"end","data":…}).
set -euo pipefail
cd "$(dirname "$0")"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
iperf3 -s -B 127.0.0.1 -p "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server' EXIT
sleep 0.5
c() { iperf3 -c 127.0.0.1 -p "$port" -J "$@"; sleep 0.3; }
c -t 3 -b 400M > tcp.json
c -t 3 -P 2 -b 200M > tcp-p2.json
c -t 3 -u -b 20M -l 1200 > udp.json
c -t 2 -R -b 300M > reverse.json
c -t 2 --bidir -b 100M > bidir.json
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
iperf3 -c 127.0.0.1 -p "$closed" -J -t 1 > refused.json || true
python3 - <<'PY'
import json
d = json.load(open("tcp.json"))
with open("tcp-stream.jsonl", "w") as f:
    f.write(json.dumps({"event": "start", "data": d["start"]}) + "\n")
    for i in d["intervals"]:
        f.write(json.dumps({"event": "interval", "data": i}) + "\n")
    f.write(json.dumps({"event": "end", "data": d["end"]}) + "\n")
PY
# linerate-client-bidir.json is `linerate client 127.0.0.1 -p PORT -t 2 --bidir -b 30M --json`
# against this iperf3 server, from the traffic engine's first version (not regenerated here).

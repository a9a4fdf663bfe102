#!/usr/bin/env bash
# Regenerates these fixtures from REAL iperf3 runs on loopback (Debian's iperf3 3.12, which
# has no --json-stream: that option came in 3.17). Each run gets a one-off server
# (`iperf3 -s -1`) on a free port; every run lasts one second.
set -euo pipefail
cd "$(dirname "$0")"
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
run() {
  local out=$1 server_json=$2
  shift 2
  local port
  port=$(free_port)
  # shellcheck disable=SC2086 # $server_json is empty or one option
  iperf3 -s -1 $server_json -B 127.0.0.1 -p "$port" >/dev/null 2>&1 &
  local server=$!
  sleep 0.3
  iperf3 -c 127.0.0.1 -p "$port" -t 1 --json "$@" >"$out" || true
  wait "$server" || true
}
run tcp.json ""
run udp.json "" -u -b 10M
run reverse.json "" -R
run bidir.json "" --bidir
run tcp-p2.json "" -P 2
run udp-bidir-p2.json "" -u -b 5M --bidir -P 2
# The server's own document comes back in server_output_json when the server writes JSON (-J),
# and as server_output_text otherwise.
run server-output-text.json "" --get-server-output
run server-output-json.json -J --get-server-output
# The --json-stream framing of a real document (3.12 cannot write it itself).
python3 - <<'PY'
import json
d = json.load(open("udp-bidir-p2.json"))
with open("udp-bidir-p2-stream.jsonl", "w") as f:
    f.write(json.dumps({"event": "start", "data": d["start"]}) + "\n")
    for i in d["intervals"]:
        f.write(json.dumps({"event": "interval", "data": i}) + "\n")
    f.write(json.dumps({"event": "end", "data": d["end"]}) + "\n")
PY

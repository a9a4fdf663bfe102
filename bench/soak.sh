#!/usr/bin/env bash
# Soak of `linerate server` on loopback (issue 16, item 5): CLIENTS concurrent clients of mixed
# modes (TCP, TCP -R, UDP, UDP --bidir, rr, and iperf3 when installed) run back to back for
# MINUTES while a slowloris (python3, from 127.0.0.2) holds SLOWLORIS connections open, half
# idle and half with a partial cookie, reopening any the server closes (the handshake timeout
# is set longer than the run, so they are held throughout). Every SAMPLE seconds the
# server's RSS, threads and open descriptors are printed; once a period a client is killed with
# SIGKILL mid-test. At the end: clients completed/failed, refusals logged, and whether the
# server is back to its starting threads (no stuck test). Everything is bounded in time and
# rate (-b on every client) and stays on 127.0.0.0/8.
# Usage: bench/soak.sh BINARY [MINUTES (10)] [CLIENTS (50)] [SLOWLORIS (5000)] [SAMPLE (30)]
set -euo pipefail
BIN=${1:?linerate binary}; MIN=${2:-10}; CLIENTS=${3:-50}; HOLD=${4:-5000}; SAMPLE=${5:-30}
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 2; }
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
work=$(mktemp -d /tmp/linerate-soak.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" server -B 127.0.0.1 -p "$port" --max-tests 64 --max-tests-per-ip 64 \
  --max-pending $((HOLD + 1024)) --max-pending-per-ip $((HOLD + 64)) \
  --handshake-timeout $((MIN * 60 + 60))s --idle-timeout 10s --max-duration 1m \
  2>"$work/server.log" &
srv=$!; pids+=("$srv")
for _ in $(seq 100); do grep -qs "listening on" "$work/server.log" && break; sleep 0.1; done

sample() {
  local rss threads fds
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$srv/status")
  threads=$(ls "/proc/$srv/task" | wc -l)
  fds=$(ls "/proc/$srv/fd" | wc -l)
  printf "%6ss  rss %6s KiB  threads %4s  fds %6s  held %5s  %s\n" "$1" "$rss" "$threads" "$fds" "$(ss -Htn state established "( sport = :$port and dst 127.0.0.2 )" 2>/dev/null | wc -l)" "$2"
}
sample 0 "server alone"
read -r _ rss0 threads0 fds0 <<<"$(sample 0 x | awk '{print $1, $3, $6, $8}')"

end=$(( $(date +%s) + MIN * 60 ))
# The slowloris: holds HOLD connections from 127.0.0.2 until the end, reopening closed ones.
python3 - "$port" "$HOLD" "$end" >"$work/slowloris.log" 2>&1 <<'PY' &
import socket, sys, time, selectors
port, n, end = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
sel = selectors.DefaultSelector()
opened = 0
def one(i):
    global opened
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.setblocking(False)
    try:
        s.connect_ex(("127.0.0.1", port))
    except OSError:
        s.close(); return
    opened += 1
    sel.register(s, selectors.EVENT_READ, i)
    if i % 2:
        try: s.send(b"abcdefghijklmnopqrst")
        except OSError: pass
for i in range(n):
    one(i)
    if i % 100 == 99:
        # In waves, so the listen backlog (128) is not overrun before the server accepts.
        time.sleep(0.05)
while time.time() < end:
    for key, _ in sel.select(timeout=1):
        s = key.fileobj
        try: data = s.recv(64)
        except OSError: data = b""
        if not data:
            sel.unregister(s); s.close(); one(key.data)
print("slowloris opened", opened, "connections")
PY
pids+=($!)
sleep 5  # the slowloris is in place before the first client

modes=("-t 5 -b 20M" "-t 5 -b 20M -R" "-u -t 5 -b 5M" "-u -t 5 -b 5M --bidir" "--mode rr -t 5")
client_loop() {
  local i=$1 ok=0 bad=0 m
  while [ "$(date +%s)" -lt $((end - 8)) ]; do
    if [ $((i % 6)) = 5 ] && command -v iperf3 >/dev/null; then
      if timeout 30 iperf3 -c 127.0.0.1 -p "$port" -t 5 -b 20M >/dev/null 2>&1; then
        ok=$((ok + 1)); else bad=$((bad + 1)); fi
    else
      m=${modes[$((i % ${#modes[@]}))]}
      # shellcheck disable=SC2086
      if timeout 30 "$BIN" client 127.0.0.1 -p "$port" --no-store $m >/dev/null 2>>"$work/client.err"; then
        ok=$((ok + 1)); else bad=$((bad + 1)); fi
    fi
  done
  echo "$ok $bad" >"$work/client.$i"
}
for i in $(seq 0 $((CLIENTS - 1))); do client_loop "$i" & pids+=($!); done

t0=$(date +%s)
while [ "$(date +%s)" -lt "$end" ]; do
  sleep "$SAMPLE"
  # A client killed with SIGKILL one second into its test.
  "$BIN" client 127.0.0.1 -p "$port" --no-store -t 5 -b 20M >/dev/null 2>&1 & k=$!
  sleep 1; kill -9 "$k" 2>/dev/null || true; wait "$k" 2>/dev/null || true
  sample $(( $(date +%s) - t0 )) "under load"
done
for p in "${pids[@]:2}"; do wait "$p" 2>/dev/null || true; done
wait "${pids[1]}" 2>/dev/null || true
ok=0; bad=0
for f in "$work"/client.*; do [ -f "$f" ] && [ "${f##*.}" != err ] || continue
  read -r a b <"$f"; ok=$((ok + a)); bad=$((bad + b)); done
# The slowloris has closed its connections; killed clients' tests end within the idle timeout.
sleep 12
sample $(( $(date +%s) - t0 )) "after the load (the idle timeout passed)"
read -r _ rss1 threads1 fds1 <<<"$(sample 0 x | awk '{print $1, $3, $6, $8}')"
echo "clients completed: $ok, failed: $bad"
cat "$work/slowloris.log"
echo "tests started: $(grep -c 'test started' "$work/server.log" || true)," \
  "done: $(grep -c '\] done:' "$work/server.log" || true)," \
  "failed: $(grep -c 'test failed' "$work/server.log" || true)," \
  "warning lines (refusals and failures, rate-limited): $(grep -c 'warning' "$work/server.log" || true)"
echo "start: rss $rss0 KiB threads $threads0 fds $fds0; end: rss $rss1 KiB threads $threads1 fds $fds1"
if [ "$bad" -gt 0 ]; then
  echo "client errors (first 5 distinct):"; sort "$work/client.err" | uniq -c | sort -rn | head -5
fi
[ "$threads1" -le $((threads0 + 2)) ] || { echo "threads did not return to the start: stuck tests?" >&2; exit 1; }

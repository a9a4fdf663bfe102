#!/usr/bin/env bash
# bench/cost-profile.sh: where linerate's own CPU goes, per mode (issue 33 item 4).
# Samples every CPU with `linerate profile` while a loopback test runs (TCP bulk, UDP 64 B
# --no-gso pps), keeps only the stacks of processes named `linerate` (client and server;
# other users of a shared machine fall out), and splits their samples into user space,
# kernel copy (_copy_to_iter, _copy_from_iter, copy_user_*, memcpy in the kernel) and other
# kernel work (protocol, syscalls, scheduling), per thread function (send / recv).
# Root. Every run bounded (-t). Usage: bench/cost-profile.sh [SECONDS (default 4)]
set -euo pipefail
secs=${1:-4}
bin=${LINERATE:-target/release/linerate}
[ -x "$bin" ] || { echo "build first: cargo build --release (or set LINERATE)" >&2; exit 2; }
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
"$bin" server -B 127.0.0.1 -p "$port" --max-duration "$((secs + 20))s" >/dev/null 2>&1 & srv=$!
trap 'kill $srv 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 0.5
for mode in tcp udp; do
  extra=()
  [ "$mode" = udp ] && extra=(--mode pps -l 18 --no-gso)
  "$bin" client 127.0.0.1 -p "$port" -t "$((secs + 2))s" "${extra[@]}" --no-store >/dev/null 2>&1 & cl=$!
  sleep 1
  "$bin" profile -t "${secs}s" --frequency 499 --folded "$work/$mode.folded" >/dev/null 2>&1
  wait $cl
  python3 - "$mode" "$work/$mode.folded" <<'PY'
import sys
from collections import defaultdict
mode, path = sys.argv[1], sys.argv[2]
KERNEL = ("entry_SYSCALL", "do_syscall_64", "asm_", "handle_softirqs", "__do_softirq", "ret_from_fork")
COPY = ("_copy_to_iter", "_copy_from_iter", "copy_user", "rep_movs", "copy_page", "memcpy")
share = defaultdict(lambda: defaultdict(int))
for line in open(path):
    stack, _, n = line.rstrip().rpartition(" ")
    frames = stack.split(";")
    if frames[0] != "linerate":
        continue
    text = ";".join(frames[1:])
    role = ("recv" if "recv" in frames[1:3] or "recvmmsg" in text or "recvmsg" in text
            else "send" if "send" in frames[1:3] or "sendmmsg" in text or "sendmsg" in text
            else "other")
    if any(f.startswith(KERNEL) for f in frames):
        kind = "kernel copy" if any(f.startswith(COPY) for f in frames) else "kernel other"
    else:
        kind = "user"
    share[role][kind] += int(n)
for role in ("send", "recv", "other"):
    k = share[role]
    tot = sum(k.values())
    if not tot:
        continue
    parts = ", ".join(f"{kind} {k[kind] / tot * 100:.1f}%" for kind in ("user", "kernel copy", "kernel other"))
    print(f"| {mode} {role} | {tot} | {parts} |")
PY
done

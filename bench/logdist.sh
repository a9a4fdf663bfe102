#!/usr/bin/env bash
# Benchmark `linerate logdist` against mawk and gawk one-liners computing the same histogram
# (status 200, 100 ms bins up to 6 s plus an overflow bin) on the same generated nginx log,
# side by side, at two file sizes, with peak memory from /usr/bin/time.
#
#   bench/logdist.sh                 # 1000 MB and 5000 MB
#   SIZES_MB="200 1000" bench/logdist.sh
#   KEEP=1 DIR=/var/tmp/x bench/logdist.sh   # keep the generated logs
#   REPEAT=5 bench/logdist.sh                # best of 5 runs per tool (default 3)
#
# Each tool runs REPEAT times in turn and the best time is kept (the machine is shared and
# noisy; the best run is the one least disturbed), with the largest peak RSS.
#
# Needs: cargo, mawk, gawk (apt-get install mawk gawk), GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES_MB=${SIZES_MB:-"1000 5000"}
DIR=${DIR:-$(mktemp -d /tmp/lr-logdist-bench.XXXXXX)}
SEED_LINES=${SEED_LINES:-1000000}
REPEAT=${REPEAT:-3}
mkdir -p "$DIR"
cleanup() { [ -n "${KEEP:-}" ] || rm -rf "$DIR"; }
trap cleanup EXIT

for tool in mawk gawk /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is missing" >&2; exit 2; }
done

cargo build --release -p linerate >/dev/null 2>&1 || cargo build --release -p linerate
BIN=$PWD/target/release/linerate

# One million nginx combined lines with $request_time $upstream_response_time appended:
# 70 % uniform under 100 ms, 30 % exponential with a 0.8 s mean; 90 % status 200.
seed=$DIR/seed.log
if [ ! -s "$seed" ]; then
    mawk -v n="$SEED_LINES" 'BEGIN { srand(42); split("GET GET GET GET POST HEAD", m, " ");
      for (i = 0; i < n; i++) {
        if (rand() < 0.7) t = rand() * 0.1; else t = -log(1 - rand()) * 0.8;
        s = (rand() < 0.9) ? 200 : 404;
        printf "198.18.%d.%d - - [10/Oct/2026:13:%02d:%02d +0000] \"%s /static/img%d.jpg HTTP/1.1\" %d %d \"https://example.com/page%d\" \"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36\" %.3f %.3f\n",
          i % 250, i % 200, int(i / 60) % 60, i % 60, m[1 + int(rand() * 6)], i % 1000, s,
          2000 + i % 300000, i % 50, t, t * 0.9 } }' > "$seed"
fi
seed_bytes=$(stat -c %s "$seed")

# The histogram in awk: ms rounded from the decimal seconds, then 100 ms bins, 60 = overflow.
AWK_PROG='$9 == 200 { ms = int($(NF-1) * 1000 + 0.5); b = int(ms / 100); if (b > 60) b = 60; h[b]++; n++ }
END { for (i = 0; i <= 60; i++) printf "%d %d\n", i, h[i]; printf "n %d\n", n }'

measure() { # command... → prints "best_seconds peak_kb" and keeps stdout in $DIR/out
    local t best="" peak=0 s kb
    for _ in $(seq "$REPEAT"); do
        t=$( { /usr/bin/time -f "%e %M" "$@" > "$DIR/out"; } 2>&1 | tail -1 )
        read -r s kb <<< "$t"
        if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$s; fi
        [ "$kb" -gt "$peak" ] && peak=$kb
    done
    echo "$best $peak"
}

printf "%-10s %-12s %-26s %9s %14s %12s %8s\n" size lines tool seconds lines/s peak_RSS vs_mawk
for mb in $SIZES_MB; do
    copies=$(( (mb * 1000000 + seed_bytes - 1) / seed_bytes ))
    log=$DIR/access-${mb}MB.log
    : > "$log"
    for _ in $(seq "$copies"); do cat "$seed" >> "$log"; done
    lines=$(( copies * SEED_LINES ))
    size=$(( $(stat -c %s "$log") / 1000000 ))MB
    cat "$log" > /dev/null # warm the page cache for every tool alike

    read -r mawk_s mawk_kb < <(measure mawk "$AWK_PROG" "$log")
    mawk_first=$(awk '$1 == 0 { print $2 }' "$DIR/out"); mawk_n=$(awk '$1 == "n" { print $2 }' "$DIR/out")
    read -r gawk_s gawk_kb < <(measure gawk "$AWK_PROG" "$log")
    gawk_first=$(awk '$1 == 0 { print $2 }' "$DIR/out")
    read -r lr_s lr_kb < <(measure "$BIN" logdist "$log" --format nginx --status 200 --bin 100ms --max 6s)
    lr_line=$(grep -o 'under 100 ms ([0-9]* of [0-9]*)' "$DIR/out")
    read -r lr1_s lr1_kb < <(measure "$BIN" logdist "$log" --format nginx --status 200 --bin 100ms --max 6s --threads 1)
    read -r lra_s lra_kb < <(measure "$BIN" logdist "$log" --status 200)

    # the same histogram, or the comparison means nothing
    want="under 100 ms ($mawk_first of $mawk_n)"
    if [ "$lr_line" != "$want" ] || [ "$gawk_first" != "$mawk_first" ]; then
        echo "bench: results differ: linerate '$lr_line', mawk '$want', gawk first bin $gawk_first" >&2
        exit 1
    fi
    row() { # tool seconds kb
        awk -v size="$size" -v lines="$lines" -v tool="$1" -v s="$2" -v kb="$3" -v m="$mawk_s" \
            'BEGIN { printf "%-10s %-12d %-26s %9.2f %14.0f %10.1fMB %7.2fx\n", size, lines, tool, s, lines / s, kb / 1024, m / s }'
    }
    row "mawk" "$mawk_s" "$mawk_kb"
    row "gawk" "$gawk_s" "$gawk_kb"
    row "linerate (threads=auto)" "$lr_s" "$lr_kb"
    row "linerate --threads 1" "$lr1_s" "$lr1_kb"
    row "linerate (auto-detect)" "$lra_s" "$lra_kb"
    rm -f "$log"
done
echo "best of $REPEAT runs each; histograms agree (first bin and count checked against mawk and gawk); $(nproc) CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"

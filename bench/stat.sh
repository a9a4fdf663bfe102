#!/bin/sh
# Benchmark: `linerate stat` (release build) against Debian's `ministat` on files of
# 10 million values each, side by side in one run. Prints wall time and peak memory
# (/usr/bin/time -v) of each and the ratios linerate/ministat.
#
# Usage: bench/stat.sh [VALUES_PER_FILE] [FILES]     (defaults: 10000000 2)
# Needs: ministat, time (apt-get install -y ministat time), awk, cargo.
# Data goes to $BENCH_DIR (default: a temporary directory, removed at exit).
set -eu

values=${1:-10000000}
files=${2:-2}
root=$(cd "$(dirname "$0")/.." && pwd)

for tool in ministat /usr/bin/time awk; do
    command -v "$tool" >/dev/null 2>&1 || { echo "bench/stat.sh: $tool is missing (apt-get install -y ministat time gawk)" >&2; exit 2; }
done

if [ -n "${BENCH_DIR:-}" ]; then
    dir=$BENCH_DIR
    mkdir -p "$dir"
else
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT INT TERM
fi

echo "building linerate (release)..."
(cd "$root" && cargo build --release --locked -q -p linerate)
linerate="$root/target/release/linerate"

set --
i=0
while [ "$i" -lt "$files" ]; do
    file="$dir/set$i.txt"
    if [ ! -s "$file" ]; then
        echo "generating $file ($values values)..."
        # Latency-like data: a normal body with a long tail, 3 decimals, shifted per file.
        awk -v n="$values" -v seed="$((i + 1))" -v shift="$i" 'BEGIN {
            srand(seed);
            for (k = 0; k < n; k++) {
                u = rand(); v = rand();
                x = 100 + shift + 10 * sqrt(-2 * log(u + 1e-300)) * cos(6.283185307179586 * v);
                if (rand() < 0.01) x += 200 * rand();
                printf "%.3f\n", x;
            }
        }' > "$file"
    fi
    set -- "$@" "$file"
    i=$((i + 1))
done

measure() { # label, command...: prints "seconds max_rss_kib"
    label=$1
    shift
    /usr/bin/time -v "$@" > "$dir/$label.out" 2> "$dir/$label.time"
    awk -F': ' '
        /Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (k = 1; k <= n; k++) s = s * 60 + p[k]; t = s }
        /Maximum resident set size/ { m = $2 }
        END { printf "%.3f %d\n", t, m }' "$dir/$label.time"
}

echo "running on $files file(s) of $values values..."
set -- "$@"
m=$(measure ministat ministat "$@")
l=$(measure linerate "$linerate" stat "$@")
m2=$(measure ministat2 ministat "$@")
l2=$(measure linerate2 "$linerate" stat "$@")

if cmp -s "$dir/ministat.out" "$dir/linerate.out"; then same="identical"; else same="different (expected where Debian's 2015 output differs: even-n median, relative error)"; fi

echo "$m $m2 $l $l2" | awk -v same="$same" '{
    mt = ($1 < $3 ? $1 : $3); mm = $2;
    lt = ($5 < $7 ? $5 : $7); lm = $6;
    printf "\n%-22s %10s %14s\n", "", "time (s)", "peak RSS (MiB)";
    printf "%-22s %10.3f %14.1f\n", "ministat (Debian)", mt, mm / 1024;
    printf "%-22s %10.3f %14.1f\n", "linerate stat", lt, lm / 1024;
    printf "%-22s %10.2fx %13.2fx\n", "ratio linerate/ministat", lt / mt, lm / mm;
    printf "\n(best of 2 runs each, interleaved; outputs %s)\n", same;
}'

#!/usr/bin/env bash
# The redacting writer against many and long secrets: a check that declares N secrets of
# L characters (`::add-mask::` lines, as GitHub masks them) and then prints BYTES of
# text lines, through the tool, against the same output written with `cmd > file`, in
# one run. Every secret is also in the output once, so each is really searched for.
# Time should grow with the output, and stay flat as the secrets grow longer.
#
#   scripts/bench-secrets.sh            1 GiB of output (what BENCHMARKS.md reports)
#   scripts/bench-secrets.sh --quick    16 MiB, each figure once
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-data.sh
source scripts/bench-data.sh
need hyperfine hyperfine
[ -x /usr/bin/time ] || need time time

quick=false
[ "${1:-}" = "--quick" ] && quick=true
if $quick; then
    bytes=$((16 * 1024 * 1024)); runs="--runs 1 --warmup 0"
    shapes="0x0 1x10 1x100000 100x1000 10000x10"; quarter_shapes="0x0"
else
    bytes=$((1024 * 1024 * 1024)); runs="--warmup 1 --runs 3"
    shapes="0x0 1x10 1x1000 1x100000 100x10 100x1000 100x100000 10000x10 10000x100"
    quarter_shapes="0x0 1x100000 10000x10"
fi
cargo build --release --locked -q
bin="$PWD/target/release/cargo-verify-matrix"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The output: lines of 100 base64 columns (what a test run's words cost the scan for
# effectiveness is measured by scripts/bench.sh; here, the secrets'). A quarter of it
# too, for a few shapes: the cost grows with the output.
head -c $((bytes * 3 / 4)) /dev/urandom | base64 -w 100 | head -c "$bytes" >"$work/full.txt" || true
[ "$(stat -c %s "$work/full.txt")" = "$bytes" ] || { echo "error: the output is short" >&2; exit 1; }
head -c $((bytes / 4)) "$work/full.txt" >"$work/quarter.txt"

echo "| output | secrets | characters each | cmd > file | cargo-verify-matrix run | throughput | peak RSS |"
echo "|---|---|---|---|---|---|---|"
measure() {
    local lines=$1 shape=$2
    local count=${shape%x*} length=${shape#*x}
    # N distinct secrets of L characters: declared, then each printed once.
    python3 - "$count" "$length" "$work/masks.txt" <<'PY'
import sys, hashlib
count, length, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open(out, "w") as f:
    secrets = []
    for i in range(count):
        seed = hashlib.sha256(str(i).encode()).hexdigest()
        secrets.append((seed * (length // len(seed) + 1))[:length])
    for s in secrets:
        f.write(f"::add-mask::{s}\n")
    for s in secrets:
        f.write(f"secret {s} here\n")
PY
    cat >"$work/verify-matrix.yml" <<YAML
version: 1
environments: [{name: bench}]
checks:
  - id: loud
    run: cat $work/masks.txt $lines
    timeout: 30m
YAML
    ( cd "$work" && /usr/bin/time -v "$bin" -q run --out out >/dev/null 2>"$work/time.txt" ) \
        || { cat "$work/time.txt"; exit 1; }
    local rss_kb first
    rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time.txt")
    # Not one secret reached the log.
    first=$(sed -n '1s/^::add-mask:://p' "$work/masks.txt")
    if [ -n "$first" ] && grep -qF -- "$first" "$work/out/logs/bench/loud.log"; then
        echo "error: a secret reached the log ($shape)" >&2; exit 1
    fi
    hyperfine $runs -N --export-json "$work/h.json" \
        -n "cmd > file" "bash --noprofile --norc -eo pipefail -c 'cat $work/masks.txt $lines > $work/direct.log'" \
        -n "run" "$bin -q run --manifest $work/verify-matrix.yml --out $work/out" >/dev/null
    python3 - "$work/h.json" "$count" "$length" "$rss_kb" "$(stat -c %s "$lines")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
base, tool = r[0]["mean"], r[1]["mean"]
size = int(sys.argv[5])
print(f"| {size / 2**20:,.0f} MiB | {int(sys.argv[2]):,} | {int(sys.argv[3]):,} | {base:.2f} s | {tool:.2f} s | {base / tool:.2f}× | {int(sys.argv[4]) // 1024} MiB |")
PY
}
for shape in $shapes; do
    measure "$work/full.txt" "$shape"
done
for shape in $quarter_shapes; do
    measure "$work/quarter.txt" "$shape"
done

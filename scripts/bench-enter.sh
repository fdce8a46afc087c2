#!/usr/bin/env bash
# Entering an environment, measured (BENCHMARKS.md "Entering an environment"), each
# against the host in the same run (hyperfine):
#
# 1. The cost per check: N `true` checks run on the host, and the same N run in an
#    environment entered through bubblewrap (the tool running itself inside), for two
#    sizes N: the difference's slope is the cost per check inside, its intercept the
#    cost of entering once.
# 2. `run --all` of a two-environment manifest (the host and the bwrap sandbox, one check
#    each) against `run` of the host alone.
#
#   scripts/bench-enter.sh           the figures BENCHMARKS.md reports
#   scripts/bench-enter.sh --quick   a smoke run: each command once
set -euo pipefail
cd "$(dirname "$0")/.."
quick=false
[ "${1:-}" = "--quick" ] && quick=true
if $quick; then
    sizes="5 10"; runs="--runs 1 --warmup 0"
else
    sizes="20 200"; runs="--warmup 2 --min-runs 10"
fi
command -v hyperfine >/dev/null || { echo "error: hyperfine is needed (scripts/bench.sh installs it)" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "error: bubblewrap (bwrap) is needed" >&2; exit 1; }
cargo build --release --locked -q
bin="$PWD/target/release/cargo-verify-matrix"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
way_in='[bwrap, --ro-bind, /, /, --tmpfs, /tmp, --bind, "{repo}", "{repo}", --dev, /dev, --proc, /proc, --die-with-parent, --]'

echo "## the cost of entering: N \`true\` checks, host vs bwrap"
echo "| checks | host (ms) | entered (ms) | difference (ms) |"
echo "|---|---|---|---|"
for n in $sizes; do
    dir="$work/n$n"
    mkdir -p "$dir"
    {
        echo "version: 1"
        echo "environments:"
        echo "  - name: host"
        echo "  - name: sandbox"
        echo "    enter: { command: $way_in }"
        echo "checks:"
        for i in $(seq 1 "$n"); do echo "  - { id: c$i, run: 'true' }"; done
    } >"$dir/verify-matrix.yml"
    (cd "$dir" && hyperfine $runs -N --export-json "$work/n$n.json" \
        -n host "$bin -q run --env host --out out-host" \
        -n entered "$bin -q run --env sandbox --out out-sandbox" >/dev/null)
    python3 - "$work/n$n.json" "$n" <<'PY'
import json, sys
host, entered = json.load(open(sys.argv[1]))["results"]
h, e = host["mean"] * 1000, entered["mean"] * 1000
print(f"| {sys.argv[2]} | {h:.1f} ± {(host['stddev'] or 0) * 1000:.1f} | {e:.1f} ± {(entered['stddev'] or 0) * 1000:.1f} | {e - h:.1f} |")
PY
done
python3 - $(for n in $sizes; do echo "$work/n$n.json $n"; done) <<'PY'
import json, sys
args = sys.argv[1:]
(f1, n1), (f2, n2) = (args[0], int(args[1])), (args[2], int(args[3]))
def diff(f):
    host, entered = json.load(open(f))["results"]
    return (entered["mean"] - host["mean"]) * 1000
d1, d2 = diff(f1), diff(f2)
slope = (d2 - d1) / (n2 - n1)
print(f"\nper check inside: {slope:.3f} ms more than on the host; entering once: {d1 - slope * n1:.1f} ms")
PY

echo
echo "## run --all: the host and the bwrap sandbox, one check each"
dir="$work/all"
mkdir -p "$dir"
cat >"$dir/verify-matrix.yml" <<YAML
version: 1
environments:
  - name: host
  - name: sandbox
    enter: { command: $way_in }
checks:
  - { id: one, run: 'true' }
YAML
(cd "$dir" && hyperfine $runs -N -i \
    -n "run --env host" "$bin -q run --env host --out out-1" \
    -n "run --all" "$bin -q run --all --out out-2" | grep -E "Time|±|run --")

#!/usr/bin/env bash
# Entering an environment, measured (BENCHMARKS.md "Entering an environment"), each
# against the host in the same run (hyperfine):
#
# 1. The cost per check: N `true` checks run on the host, and the same N run in an
#    environment entered through bubblewrap over this machine's root (`enter.command`)
#    and in a container (`enter.container`, engine podman) — the tool running itself
#    inside — for two sizes N: each difference's slope is the cost per check inside, its
#    intercept the cost of entering once. Podman cannot start containers on machines
#    like this one (crun is refused its rlimits in an unprivileged container), so the
#    container is run by the tests' stand-in engine: podman's words, bubblewrap over a
#    debootstrapped Debian 12 (tests/fixtures/enter/standin/podman).
# 2. `run --all` of a two-environment manifest (the host and that Debian root, one check
#    each) against `run` of the host alone: the time to the whole matrix.
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
# shellcheck source=scripts/tools.sh
. scripts/tools.sh
debian_root
cargo build --release --locked -q
bin="$PWD/target/release/cargo-verify-matrix"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
way_in='[bwrap, --ro-bind, /, /, --tmpfs, /tmp, --bind, "{repo}", "{repo}", --dev, /dev, --proc, /proc, --die-with-parent, --]'
# The stand-in engine, first on PATH, and the one image it knows.
export PATH="$PWD/tests/fixtures/enter/standin:$PATH"
export STANDIN_IMAGES="localhost/debian:12=$VERIFY_MATRIX_ROOTFS" STANDIN_STATE="$work/standin"

echo "## the cost of entering: N \`true\` checks, host vs bwrap vs a container"
echo "| checks | host (ms) | bwrap (ms) | container (ms) | the engine alone, /bin/true (ms) | bwrap − host (ms) | container − engine alone − host (ms) |"
echo "|---|---|---|---|---|---|---|"
for n in $sizes; do
    dir="$work/n$n"
    mkdir -p "$dir"
    {
        echo "version: 1"
        echo "environments:"
        echo "  - name: host"
        echo "  - name: sandbox"
        echo "    enter: { command: $way_in }"
        echo "  - name: debian12"
        echo "    container: localhost/debian:12"
        echo "    enter: { container: { engine: podman } }"
        echo "checks:"
        for i in $(seq 1 "$n"); do echo "  - { id: c$i, run: 'true' }"; done
    } >"$dir/verify-matrix.yml"
    (cd "$dir" && hyperfine $runs -N --export-json "$work/n$n.json" \
        -n host "$bin -q run --env host --out out-host" \
        -n bwrap "$bin -q run --env sandbox --out out-sandbox" \
        -n container "$bin -q run --env debian12 --out out-debian12" \
        -n "engine alone" "podman run --rm localhost/debian:12 /bin/true" >/dev/null)
    python3 - "$work/n$n.json" "$n" <<'PY'
import json, sys
host, bwrap, container, engine = json.load(open(sys.argv[1]))["results"]
ms = lambda r: f"{r['mean'] * 1000:.1f} ± {(r['stddev'] or 0) * 1000:.1f}"
h = host["mean"] * 1000
e = engine["mean"] * 1000
print(f"| {sys.argv[2]} | {ms(host)} | {ms(bwrap)} | {ms(container)} | {ms(engine)} | {bwrap['mean'] * 1000 - h:.1f} | {container['mean'] * 1000 - h - e:.1f} |")
PY
done
echo
python3 - $(for n in $sizes; do echo "$work/n$n.json $n"; done) <<'PY'
import json, sys
args = sys.argv[1:]
(f1, n1), (f2, n2) = (args[0], int(args[1])), (args[2], int(args[3]))
def diff(f, way):
    results = json.load(open(f))["results"]
    # A container's difference less the engine's own start (the stand-in's).
    engine = results[3]["mean"] if way == 2 else 0
    return (results[way]["mean"] - results[0]["mean"] - engine) * 1000
for way, name in ((1, "bwrap"), (2, "container")):
    d1, d2 = diff(f1, way), diff(f2, way)
    slope = (d2 - d1) / (n2 - n1)
    print(f"{name}: per check inside {slope:.3f} ms more than on the host; entering once {d1 - slope * n1:.1f} ms")
PY

echo
echo "## run --all: the host and the Debian root (a container), one check each"
dir="$work/all"
mkdir -p "$dir"
cat >"$dir/verify-matrix.yml" <<YAML
version: 1
environments:
  - name: host
  - name: debian12
    container: localhost/debian:12
    enter: { container: { engine: podman } }
checks:
  - { id: one, run: 'true' }
YAML
(cd "$dir" && hyperfine $runs -N -i \
    -n "run --env host" "$bin -q run --env host --out out-1" \
    -n "run --all" "$bin -q run --all --out out-2" | grep -E "Time|±|run --")

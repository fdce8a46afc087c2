#!/usr/bin/env bash
# The figures a restructuring must not make worse, for this tree and an earlier revision,
# measured in the same run: per-check overhead, the effectiveness scan of a long test
# log, and merge + render at scale. Both release binaries are built from clean worktrees
# sharing one target folder (the dependencies are built once).
#
#   scripts/bench-against.sh REV           full figures
#   scripts/bench-against.sh REV --quick   a smoke run: tiny sizes, one run each
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-data.sh
source scripts/bench-data.sh

rev=${1:?usage: scripts/bench-against.sh REV [--quick]}
quick=false
[ "${2:-}" = "--quick" ] && quick=true
command -v hyperfine >/dev/null || { echo "error: hyperfine is needed (scripts/bench.sh installs it)" >&2; exit 1; }

work=$(mktemp -d)
trap 'git worktree remove --force "$work/old" >/dev/null 2>&1 || true; git worktree remove --force "$work/new" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
target=${BENCH_TARGET_DIR:-$PWD/target/bench-against}
build() { # REV NAME: the release binary of REV, as $work/NAME
    git worktree add --detach -q "$work/$2-tree" "$1"
    (cd "$work/$2-tree" && CARGO_TARGET_DIR="$target" cargo build --release --locked -q)
    cp "$target/release/cargo-verify-matrix" "$work/$2"
    git worktree remove --force "$work/$2-tree"
}
build "$rev" old
build HEAD new
old="$work/old"; new="$work/new"
echo "old: $(git rev-parse --short "$rev") $("$old" --version)"
echo "new: $(git rev-parse --short HEAD) $("$new" --version)"

if $quick; then
    checks=10; envs=5; lines=20000; runs="--runs 1 --warmup 0"
    curve_sizes="10 20"; curve_runs="--runs 1"
else
    checks=200; envs=100; lines=2000000; runs="--warmup 2 --min-runs 10"
    curve_sizes="200 1000 3000"; curve_runs="--warmup 1 --runs 3"
fi

echo
echo "## per-check overhead: $checks sequential \`true\` checks"
many_true_checks "$work/many" "$checks"
hyperfine $runs -N --export-json "$work/overhead.json" --export-markdown "$work/overhead.md" \
    -n "bash -c true, $checks times" "bash $work/many/loop.sh" \
    -n "old run ($checks checks)" "$old -q run --manifest $work/many/verify-matrix.yml --out $work/many/old" \
    -n "new run ($checks checks)" "$new -q run --manifest $work/many/verify-matrix.yml --out $work/many/new" >/dev/null
cat "$work/overhead.md"
python3 - "$work/overhead.json" "$checks" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))["results"]
n = int(sys.argv[2])
base, old, new = (r["mean"] for r in data)
print(f"overhead per check: old {(old - base) / n * 1000:.2f} ms, new {(new - base) / n * 1000:.2f} ms; new / old run time {new / old:.3f}")
PY
# hyperfine runs one command's runs, then the next's: on a shared machine a slow spell
# lands on one of them. The same three, interleaved run by run, medians compared:
python3 - "$work" "$old" "$new" "$checks" "$quick" <<'PY'
import statistics, subprocess, sys, time
work, old, new, n, quick = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "true"
manifest = f"{work}/many/verify-matrix.yml"
commands = {
    "base": ["bash", f"{work}/many/loop.sh"],
    "old": [old, "-q", "run", "--manifest", manifest, "--out", f"{work}/many/old"],
    "new": [new, "-q", "run", "--manifest", manifest, "--out", f"{work}/many/new"],
}
times = {name: [] for name in commands}
for _ in range(1 if quick else 21):
    for name, argv in commands.items():
        started = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times[name].append(time.perf_counter() - started)
median = {name: statistics.median(t) for name, t in times.items()}
per = {name: (median[name] - median["base"]) / n * 1000 for name in ("old", "new")}
print(f"interleaved medians: base {median['base'] * 1000:.1f} ms, old {median['old'] * 1000:.1f} ms, new {median['new'] * 1000:.1f} ms; "
      f"overhead per check: old {per['old']:.2f} ms, new {per['new']:.2f} ms; new / old run time {median['new'] / median['old']:.3f}")
PY

echo
echo "## per-check cost as the checks grow: sequential \`true\` checks"
per_check_curve "$old" "$new"

echo
echo "## a test gate whose log is $lines lines of \`cargo test\` output (the effectiveness scan)"
mkdir -p "$work/log"
python3 - "$work/log/test.log" "$lines" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    i = 0
    while i < n:
        f.write("   Compiling crate v0.1.0 (/src/crate)\nrunning 200 tests\n")
        for t in range(200):
            f.write(f"test module::case_{t} ... ok\n")
        f.write("\ntest result: ok. 200 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.50s\n\n")
        i += 205
PY
cat >"$work/log/verify-matrix.yml" <<YAML
version: 1
environments: [{name: bench}]
checks:
  - { id: tests, test: 'cat $work/log/test.log' }
YAML
hyperfine $runs -N --export-json "$work/scan.json" --export-markdown "$work/scan.md" \
    -n "cat > file" "bash --noprofile --norc -c 'cat $work/log/test.log > $work/log/direct.log'" \
    -n "old run" "$old -q run --manifest $work/log/verify-matrix.yml --out $work/log/old" \
    -n "new run" "$new -q run --manifest $work/log/verify-matrix.yml --out $work/log/new" >/dev/null
cat "$work/scan.md"
python3 - "$work/scan.json" <<'PY'
import json, sys
base, old, new = (r["mean"] for r in json.load(open(sys.argv[1]))["results"])
print(f"new / old: {new / old:.3f}")
PY

echo
echo "## merge + render: $envs environments × $checks checks, one result file each"
wide_results "$work/wide" "$old" "$envs" "$checks"
cd "$work/wide"
hyperfine $runs -N -i --export-json "$work/merge.json" --export-markdown "$work/merge.md" \
    -n "old merge --format markdown" "$old -q merge --out old.json --format markdown artifacts" \
    -n "new merge --format markdown" "$new -q merge --out new.json --format markdown artifacts" >/dev/null
cat "$work/merge.md"
python3 - "$work/merge.json" <<'PY'
import json, sys
old, new = (r["mean"] for r in json.load(open(sys.argv[1]))["results"])
print(f"new / old: {new / old:.3f}")
PY

# Instructions are repeatable where wall time on a shared machine is not: the same
# merge under callgrind, when valgrind is there.
if command -v valgrind >/dev/null; then
    echo
    echo "## merge + render, instructions (callgrind)"
    for which in old new; do
        bin="$work/$which"
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" -q merge --out "$which-cg.json" --format markdown artifacts \
            >/dev/null 2>"$work/$which-cg.txt" || true
        awk -v w="$which" '/Collected :/ {print w ": " $4 " instructions"}' "$work/$which-cg.txt"
    done
fi

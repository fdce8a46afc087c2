#!/usr/bin/env bash
# Shards, measured (BENCHMARKS.md "Shards"):
#
# 1. Balance: a generated suite of 400 tests with skewed durations (a few long tests,
#    many short ones; Pareto-distributed, seeded) split four ways, each shard run at once
#    as four runners would, by a stand-in runner that sleeps each of its tests' time and
#    writes a JUnit report. First an equal-count split (no history yet), then — after a
#    whole run recorded every test's duration in the history — the timing split, in the
#    same run: each as the slowest shard's time over the mean shard's (1.0 is perfect).
# 2. Merge, against the unsharded 256 environments × 1,000 checks in the same run (wall
#    time, peak RSS): 256 environments × 4 shards holding 1,000 results each (250 checks
#    split four ways: the same results in four times the files), and 256 × 4 shards ×
#    1,000 checks every one split four ways (1,024 files, four times the results).
#
#   scripts/bench-shards.sh           the figures BENCHMARKS.md reports
#   scripts/bench-shards.sh --quick   a smoke run: a short suite, a small matrix
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-data.sh
source scripts/bench-data.sh

quick=false
[ "${1:-}" = "--quick" ] && quick=true
if $quick; then
    suite_seconds=2; tests=100; envs=8; checks=50; reps=1
else
    suite_seconds=24; tests=400; envs=256; checks=1000; reps=3
fi
[ -x /usr/bin/time ] || { echo "error: GNU time (/usr/bin/time) is needed" >&2; exit 1; }

cargo build --release --locked -q
bin="$PWD/target/release/cargo-verify-matrix"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "## balance: $tests tests, ${suite_seconds}s in all, skewed, 4 shards"
suite="$work/suite"
mkdir -p "$suite"
git -C "$suite" init -q
cat >"$suite/runner.py" <<'PY'
"""A test runner stand-in: `--list` prints the suite's test ids; given a file of ids,
it sleeps each one's time (all at once) and writes junit.xml."""
import random, sys, time
n, total = int(sys.argv[1]), float(sys.argv[2])
rng = random.Random(7)
raw = [rng.paretovariate(1.2) for _ in range(n)]
scale = total / sum(raw)
durations = {f"tests/t{i:04d}.py::test_{i:04d}": d * scale for i, d in enumerate(raw)}
if sys.argv[3] == "--list":
    print("\n".join(durations))
    sys.exit(0)
ids = [line.strip() for line in open(sys.argv[3]) if line.strip()]
time.sleep(sum(durations[i] for i in ids))
with open("junit.xml", "w") as f:
    f.write(f'<testsuites><testsuite name="suite" tests="{len(ids)}">\n')
    for i in ids:
        path, name = i.split("::")
        classname = path[:-3].replace("/", ".")
        f.write(f'<testcase classname="{classname}" name="{name}" time="{durations[i]:.3f}"/>\n')
    f.write("</testsuite></testsuites>\n")
print(f"{len(ids)} tests")
PY
cat >"$suite/verify-matrix.yml" <<YAML
version: 1
environments:
  - name: linux
    shards: 4
checks:
  - id: unit
    test: python3 runner.py $tests $suite_seconds {tests_file}
    split: timing
    list: python3 runner.py $tests $suite_seconds --list
    reports: junit.xml
YAML

# shards OUT: the four shards at once; each shard's check time (ms), one per line.
shards() {
    local out=$1
    for k in 1 2 3 4; do
        (cd "$suite" && "$bin" -q run --shard "$k/4" --out "$out/$k" >/dev/null) &
    done
    wait
    for k in 1 2 3 4; do
        jq '.checks | (.columns | index("command_id")) as $id | (.columns | index("duration_ms")) as $ms | .rows[] | select(.[$id] == "unit") | .[$ms]' "$suite/$out/$k/verify-matrix-linux@${k}of4.json"
    done
}

# balance LABEL MS...: the slowest shard over the mean shard.
balance() {
    python3 - "$@" <<'PY'
import sys
label, times = sys.argv[1], [int(t) for t in sys.argv[2:]]
mean = sum(times) / len(times)
print(f"| {label} | {' / '.join(f'{t / 1000:.2f}' for t in times)} | {max(times) / 1000:.2f} | {max(times) / mean:.3f} |")
PY
}

echo "| split | each shard (s) | slowest (s) | slowest ÷ mean |"
echo "|---|---|---|---|"
# shellcheck disable=SC2046
balance "equal count (no history)" $(shards equal)
(cd "$suite" && "$bin" -q run --out whole >/dev/null && "$bin" -q merge --out whole.json whole >/dev/null \
    && "$bin" -q history add whole.json >/dev/null)
# shellcheck disable=SC2046
balance "by the history's timings" $(shards timed)

echo
echo "## merge: $envs environments × $checks checks, unsharded and in 4 shards"
# sharded_results DIR CHECKS: the matrix of wide_results with CHECKS checks, every
# environment split in 4 and every check taking its slice; one real run of each shard of
# the first environment, the others copies of it under their own names.
sharded_results() {
    local dir=$1 checks=$2
    mkdir -p "$dir"
    {
        echo "version: 1"
        echo "environments:"
        for e in $(seq -w 1 "$envs"); do echo "  - { name: e$e, shards: 4 }"; done
        echo "checks:"
        for i in $(seq 1 "$checks"); do
            if [ $((i % 100)) = 7 ]; then
                echo "  - { id: c$i, run: 'seq 1 200; test {shard} != 2' }"
            else
                echo "  - { id: c$i, run: 'true {shard}' }"
            fi
        done
    } >"$dir/verify-matrix.yml"
    local first
    first=$(printf "e%0${#envs}d" 1)
    for k in 1 2 3 4; do
        ( cd "$dir" && "$bin" -q run --env "$first" --shard "$k/4" --out "artifacts/$first@${k}of4" >/dev/null ) || true
    done
    PYTHONPATH="$scripts_dir" python3 - "$dir/artifacts" "$first" "$envs" <<'PY'
import os, shutil, sys
import partial_result
root, first, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
width = len(str(n))
for k in range(1, 5):
    stem = f"{first}@{k}of4"
    src = os.path.join(root, stem)
    result = partial_result.load(os.path.join(src, f"verify-matrix-{stem}.json"))
    for i in range(2, n + 1):
        env = f"e{i:0{width}d}"
        dst = os.path.join(root, f"{env}@{k}of4")
        shutil.copytree(os.path.join(src, "logs", stem), os.path.join(dst, "logs", f"{env}@{k}of4"))
        result["environment"] = env
        for check in result["checks"]:
            check["environment"] = env
            check["log_path"] = f"logs/{env}@{k}of4/{check['command_id']}.log"
        partial_result.dump(result, os.path.join(dst, f"verify-matrix-{env}@{k}of4.json"))
PY
}
wide_results "$work/whole" "$bin" "$envs" "$checks"
sharded_results "$work/quarters" $((checks / 4))
sharded_results "$work/sharded" "$checks"

# measure DIR LABEL: the median wall time of $reps merges, and the highest peak RSS.
measure() {
    local dir=$1 label=$2 walls=() peak=0
    for _ in $(seq "$reps"); do
        /usr/bin/time -f "%e %M" -o "$work/time" "$bin" -q merge --manifest "$dir/verify-matrix.yml" \
            --out "$work/report.json" "$dir/artifacts" >/dev/null 2>&1 || verdict $? \
            || { echo "error: merge of $dir gave no verdict" >&2; cat "$work/time" >&2; exit 1; }
        # (GNU time says first when the merge exited non-zero: the figures are last.)
        read -r wall rss < <(tail -n 1 "$work/time")
        walls+=("$wall")
        [ "$rss" -gt "$peak" ] && peak=$rss
    done
    local median
    median=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(((reps + 1) / 2))p")
    echo "| $label | $(find "$dir/artifacts" -name 'verify-matrix-*.json' | wc -l) | $median | $((peak / 1024)) |"
    echo "$median $peak" >"$work/$(basename "$dir").measure"
}
echo "| matrix | result files | wall (s, median of $reps) | peak RSS (MiB) |"
echo "|---|---|---|---|"
measure "$work/whole" "$envs × $checks, unsharded (the baseline)"
measure "$work/quarters" "$envs × 4 shards × $((checks / 4)) checks ($checks results per environment)"
measure "$work/sharded" "$envs × 4 shards × $checks checks ($((checks * 4)) results per environment)"
python3 - "$work/whole.measure" "$work/quarters.measure" "$work/sharded.measure" <<'PY'
import os, sys
(w0, m0), (w1, m1), (w2, m2) = [map(float, open(p).read().split()) for p in sys.argv[1:4]]
print(f"\nthe same results in 4 shards ÷ unsharded: wall {w1 / max(w0, 0.01):.2f}×, peak RSS {m1 / m0:.2f}× (budget 1.5×)")
print(f"4 times the results in 4 shards ÷ unsharded: wall {w2 / max(w0, 0.01):.2f}×, peak RSS {m2 / m0:.2f}×")
# Beside the other budgets in scripts/bench.sh's closing table, when it asks for them.
budgets = os.environ.get("BENCH_BUDGETS")
if budgets:
    with open(budgets, "a") as out:
        for what, base, measured, unit in (
            ("wall", w0, w2, "s"),
            ("peak RSS", m0 / 1024, m2 / 1024, "MiB"),
        ):
            ratio = measured / max(base, 0.01)
            shown = (lambda v: f"{v:.2f} s") if unit == "s" else (lambda v: f"{v:.0f} MiB")
            out.write(
                f"| merge, every check split four ways (4× the results), {what} "
                f"(baseline: the unsharded merge) | {shown(base)} | {shown(measured)} | "
                f"{ratio:.2f}× | ≤ 1.5× | {'yes' if ratio <= 1.5 else 'no'} |\n"
            )
PY

#!/usr/bin/env bash
# The history's size and speed as it grows: runs of two shapes of report — 100 checks ×
# 3 environments (300 pairs, no per-test rows), and one check whose report lists 10,000
# tests — imported into a new database N at a time, then `history show` and `history
# prune` (to the default retention: 200 runs or 90 days) timed against sqlite3 running
# the same work (the floor: SQLite itself). Last, what the Actions cache of the database
# costs per job at the default retention: its size, and its zstd archive's.
#
#   scripts/bench-history.sh            100, 1,000 and 10,000 runs (10,000-test runs: 100
#                                       and 1,000)
#   scripts/bench-history.sh --health   only the per-test health (`history tests`) table
#   scripts/bench-history.sh --quick    20 runs of each, the tests report 1,000 tests
#                                       (the script keeps running; no figure to quote)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-data.sh
source scripts/bench-data.sh
need hyperfine hyperfine
need sqlite3 sqlite3
need zstd zstd

quick=false
health_only=false
[ "${1:-}" = "--quick" ] && quick=true
[ "${1:-}" = "--health" ] && health_only=true
if $quick; then
    wide_sizes="20"; tests_sizes="20"; tests_each=1000; cached=20
else
    wide_sizes="100 1000 10000"; tests_sizes="100 1000"; tests_each=10000; cached=200
fi
cargo build --release --locked -q
bin="$PWD/target/release/cargo-verify-matrix"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One real report of each shape, made by the binary.
make_report() { # folder checks envs tests
    local dir=$1 checks=$2 envs=$3 tests=$4
    mkdir -p "$dir"
    (
        cd "$dir"
        git init -q .
        python3 - "$checks" "$envs" "$tests" <<'PY'
import sys
checks, envs, tests = map(int, sys.argv[1:])
lines = ["version: 1", "environments: [" + ", ".join(f"{{name: e{i}}}" for i in range(envs)) + "]", "checks:"]
if tests:
    cases = "".join(f'<testcase classname="suite{i // 100}" name="test_{i}" time="0.01"/>' for i in range(tests))
    open("fixture.xml", "w").write(f'<testsuite name="s">{cases}</testsuite>')
    lines.append("  - { id: unit, test: 'cp fixture.xml junit.xml', reports: junit.xml }")
for i in range(checks - (1 if tests else 0)):
    lines.append(f"  - {{ id: c{i:03d}, run: 'true' }}")
open("verify-matrix.yml", "w").write("\n".join(lines) + "\n")
PY
        for e in $(seq 0 $((envs - 1))); do
            "$bin" -q run --env "e$e" --out "results/e$e" >/dev/null || true
        done
        "$bin" -q merge --out report.json results >/dev/null || true
    )
}
make_report "$work/wide" 100 3 0
make_report "$work/tests" 1 1 "$tests_each"

# `count` runs of `report`, each its own workflow run (run id, commit), spread one a
# day back from today, imported `batch` at a time (`--keep-runs 0`: nothing pruned).
import() { # report db count
    local report=$1 db=$2 count=$3 batch=500 from=0
    rm -f "$db" "$db-wal" "$db-shm"
    while [ "$from" -lt "$count" ]; do
        local to=$((from + batch < count ? from + batch : count))
        rm -rf "$work/runs" && mkdir "$work/runs"
        python3 - "$report" "$from" "$to" "$work/runs" <<'PY'
import datetime, json, sys
report = json.load(open(sys.argv[1]))
now = datetime.datetime.now(datetime.timezone.utc)
for run in range(int(sys.argv[2]), int(sys.argv[3])):
    report["source"].update(repository="o/r", run_id=str(run + 1), run_attempt=1, commit=f"{run + 1:040x}", event="push")
    report["finished_at"] = (now - datetime.timedelta(days=run)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with open(f"{sys.argv[4]}/r{run:05d}.json", "w") as f:
        json.dump(report, f, separators=(",", ":"))
PY
        "$bin" -q history --history "$db" add --branch main --keep-runs 0 "$work"/runs/*.json >/dev/null
        from=$to
    done
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
seconds() { hyperfine --runs 1 -N --export-json "$work/t.json" "$1" >/dev/null 2>&1; python3 -c "import json; print('%.3f' % json.load(open('$work/t.json'))['results'][0]['mean'])"; }

# What `history show` reads (its last 20 runs, per pair), as sqlite3 runs it.
SHOW_SQL="SELECT check_id, environment, count(*), sum(result = 'PASS'), avg(duration_ms) FROM pairs WHERE run IN (SELECT id FROM runs WHERE branch = 'main' ORDER BY recorded_at DESC, id DESC LIMIT 20) GROUP BY check_id, environment;"
# What the default retention removes, as sqlite3 removes it.
PRUNE_SQL="PRAGMA foreign_keys = ON; DELETE FROM runs WHERE id NOT IN (SELECT id FROM runs ORDER BY recorded_at DESC, id DESC LIMIT 200) AND julianday(recorded_at) < julianday('now', '-90 days'); VACUUM;"

# Per-test health (`history tests`) over the largest tests history: each test's runs,
# failures and flaky runs in the window, against sqlite3 grouping the same rows.
health() {
    local n=${tests_sizes##* } db="$work/health.sqlite"
    import "$work/tests/report.json" "$db" "$n"
    sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
    echo
    echo "Per-test health over $n runs of 1 check with $tests_each tests ($(mib "$(stat -c %s "$db")")):"
    echo
    echo "| window | history tests --all --format csv | sqlite3, the same grouping | ratio |"
    echo "|---|---|---|---|"
    for window in 20 "$n"; do
        local sql="SELECT t.check_id, t.suite, t.name, count(*), sum(t.outcome IN ('failed', 'error')), sum(t.outcome = 'flaky') FROM tests t JOIN runs r ON r.id = t.run WHERE t.run IN (SELECT id FROM runs WHERE branch = 'main' ORDER BY recorded_at DESC, id DESC LIMIT $window) GROUP BY t.check_id, t.test_id, t.suite, t.name;"
        local ours theirs
        ours=$(seconds "$bin history --history $db tests --window $window --all --limit 0 --format csv")
        theirs=$(seconds "sqlite3 $db \"$sql\"")
        echo "| $window runs | ${ours} s | ${theirs} s | $(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f×", a / b }') |"
    done
    rm -f "$db" "$db".* "$db-wal" "$db-shm"
}
if $health_only; then
    health
    exit 0
fi

echo "| runs of | runs | database | per 1,000 runs | history add (all) | history show --last 20 | sqlite3, the same query | history prune (default retention) | sqlite3, the same removal + VACUUM | after prune |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for shape in wide tests; do
    sizes=$wide_sizes; label="100 checks × 3 environments"
    [ "$shape" = tests ] && { sizes=$tests_sizes; label="1 check, $tests_each tests"; }
    for n in $sizes; do
        db="$work/$shape-$n.sqlite"
        start=$(date +%s.%N)
        import "$work/$shape/report.json" "$db" "$n"
        add=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
        sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
        size=$(stat -c %s "$db")
        per=$((size * 1000 / n))
        show=$(seconds "$bin history --history $db show --last 20")
        show_sql=$(seconds "sqlite3 $db \"$SHOW_SQL\"")
        cp "$db" "$db.copy"
        prune=$(seconds "$bin history --history $db prune")
        prune_sql=$(seconds "sqlite3 $db.copy \"$PRUNE_SQL\"")
        after=$(stat -c %s "$db")
        echo "| $label | $n | $(mib "$size") | $(mib "$per") | ${add} s | ${show} s | ${show_sql} s | ${prune} s | ${prune_sql} s | $(mib "$after") |"
        rm -f "$db" "$db".* "$db-wal" "$db-shm"
    done
done

echo
echo "The Actions cache per job at the default retention ($cached runs of 300 pairs, as the"
echo "cache recipe saves and restores it):"
db="$work/cache.sqlite"
import "$work/wide/report.json" "$db" "$cached"
sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
zstd -q -3 -f "$db" -o "$db.zst"
echo "- database $(mib "$(stat -c %s "$db")"), zstd archive $(mib "$(stat -c %s "$db.zst")")"
health

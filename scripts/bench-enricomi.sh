#!/usr/bin/env bash
# JUnit ingest against EnricoMi/publish-unit-test-result-action's, on the same files:
# the action's own Python (publish/junit.py and publish/unittestresults.py, with the
# junitparser, lxml and humanize versions its requirements pin) parses the reports,
# turns them into per-test results and counts them, as its publishing step does before
# writing anything; `cargo-verify-matrix tests` reads the same files (parse, count,
# locate each failure). The files are the ones of bench.sh's "runner reports" section.
#
#   scripts/bench-enricomi.sh PATH            PATH: a checkout of the action (its
#                                             `python/` folder is used)
#   scripts/bench-enricomi.sh PATH --quick    a smoke run: tiny sizes, one run each
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-data.sh
source scripts/bench-data.sh

action=${1:?usage: scripts/bench-enricomi.sh PATH-TO-publish-unit-test-result-action [--quick]}
[ -f "$action/python/publish/junit.py" ] || { echo "error: $action/python/publish/junit.py not found" >&2; exit 1; }
quick=false
[ "${2:-}" = "--quick" ] && quick=true
command -v hyperfine >/dev/null || { echo "error: hyperfine is needed (scripts/bench.sh installs it)" >&2; exit 1; }

if $quick; then files=5; cases=100; runs="--runs 1 --warmup 0"
else files=100; cases=1000; runs="--warmup 1 --min-runs 10"; fi

venv=target/tools/enricomi
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q junitparser==5.0.0 lxml==6.1.1 humanize==4.15.0
fi
cargo build --release --locked -q
bin=$PWD/target/release/cargo-verify-matrix

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
junit_reports "$work/reports" "$files" "$cases"
cat >"$work/enricomi.py" <<PY
import glob, sys
sys.path.insert(0, "$action/python")
from publish.junit import parse_junit_xml_files, process_junit_xml_elems
from publish.unittestresults import get_test_results, get_stats
files = sorted(glob.glob("$work/reports/junit-*.xml"))
parsed = process_junit_xml_elems(parse_junit_xml_files(files, False, False)).with_commit("0" * 40)
stats = get_stats(get_test_results(parsed, False))
if len(sys.argv) > 1:
    print(stats.tests, stats.tests_succ, stats.tests_fail, stats.tests_skip, stats.tests_error)
PY

echo "## JUnit ingest: $files files × $cases test cases, the action's parser against ours"
echo "commit of the action: $(git -C "$action" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "$(du -cb "$work"/reports/junit-*.xml | tail -n 1 | cut -f1) bytes of reports"
echo "the action counts (tests, passed, failed, skipped, errors): $("$venv/bin/python" "$work/enricomi.py" counts)"
# `tests` exits 1 when a test failed (2 % do).
ours=$("$bin" tests --cwd "$work/reports" --format json 'junit-*.xml' 2>/dev/null || [ $? = 1 ])
echo "cargo-verify-matrix counts (tests, passed, failed, skipped): $(printf '%s' "$ours" | python3 -c '
import json, sys
c = json.load(sys.stdin)["test_counts"]
print(c["passed"] + c["failed"] + c["skipped"], c["passed"], c["failed"], c["skipped"])')"
hyperfine $runs -N -i --export-markdown "$work/ingest.md" \
    -n "EnricoMi/publish-unit-test-result-action (parse, results, stats)" "$venv/bin/python $work/enricomi.py" \
    -n "cargo-verify-matrix tests (parse, count, locate failures)" "$bin tests --cwd $work/reports junit-*.xml" >/dev/null
cat "$work/ingest.md"
for label in action tool; do
    if [ $label = action ]; then set -- "$venv/bin/python" "$work/enricomi.py"; else set -- "$bin" tests --cwd "$work/reports" 'junit-*.xml'; fi
    /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >/dev/null 2>&1 || true
    read -r wall rss < <(tail -n 1 "$work/time.txt")
    echo "peak RSS, $label: $((rss / 1024)) MiB ($wall s)"
done

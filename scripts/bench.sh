#!/usr/bin/env bash
# Whole-process benchmarks of cargo-verify-matrix, each against its baseline in the same
# run, then the in-process criterion benchmarks (benches/pipeline.rs). Installs what it
# needs (hyperfine, GNU time) when missing.
#
#   scripts/bench.sh            full figures (what BENCHMARKS.md reports)
#   scripts/bench.sh --quick    a smoke run: everything runs once, tiny sizes
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-data.sh
source scripts/bench-data.sh

quick=false
[ "${1:-}" = "--quick" ] && quick=true

need hyperfine hyperfine
need jq jq
[ -x /usr/bin/time ] || need time time

cargo build --release --locked -q
bin="$PWD/target/release/cargo-verify-matrix"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if $quick; then
    bytes=$((16 * 1024 * 1024)); checks=10; envs=5; runs="--runs 1 --warmup 0"
    sleepers=4; jobs=2; nap=0.1; plan_checks=20; plan_sizes="20x10"; deep=1000
    curve_sizes="10 20"; curve_runs="--runs 1"; wide_envs=4; wide_checks=20; wide_reps=1
    report_files=5; report_cases=100; tests_envs=4; tests_per_env=200; history_runs=20
    curve_svg="$work/per-check-cost.svg"
else
    bytes=$((1024 * 1024 * 1024)); checks=200; envs=100; runs="--warmup 2 --min-runs 10"
    sleepers=16; jobs=4; nap=0.5; plan_checks=1000; plan_sizes="12x1000 400x200 400x400"
    deep=100000
    curve_sizes="200 1000 3000"; curve_runs="--warmup 1 --runs 3"; wide_envs=256; wide_checks=1000; wide_reps=3
    report_files=100; report_cases=1000; tests_envs=256; tests_per_env=4000; history_runs=1000
    curve_svg="$PWD/docs/per-check-cost.svg"
fi

# ratio JSON LABEL [NOTE]: the mean of a hyperfine export's second command over its first
# (the baseline), printed as "LABEL: 0.123NOTE".
ratio() {
    python3 - "$1" "$2" "${3:-}" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))["results"]
print(f"{sys.argv[2]}: {data[1]['mean'] / data[0]['mean']:.3f}{sys.argv[3]}")
PY
}

# The closing table: one row per budget, each figure beside its baseline of the same run.
# budget FIGURE BASELINE MEASURED RATIO BUDGET MET
budget() {
    printf '| %s | %s | %s | %s | %s | %s |\n' "$@" >>"$work/budgets.md"
}

# against JSON BUDGET [HIGHER]: a budget row's last four cells from a hyperfine export
# (its first command the baseline, its second the tool): the two means, the tool's time
# over the baseline's (with HIGHER=throughput, the baseline's over the tool's: the
# tool's throughput as a share of the baseline's), the budget, and whether it was met.
against() {
    python3 - "$1" "$2" "${3:-}" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
base, tool = results[0]["mean"], results[1]["mean"]
budget = float(sys.argv[2])
if sys.argv[3] == "throughput":
    ratio, met, shown = base / tool, base / tool >= budget, f"≥ {budget}×"
else:
    ratio, met, shown = tool / base, tool / base <= budget, f"≤ {budget}×"
print(f"{base:.3f} s\t{tool:.3f} s\t{ratio:.2f}×\t{shown}\t{'yes' if met else 'no'}")
PY
}

# every_format FORMAT...: in the current folder (artifacts/ and report.json), each format
# from the partial results (merge) and from the report (render), $wide_reps times each:
# the median wall time, the fastest and slowest, and the highest peak RSS.
every_format() {
    echo "| command | wall (median) | fastest – slowest | peak RSS | output |"
    echo "|---|---:|---:|---:|---:|"
    for format in "$@"; do
        for how in merge render; do
            if [ "$how" = merge ]; then
                set -- "$bin" -q merge --out report.json --format "$format" --task-id bench artifacts
            else
                set -- "$bin" -q render --format "$format" --task-id bench report.json
            fi
            walls=(); peak=0
            for _ in $(seq "$wide_reps"); do
                rc=0
                /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >"$work/out" 2>/dev/null || rc=$?
                verdict "$rc" || { echo "error: $how --format $format exited $rc" >&2; exit 1; }
                # GNU time puts "Command exited with non-zero status N" first when it did.
                read -r wall rss < <(tail -n 1 "$work/time.txt")
                walls+=("$wall"); [ "$rss" -gt "$peak" ] && peak=$rss
            done
            read -r median fastest slowest < <(printf '%s\n' "${walls[@]}" | sort -n \
                | awk '{ w[NR] = $1 } END { print w[int((NR + 1) / 2)], w[1], w[NR] }')
            echo "| $how --format $format | ${median} s | ${fastest} – ${slowest} s | $((peak / 1024)) MiB | $(stat -c %s "$work/out") bytes |"
            # The widest matrix's budget: merge + render markdown, time and memory.
            if [ -n "${wide_budget:-}" ] && [ "$how $format" = "merge markdown" ]; then
                met=$(awk -v m="$median" -v p="$peak" 'BEGIN { print (m <= 1.5 && p <= 200 * 1024) ? "yes" : "no" }')
                budget "$wide_budget" "—" "${median} s, $((peak / 1024)) MiB" "—" "≤ 1.5 s, ≤ 200 MiB" "$met"
            fi
        done
    done
}

# The machine every figure is of: cores, memory, kernel, OS, and the file system the
# logs and data are written to.
os=$( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || uname -s)
disk=$(df -PT "$work" 2>/dev/null | awk 'NR == 2 { print $2 " (" $1 ")" }')
machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $os, data on ${disk:-an unknown file system}"
echo "## machine"
echo "$machine"
echo "tool: $("$bin" --version)"
printf '| figure | baseline | measured | ratio | budget | met |\n|---|---:|---:|---:|---:|---|\n' >"$work/budgets.md"

echo
echo "## a check printing $bytes bytes: peak RSS and throughput"
mkdir -p "$work/loud"
cat >"$work/loud/verify-matrix.yml" <<YAML
version: 1
environments: [{name: bench}]
checks:
  - id: loud
    run: head -c $bytes /dev/zero
    timeout: 10m
YAML
( cd "$work/loud" && /usr/bin/time -v "$bin" -q run --out out >/dev/null 2>"$work/time.txt" ) || { cat "$work/time.txt"; exit 1; }
rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time.txt")
echo "peak RSS of cargo-verify-matrix: $((rss_kb / 1024)) MiB ($rss_kb KiB)"
log_size=$(stat -c %s "$work/loud/out/logs/bench/loud.log")
[ "$log_size" = "$bytes" ] || { echo "error: log has $log_size bytes, expected $bytes" >&2; exit 1; }
budget "peak RSS, a check printing $bytes bytes" "—" "$((rss_kb / 1024)) MiB" "—" "≤ 32 MiB" "$([ "$rss_kb" -le $((32 * 1024)) ] && echo yes || echo no)"
hyperfine $runs -N --export-json "$work/throughput.json" --export-markdown "$work/throughput.md" \
    -n "cmd > file" "bash --noprofile --norc -eo pipefail -c 'head -c $bytes /dev/zero > $work/direct.log'" \
    -n "cargo-verify-matrix run" "$bin -q run --manifest $work/loud/verify-matrix.yml --out $work/loud/out" >/dev/null
cat "$work/throughput.md"
IFS=$'\t' read -r -a row < <(against "$work/throughput.json" 0.9 throughput)
budget "throughput, $bytes bytes of zeros (baseline: \`cmd > file\`)" "${row[@]}"

echo
echo "## a check printing $bytes bytes of log lines, a token-shaped word in each: peak RSS and throughput"
# Text a test run prints: short lines, each with a near miss for the redactor's rules
# ("ghp_1234" is too short to be a token), so every line is scanned where a marker is.
# Written once; the check and its baseline both print it with `head -c`, which reads
# and writes it as a process prints (into a file, `cat` has the kernel copy it with
# copy_file_range, no byte passing through a process: no check prints so).
yes 'test tests::parse_ok ... ok (ghp_1234 is not a token) 0.01s' | head -c "$bytes" >"$work/lines.txt" || true
[ "$(stat -c %s "$work/lines.txt")" = "$bytes" ] || { echo "error: lines.txt is short" >&2; exit 1; }
cat >"$work/loud/lines.yml" <<YAML
version: 1
environments: [{name: bench}]
checks:
  - id: lines
    run: head -c $bytes $work/lines.txt
    timeout: 10m
YAML
( cd "$work/loud" && /usr/bin/time -v "$bin" -q run --manifest lines.yml --out lines >/dev/null 2>"$work/time.txt" ) || { cat "$work/time.txt"; exit 1; }
rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time.txt")
echo "peak RSS of cargo-verify-matrix: $((rss_kb / 1024)) MiB ($rss_kb KiB)"
cmp -s "$work/lines.txt" "$work/loud/lines/logs/bench/lines.log" \
    || { echo "error: the log is not the output byte for byte" >&2; exit 1; }
hyperfine $runs -N --export-json "$work/lines.json" --export-markdown "$work/lines.md" \
    -n "cmd > file" "bash --noprofile --norc -eo pipefail -c 'head -c $bytes $work/lines.txt > $work/direct.log'" \
    -n "cargo-verify-matrix run" "$bin -q run --manifest $work/loud/lines.yml --out $work/loud/lines" >/dev/null
cat "$work/lines.md"
IFS=$'\t' read -r -a row < <(against "$work/lines.json" 0.9 throughput)
budget "throughput, $bytes bytes of test-result lines (baseline: \`cmd > file\`)" "${row[@]}"

echo
echo "## per-check overhead: $checks sequential \`true\` checks"
many_true_checks "$work/many" "$checks"
hyperfine $runs -N --export-json "$work/overhead.json" --export-markdown "$work/overhead.md" \
    -n "bash -c true, $checks times" "bash $work/many/loop.sh" \
    -n "cargo-verify-matrix run ($checks checks)" "$bin -q run --manifest $work/many/verify-matrix.yml --out $work/many/out" >/dev/null
cat "$work/overhead.md"
python3 - "$work/overhead.json" "$checks" "$work/budgets.md" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))["results"]
n = int(sys.argv[2])
base, tool = data[0]["mean"], data[1]["mean"]
per = (tool - base) / n * 1000
print(f"overhead per check: {per:.2f} ms (budget 1.5 ms)")
with open(sys.argv[3], "a") as out:
    out.write(f"| overhead per check, {n} `true` checks (baseline: `bash -c true > log` {n} times) "
              f"| {base:.3f} s | {tool:.3f} s | +{per:.2f} ms a check | ≤ 1.5 ms | {'yes' if per <= 1.5 else 'no'} |\n")
PY

echo
echo "## per-check cost as the checks grow: sequential \`true\` checks"
per_check_curve "$bin"
[ -s "$curve_svg" ] || { echo "error: the per-check chart was not written" >&2; exit 1; }

echo
echo "## --jobs $jobs over $sleepers checks sleeping $nap s"
mkdir -p "$work/sleepy"
{
    echo "version: 1"
    echo "environments: [{name: bench}]"
    echo "checks:"
    for i in $(seq 1 "$sleepers"); do echo "  - { id: s$i, run: 'sleep $nap' }"; done
} >"$work/sleepy/verify-matrix.yml"
ideal=$(python3 -c "import math; print(math.ceil($sleepers / $jobs) * $nap)")
hyperfine $runs -N --export-json "$work/jobs.json" --export-markdown "$work/jobs.md" \
    -n "sleep $ideal (the ideal, ceil($sleepers/$jobs) × $nap s)" "sleep $ideal" \
    -n "cargo-verify-matrix run --jobs $jobs" "$bin -q run --jobs $jobs --manifest $work/sleepy/verify-matrix.yml --out $work/sleepy/out" >/dev/null
cat "$work/jobs.md"
python3 - "$work/jobs.json" "$ideal" "$work/budgets.md" "$jobs" "$sleepers" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))["results"]
ideal = float(sys.argv[2])
ratio = data[1]['mean'] / ideal
print(f"wall / ideal: {ratio:.3f} (budget 1.05); sleep {ideal} itself: {data[0]['mean'] / ideal:.3f}")
with open(sys.argv[3], "a") as out:
    out.write(f"| --jobs {sys.argv[4]} over {sys.argv[5]} sleeping checks (baseline: the ideal, `sleep {ideal}`) "
              f"| {data[0]['mean']:.3f} s | {data[1]['mean']:.3f} s | {ratio:.3f}× | ≤ 1.05× | {'yes' if ratio <= 1.05 else 'no'} |\n")
PY

echo
echo "## startup: --version, and plan of a $plan_checks-check manifest"
mkdir -p "$work/big"
{
    echo "version: 1"
    echo "environments: [{name: linux}, {name: macos, runs-on: macos-latest}, {name: windows, runs-on: windows-latest}]"
    echo "checks:"
    for i in $(seq 1 "$plan_checks"); do echo "  - { id: c$i, run: 'cargo test -p c$i' }"; done
} >"$work/big/verify-matrix.yml"
planned=$("$bin" plan --format json --manifest "$work/big/verify-matrix.yml" | jq '[.environments[].checks[]] | length')
echo "plan lists $planned (check, environment) pairs"
hyperfine $runs -N --export-markdown "$work/startup.md" \
    -n "true (process start)" "true" \
    -n "cargo-verify-matrix --version" "$bin --version" \
    -n "plan ($plan_checks checks, 3 environments)" "$bin plan --manifest $work/big/verify-matrix.yml" \
    -n "plan --format github" "$bin plan --format github --manifest $work/big/verify-matrix.yml" >/dev/null
cat "$work/startup.md"

echo
echo "## plan of growing matrices: the table against --format json of the same manifest"
# Above 12 environments the table is one line per check; either way it is linear in
# the pairs, like the JSON it is measured against.
for size in $plan_sizes; do
    e=${size%x*}; c=${size#*x}
    mkdir -p "$work/plan-$size"
    {
        echo "version: 1"
        echo "environments:"
        for i in $(seq 1 "$e"); do echo "  - name: e$i"; done
        echo "checks:"
        for i in $(seq 1 "$c"); do echo "  - { id: c$i, run: 'cargo test -p c$i' }"; done
    } >"$work/plan-$size/verify-matrix.yml"
    hyperfine $runs -N --export-markdown "$work/plan-$size.md" \
        -n "plan --format json ($e environments × $c checks)" "$bin plan --format json --manifest $work/plan-$size/verify-matrix.yml" \
        -n "plan (table)" "$bin plan --manifest $work/plan-$size/verify-matrix.yml" >/dev/null
    cat "$work/plan-$size.md"
done

echo
echo "## a manifest nested $deep deep: refused before parsing, against planning a small one"
python3 - "$work/deep.yml" "$deep" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write("version: 1\nenvironments: [{name: a}]\nchecks: []\nx: " + "[" * n + "]" * n + "\n")
PY
code=0; "$bin" plan --manifest "$work/deep.yml" >/dev/null 2>"$work/deep.txt" || code=$?
[ "$code" = 4 ] && grep -q "nests deeper than" "$work/deep.txt" \
    || { echo "error: the deep manifest was not refused as expected (exit $code)" >&2; cat "$work/deep.txt"; exit 1; }
hyperfine $runs -N -i --export-markdown "$work/deep.md" \
    -n "plan of a 3-environment, $plan_checks-check manifest" "$bin plan --format json --manifest $work/big/verify-matrix.yml" \
    -n "plan of the $deep-deep manifest (refused, exit 4)" "$bin plan --manifest $work/deep.yml" >/dev/null
cat "$work/deep.md"

echo
echo "## merge + render: $envs environments × $checks checks, one result file each"
# One real run of the first environment; the other environments' results are copies of
# it under their own names (same manifest, so the same digest). One check in 100 fails,
# so the matrix carries failure details and log tails.
wide_results "$work/wide" "$bin" "$envs" "$checks"
files=$(find "$work/wide/artifacts" -name 'verify-matrix-*.json' | wc -l)
[ "$files" = "$envs" ] || { echo "error: $files result files, expected $envs" >&2; exit 1; }
cd "$work/wide"
/usr/bin/time -v "$bin" -q merge --out report.json --format markdown artifacts >matrix.md 2>"$work/time.txt" \
    || [ $? = 1 ] || { cat "$work/time.txt"; exit 1; }
rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time.txt")
echo "peak RSS of merge + render: $((rss_kb / 1024)) MiB ($rss_kb KiB); report $(stat -c %s report.json) bytes, matrix $(stat -c %s matrix.md) bytes"
judged "$bin" -q merge --out report.json --format markdown artifacts
judged "$bin" -q render report.json
hyperfine $runs -N -i --export-markdown "$work/merge.md" \
    -n "jq -s (read and concatenate the $envs files)" "bash --noprofile --norc -c 'jq -s . artifacts/*/verify-matrix-*.json > /dev/null'" \
    -n "merge + render markdown" "$bin -q merge --out report.json --format markdown artifacts" \
    -n "render markdown of the report" "$bin -q render report.json" \
    -n "render markdown, 65536-character budget" "$bin -q render --max-chars 65536 report.json" >/dev/null
cat "$work/merge.md"
cd - >/dev/null

python3 - "$work/wide/artifacts" >"$work/jsonload.py" <<'PY'
import sys
print(f"""import glob, json
for f in glob.glob({sys.argv[1] + '/*/verify-matrix-*.json'!r}):
    with open(f) as fh:
        json.load(fh)""")
PY
# The interpreter itself, not a version manager's shim (pyenv's costs more than the
# parse): the baseline is Python reading the files, nothing else.
python=$(python3 -c 'import sys; print(sys.executable)')
# From this folder (the project's own), so the data set's manifest is named.
floor_merge=("$bin" -q merge --manifest "$work/wide/verify-matrix.yml" --out "$work/wide/report.json" --format markdown "$work/wide/artifacts")
judged "${floor_merge[@]}"
hyperfine $runs -N -i --export-json "$work/floor.json" --export-markdown "$work/floor.md" \
    -n "python3 json.load of the $envs files (the floor: parsing them)" "$python $work/jsonload.py" \
    -n "merge + render markdown" "${floor_merge[*]}" >/dev/null
cat "$work/floor.md"
ratio "$work/floor.json" "merge + render / json.load" " (budget 1.0)"
IFS=$'\t' read -r -a row < <(against "$work/floor.json" 1.0)
budget "merge + render markdown, $envs × $checks (baseline: python3 json.load of the files)" "${row[@]}"

echo
echo "## GitHub's largest matrix: $wide_envs environments × $wide_checks checks, every format"
# The same data set, as wide as a matrix goes (256 jobs). Each format from the partial
# results (merge) and from the report (render), $wide_reps times each (the median wall
# time, with the fastest and slowest: a shared machine varies by a third between runs),
# with the highest peak RSS.
wide_results "$work/huge" "$bin" "$wide_envs" "$wide_checks"
cd "$work/huge"
wide_budget="merge + render markdown, $wide_envs × $wide_checks (median of $wide_reps)" \
    every_format markdown table json signal audit junit html
echo "report: $(stat -c %s report.json) bytes from $(du -sb artifacts | cut -f1) bytes of artifacts"
cd - >/dev/null

echo
echo "## the same matrix on GitHub-hosted labels, each leg checked against the run's jobs"
# Every environment `runs-on: ubuntu-latest`; under Actions the merge reads the run's
# jobs from a GitHub stand-in on 127.0.0.1 (256 jobs, three pages) and matches each leg
# to one, against the same merge outside Actions (no jobs read), in one run.
wide_results "$work/hosted" "$bin" "$wide_envs" "$wide_checks" "runs-on: ubuntu-latest" actions
python3 - "$work/jobs-port" "$wide_envs" <<'PY' &
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit
port_file, n = sys.argv[1], int(sys.argv[2])
width = len(str(n))
jobs = [{"name": f"run (e{i:0{width}d})", "status": "completed", "conclusion": "success",
         "labels": ["ubuntu-latest"], "run_attempt": 1,
         "runner_name": f"runner e{i:0{width}d}", "runner_group_name": "GitHub Actions"}
        for i in range(1, n + 1)]
class Jobs(BaseHTTPRequestHandler):
    def do_GET(self):
        query = parse_qs(urlsplit(self.path).query)
        page, per = int(query["page"][0]), int(query["per_page"][0])
        body = json.dumps({"total_count": n, "jobs": jobs[(page - 1) * per:page * per]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = ThreadingHTTPServer(("127.0.0.1", 0), Jobs)
open(port_file, "w").write(str(server.server_address[1]))
server.serve_forever()
PY
jobs_pid=$!
for _ in $(seq 100); do [ -s "$work/jobs-port" ] && break; sleep 0.1; done
cat >"$work/hosted/actions.sh" <<SH
GITHUB_ACTIONS=true GITHUB_REPOSITORY=o/r GITHUB_RUN_ID=1 GITHUB_RUN_ATTEMPT=1 \
GITHUB_TOKEN=ghs_bench GITHUB_API_URL=http://127.0.0.1:$(cat "$work/jobs-port") \
exec "$bin" -q merge --out report.json --format markdown artifacts
SH
cd "$work/hosted"
/usr/bin/time -v sh actions.sh >checked.md 2>"$work/time.txt" \
    || verdict $? || { cat "$work/time.txt"; exit 1; }
grep -q '"job":"run (e' report.json || { echo "error: the legs were not matched to jobs" >&2; exit 1; }
echo "merge with the jobs cross-check: peak RSS $(awk '/Maximum resident/ {printf "%.0f MiB", $6/1024}' "$work/time.txt")"
judged "$bin" -q merge --out plain.json --format markdown artifacts
judged sh actions.sh
hyperfine $runs -N -i --export-json "$work/cross.json" --export-markdown "$work/cross.md" \
    -n "merge" "$bin -q merge --out plain.json --format markdown artifacts" \
    -n "merge, legs checked against the run's jobs" "sh actions.sh" >/dev/null
cat "$work/cross.md"
ratio "$work/cross.json" "checked / unchecked"
kill "$jobs_pid" 2>/dev/null
cd - >/dev/null

echo
echo "## runner reports: $report_files JUnit files × $report_cases test cases read"
# pytest-style reports, 2 % failing with a traceback, 1 % skipped; read by `tests` (the
# same reader as a check's `reports:`: parse, count, locate each failure) against
# Python's xml.etree parsing the same files (the floor: parsing them, nothing more).
junit_reports "$work/reports" "$report_files" "$report_cases"
echo "$(du -cb "$work"/reports/junit-*.xml | tail -n 1 | cut -f1) bytes of reports"
cat >"$work/etree.py" <<PY
import glob, xml.etree.ElementTree as ET
for f in glob.glob("$work/reports/junit-*.xml"):
    ET.parse(f)
PY
hyperfine $runs -N -i --export-json "$work/ingest.json" --export-markdown "$work/ingest.md" \
    -n "python3 xml.etree.parse of the files (the floor)" "python3 $work/etree.py" \
    -n "tests (read, count, locate failures)" "$bin tests --cwd $work/reports junit-*.xml" >/dev/null
cat "$work/ingest.md"
ratio "$work/ingest.json" "tests / xml.etree.parse"
/usr/bin/time -f "%e %M" -o "$work/time.txt" "$bin" tests --cwd "$work/reports" 'junit-*.xml' >/dev/null || [ $? = 1 ]
read -r wall rss < <(tail -n 1 "$work/time.txt")
echo "peak RSS of tests: $((rss / 1024)) MiB ($wall s)"

echo
echo "## every reader: $report_files files × $report_cases test cases in each format, against JUnit"
# The same run (2 % failing with a stack trace, 1 % skipped) written in every format the
# readers know (scripts/bench-readers.py), each read by `tests` as a check's `reports:`
# is: JUnit first, the baseline of the ratios. Every reader must give the same counts.
python3 scripts/bench-readers.py "$work/formats" "$report_files" "$report_cases" >"$work/formats.txt"
readers=()
while read -r format ext passed failed skipped; do
    readers+=(-n "$format" "$bin tests --cwd $work/formats/$format report-*.$ext")
    got=$("$bin" tests --format json --cwd "$work/formats/$format" "report-*.$ext" \
        | jq -r '.test_counts | "\(.passed) \(.failed) \(.skipped)"') || [ $? = 1 ]
    [ "$got" = "$passed $failed $skipped" ] \
        || { echo "error: the $format reader counts $got, not $passed $failed $skipped" >&2; exit 1; }
done <"$work/formats.txt"
hyperfine $runs -N -i --export-json "$work/readers.json" "${readers[@]}" >/dev/null
echo "| format | bytes | wall (mean ± σ) | × JUnit | peak RSS |"
echo "|---|---:|---:|---:|---:|"
while read -r format ext _; do
    /usr/bin/time -f "%e %M" -o "$work/time.txt" "$bin" tests --cwd "$work/formats/$format" "report-*.$ext" >/dev/null || [ $? = 1 ]
    read -r _ rss < <(tail -n 1 "$work/time.txt")
    bytes=$(du -cb "$work/formats/$format"/report-*."$ext" | tail -n 1 | cut -f1)
    python3 - "$work/readers.json" "$format" "$bytes" "$rss" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
base = results[0]["mean"]
row = next(r for r in results if r["command"] == sys.argv[2])
print(f"| {sys.argv[2]} | {int(sys.argv[3]):,} | {row['mean'] * 1000:.0f} ± {(row['stddev'] or 0) * 1000:.0f} ms"
      f" | {row['mean'] / base:.2f}× | {int(sys.argv[4]) // 1024} MiB |")
PY
done <"$work/formats.txt"

echo
echo "## $tests_envs environments × $tests_per_env tests: merge + render the tests of every pair"
# 10 checks per environment, one of which carries a runner report of $tests_per_env tests.
tests_results "$work/tests" "$tests_envs" "$tests_per_env"
cd "$work/tests"
"$bin" -q merge --out report.json artifacts >/dev/null || true
every_format json markdown junit html
echo "report: $(stat -c %s report.json) bytes from $(du -sb artifacts | cut -f1) bytes of artifacts"
# The same merge compared with a base of the same size: a report file, and main's run in
# a history database (another commit's: a run is never its own base).
python3 - report.json base.json <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
report["source"]["commit"] = "b" * 40
json.dump(report, open(sys.argv[2], "w"))
PY
rm -f base.sqlite*
"$bin" -q history --history base.sqlite add --branch main base.json >/dev/null
echo
echo "| merge of every pair's tests | wall | peak RSS |"
echo "|---|---:|---:|"
for how in "" "--baseline base.json" "--baseline-from history:main --history base.sqlite"; do
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %M" -o "$work/time.txt" "$bin" -q merge --out compared.json $how artifacts >/dev/null || verdict $? \
        || { echo "error: merge $how failed" >&2; cat "$work/time.txt" >&2; exit 1; }
    read -r wall rss < <(tail -n 1 "$work/time.txt")
    echo "| ${how:-no baseline} | $wall s | $((rss / 1024)) MiB |"
    if [ -n "$how" ]; then
        grep -q '"new_failures"' compared.json || { echo "error: merge $how compared nothing" >&2; exit 1; }
    fi
done
cd - >/dev/null

echo
echo "## history: $history_runs reports imported, then shown and drawn"
# One report of 4 environments × 10 checks (one with a runner report of 200 tests), as
# $history_runs workflow runs (their own run ids and commits); imported by one
# `history add` into a new database, against Python merely parsing the same files (the
# floor: reading them).
tests_results "$work/hist" 4 200
cd "$work/hist"
"$bin" -q merge --out report.json artifacts >/dev/null || true
python3 - "$history_runs" <<'PY'
import json, os, sys
report = json.load(open("report.json"))
os.makedirs("runs", exist_ok=True)
for run in range(int(sys.argv[1])):
    report["source"].update(repository="o/r", run_id=str(run + 1), run_attempt=1, commit=f"{run + 1:040x}")
    with open(f"runs/r{run:04d}.json", "w") as f:
        json.dump(report, f, separators=(",", ":"))
PY
echo "$(du -sb runs | cut -f1) bytes of reports"
cat >"$work/histload.py" <<PY
import glob, json
for f in glob.glob("$work/hist/runs/*.json"):
    with open(f) as fh:
        json.load(fh)
PY
hyperfine --runs 1 -N -i --export-markdown "$work/hist.md" \
    -n "python3 json.load of the $history_runs reports (the floor: reading them)" "python3 $work/histload.py" \
    -n "history add of the $history_runs reports, into a new database" "bash --noprofile --norc -c 'rm -f h.sqlite*; $bin history --history h.sqlite add runs/*.json > /dev/null'" >/dev/null
cat "$work/hist.md"
echo "database: $(stat -c %s h.sqlite) bytes"
for what in "show --last $history_runs" "show --last 20" "html --last 1000 --out page.html" "html --last 50 --out page.html"; do
    /usr/bin/time -f "%e %M" -o "$work/time.txt" "$bin" history --history h.sqlite $what >/dev/null
    read -r wall rss < <(tail -n 1 "$work/time.txt")
    echo "history $what: $wall s, peak RSS $((rss / 1024)) MiB"
done
echo "page: $(stat -c %s page.html) bytes"
cd - >/dev/null

echo
echo "## shards: balance and merge (scripts/bench-shards.sh)"
# Its merge of every check split four ways, against the unsharded one, joins the table.
export BENCH_BUDGETS="$work/budgets.md"
if $quick; then scripts/bench-shards.sh --quick; else scripts/bench-shards.sh; fi
unset BENCH_BUDGETS

echo
echo "## history: size, import, show and prune as it grows (scripts/bench-history.sh)"
if $quick; then scripts/bench-history.sh --quick; else scripts/bench-history.sh; fi

echo
echo "## entering an environment (scripts/bench-enter.sh)"
if $quick; then scripts/bench-enter.sh --quick; else scripts/bench-enter.sh; fi

echo
echo "## secrets: the redacting writer against many and long secrets (scripts/bench-secrets.sh)"
if $quick; then scripts/bench-secrets.sh --quick; else scripts/bench-secrets.sh; fi

echo
echo "## the Action per leg, under act (scripts/bench-action.sh)"
if $quick; then scripts/bench-action.sh --quick; else scripts/bench-action.sh; fi
echo

echo "## in-process stages (criterion, benches/pipeline.rs)"
if $quick; then
    # Each benchmark once, to keep them compiling and running; nothing is timed.
    cargo bench --locked -q --bench pipeline -- --test
else
    cargo bench --locked -q --bench pipeline 2>/dev/null | grep -E '^[a-z]|time:|thrpt:'
fi

echo
echo "## the budgets, each beside its baseline of the same run"
echo "$machine"
echo
cat "$work/budgets.md"

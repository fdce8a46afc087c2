#!/usr/bin/env bash
# The output path: a check printing BYTES through the tool (the redacting writer, the
# log, the effectiveness scan) against the same command writing its file itself
# (`cmd > file`), in one run, for three kinds of output and 0, 40 and 1,000 secret-named
# variables in the environment (each value a secret the writer searches for).
#
#   scripts/bench-output.sh            1 GiB of each (what BENCHMARKS.md reports)
#   scripts/bench-output.sh --quick    16 MiB, each figure once
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-data.sh
source scripts/bench-data.sh
need hyperfine hyperfine
[ -x /usr/bin/time ] || need time time

quick=false
[ "${1:-}" = "--quick" ] && quick=true
if $quick; then
    bytes=$((16 * 1024 * 1024)); runs="--runs 1 --warmup 0"; counts="0 40"
else
    bytes=$((1024 * 1024 * 1024)); runs="--warmup 1 --runs 5"; counts="0 40 1000"
fi
cargo build --release --locked -q
bin="$PWD/target/release/cargo-verify-matrix"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "Machine: $(nproc) cores, $(uname -sr), $(. /etc/os-release && echo "$PRETTY_NAME"), log folder on $(df -T "$work" | awk 'NR == 2 {print $2}')"
echo

# Text lines: 100 base64 columns (no runner's words), test results (a token shape's
# marker in every line, and `ok` that is not `go test`'s: the writer's worst case), and
# `go test -v` cases (every line read and counted: the scan's worst case), and coloured
# test results (an escape in every line: every line looked at without its escapes).
head -c $((bytes * 3 / 4)) /dev/urandom | base64 -w 100 | head -c "$bytes" >"$work/base64.txt" || true
yes 'test tests::parse_ok ... ok (ghp_1234 is not a token) 0.01s' | head -c "$bytes" >"$work/results.txt" || true
yes '    --- PASS: TestParse/case_1 (0.00s)' | head -c "$bytes" >"$work/cases.txt" || true
yes "$(printf 'test tests::parse_ok ... \033[32mok\033[0m')" | head -c "$bytes" >"$work/coloured.txt" || true
for f in base64 results cases coloured; do
    [ "$(stat -c %s "$work/$f.txt")" = "$bytes" ] || { echo "error: $f.txt is short" >&2; exit 1; }
done

# secrets N: N variables named *_TOKEN with random 40-character values, as `env` takes them.
secrets() {
    python3 - "$1" <<'PY'
import secrets, string, sys
alphabet = string.ascii_letters + string.digits
for i in range(int(sys.argv[1])):
    print(f"BENCH_{i}_TOKEN=" + "".join(secrets.choice(alphabet) for _ in range(40)))
PY
}

echo "| output | secrets | cmd > file | cargo-verify-matrix run | throughput | peak RSS |"
echo "|---|---:|---:|---:|---:|---:|"
for kind in zeros base64 results cases coloured; do
    case $kind in
        zeros) cmd="head -c $bytes /dev/zero"; what="zeros" ;;
        # Each text printed by a process, read and written as a test runner prints, not
        # copied by `cat`: into a file, `cat` has the kernel copy it (copy_file_range),
        # no byte passing through a process, which no check printing its output does.
        base64) cmd="head -c $bytes $work/base64.txt"; what="base64 lines" ;;
        results) cmd="head -c $bytes $work/results.txt"; what="test-result lines" ;;
        cases) cmd="head -c $bytes $work/cases.txt"; what="go test -v cases" ;;
        coloured) cmd="head -c $bytes $work/coloured.txt"; what="coloured test results" ;;
    esac
    cat >"$work/verify-matrix.yml" <<YAML
version: 1
environments: [{name: bench}]
checks:
  - id: loud
    run: $cmd
    timeout: 30m
YAML
    for count in $counts; do
        secrets "$count" >"$work/env.txt"
        mapfile -t vars <"$work/env.txt"
        ( cd "$work" && env "${vars[@]}" /usr/bin/time -v "$bin" -q run --out out >/dev/null 2>"$work/time.txt" ) \
            || { cat "$work/time.txt"; exit 1; }
        rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time.txt")
        # The log is the output, byte for byte, where nothing in it is a secret.
        if [ "$kind" = zeros ] && ! cmp -s <(head -c "$bytes" /dev/zero) "$work/out/logs/bench/loud.log"; then
            echo "error: the log is not the output ($kind, $count secrets)" >&2; exit 1
        fi
        env "${vars[@]}" hyperfine $runs -N --export-json "$work/h.json" \
            -n "cmd > file" "bash --noprofile --norc -eo pipefail -c '$cmd > $work/direct.log'" \
            -n "run" "$bin -q run --manifest $work/verify-matrix.yml --out $work/out" >/dev/null
        python3 - "$work/h.json" "$what" "$count" "$rss_kb" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
raw, tool = r[0], r[1]
fmt = lambda x: f"{x['mean']:.3f} ± {x['stddev'] or 0:.3f} s"
rss = int(sys.argv[4]) / 1024
print(f"| {sys.argv[2]} | {sys.argv[3]} | {fmt(raw)} | {fmt(tool)} | {raw['mean'] / tool['mean']:.2f}× | {rss:.1f} MiB |")
PY
    done
done

# Data sets and helpers the benchmark scripts share (sourced by scripts/bench.sh,
# scripts/bench-against.sh and scripts/bench-secrets.sh).

# The folder of these scripts, for their Python helpers (`partial_result`).
scripts_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# many_true_checks DIR N: DIR/verify-matrix.yml with N checks running `true`, and
# DIR/loop.sh, the baseline: `bash -c true > log` N times.
many_true_checks() {
    local dir=$1 n=$2
    mkdir -p "$dir"
    {
        echo "version: 1"
        echo "environments: [{name: bench}]"
        echo "checks:"
        for i in $(seq 1 "$n"); do echo "  - { id: c$i, run: 'true' }"; done
    } >"$dir/verify-matrix.yml"
    cat >"$dir/loop.sh" <<SH
for i in \$(seq 1 $n); do bash --noprofile --norc -eo pipefail -c true > $dir/loop.log; done
SH
}

# wide_results DIR BIN ENVS CHECKS [KEYS [LEGS]]: DIR/verify-matrix.yml with ENVS
# environments (each with the YAML KEYS, e.g. `runs-on: ubuntu-latest`, when given) and
# CHECKS checks (one in 100 failing with a 200-line log), and DIR/artifacts/ holding one
# result folder per environment. One real run (by BIN) of the first environment; the
# others are copies of it under their own names (same manifest, so the same digest).
# LEGS=actions records each as the leg of workflow run 1 (attempt 1) on runner
# `runner eNNN`, as a run under Actions records it.
wide_results() {
    local dir=$1 bin=$2 envs=$3 checks=$4 keys=${5:-} legs=${6:-}
    mkdir -p "$dir"
    {
        echo "version: 1"
        echo "environments:"
        for e in $(seq -w 1 "$envs"); do echo "  - { name: e$e${keys:+, $keys} }"; done
        echo "checks:"
        for i in $(seq 1 "$checks"); do
            if [ $((i % 100)) = 7 ]; then
                echo "  - { id: c$i, run: 'seq 1 200; exit 1' }"
            else
                echo "  - { id: c$i, run: 'true' }"
            fi
        done
    } >"$dir/verify-matrix.yml"
    local first
    first=$(printf "e%0${#envs}d" 1)
    ( cd "$dir" && "$bin" -q run --env "$first" --out "artifacts/$first" >/dev/null ) || true
    PYTHONPATH="$scripts_dir" python3 - "$dir/artifacts" "$first" "$envs" "$legs" <<'PY'
import os, shutil, sys
import partial_result
root, first, n, legs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
src = os.path.join(root, first)
result = partial_result.load(os.path.join(src, f"verify-matrix-{first}.json"))
width = len(str(n))
for i in range(1, n + 1):
    env = f"e{i:0{width}d}"
    dst = os.path.join(root, env)
    if env != first:
        shutil.copytree(os.path.join(src, "logs", first), os.path.join(dst, "logs", env))
    if legs == "actions":
        result["source"].update({"run_id": "1", "run_attempt": 1})
        result["runner"]["actions"] = {"name": f"runner {env}", "run_attempt": 1}
    result["environment"] = env
    for check in result["checks"]:
        check["environment"] = env
        check["log_path"] = f"logs/{env}/{check['command_id']}.log"
    partial_result.dump(result, os.path.join(dst, f"verify-matrix-{env}.json"))
PY
}

# per_check_curve BIN... : for each N in $curve_sizes, the time of BIN run over N
# sequential `true` checks against bare bash, as ms per check (hyperfine, $curve_runs).
per_check_curve() {
    local n bin
    echo "| N | bare bash, ms per check | $(for bin in "$@"; do printf '%s, ms per check | ' "$(basename "$bin")"; done)"
    echo "|---|---|$(for bin in "$@"; do printf -- '---|'; done)"
    for n in $curve_sizes; do
        many_true_checks "$work/curve-$n" "$n"
        local args=(-n "bash" "bash $work/curve-$n/loop.sh")
        for bin in "$@"; do
            args+=(-n "$(basename "$bin")" "$bin -q run --manifest $work/curve-$n/verify-matrix.yml --out $work/curve-$n/out-$(basename "$bin")")
        done
        hyperfine $curve_runs -N --export-json "$work/curve-$n.json" "${args[@]}" >/dev/null
        python3 - "$work/curve-$n.json" "$n" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
n = int(sys.argv[2])
base = results[0]["mean"]
cells = [f"{base / n * 1000:.2f}"] + [f"{r['mean'] / n * 1000:.2f} ({r['mean'] / base:.2f}× bash)" for r in results[1:]]
print(f"| {n} | " + " | ".join(cells) + " |")
PY
    done
    [ -n "${curve_svg:-}" ] && curve_chart "$curve_svg" "$@"
    return 0
}

# curve_chart OUT BIN... : the curve measured by per_check_curve as a small SVG line
# chart (ms per check against N, one line for bare bash and one per BIN).
curve_chart() {
    local out=$1; shift
    python3 - "$out" "$work" "$curve_sizes" "$@" <<'PY'
import json, os, sys
out, work, sizes, bins = sys.argv[1], sys.argv[2], [int(n) for n in sys.argv[3].split()], sys.argv[4:]
names = ["bare bash"] + [os.path.basename(b) for b in bins]
series = [[] for _ in names]
for n in sizes:
    results = json.load(open(f"{work}/curve-{n}.json"))["results"]
    for i, r in enumerate(results):
        series[i].append(r["mean"] / n * 1000)
W, H, L, R, T, B = 560, 300, 60, 150, 20, 50
top = max(max(s) for s in series) * 1.15
x = lambda i: L + (W - L - R) * (i / max(1, len(sizes) - 1))
y = lambda v: T + (H - T - B) * (1 - v / top)
colours = ["#57606a", "#0969da", "#cf222e", "#1a7f37"]
# The title sits above the plot, in a band of 18 (negative y).
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H + 18}" viewBox="0 -18 {W} {H + 18}" font-family="sans-serif" font-size="12">',
       f'<rect y="-18" width="{W}" height="{H + 18}" fill="#fff"/>',
       f'<text x="{L}" y="-2" font-weight="bold">ms per check, sequential `true` checks</text>']
for k in range(5):
    v = top * k / 4
    svg.append(f'<line x1="{L}" x2="{W - R}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#d0d7de"/>')
    svg.append(f'<text x="{L - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>')
for i, n in enumerate(sizes):
    svg.append(f'<text x="{x(i):.1f}" y="{H - B + 18}" text-anchor="middle">N = {n:,}</text>')
for s, name, colour in zip(series, names, colours):
    points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(s))
    svg.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
    for i, v in enumerate(s):
        svg.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}"/>')
    svg.append(f'<text x="{W - R + 8}" y="{y(s[-1]) + 4:.1f}" fill="{colour}">{name} {s[-1]:.2f}</text>')
svg.append("</svg>")
open(out, "w").write("\n".join(svg) + "\n")
PY
}

# junit_reports DIR FILES CASES: DIR/junit-NNN.xml, FILES pytest-style JUnit reports of
# CASES test cases each: 2 % failing with a traceback (about 1 KiB), 1 % skipped, the
# rest passing; DIR/tests/ holds the test files the tracebacks name.
junit_reports() {
    python3 - "$1" "$2" "$3" <<'PY'
import os, sys
from xml.sax.saxutils import escape, quoteattr
root, files, cases = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(os.path.join(root, "tests"), exist_ok=True)
for f in range(files):
    module = f"tests/test_module_{f:03d}.py"
    with open(os.path.join(root, module), "w") as fh:
        fh.write("\n" * 200)
    out = ['<?xml version="1.0" encoding="utf-8"?>',
           '<testsuites name="pytest tests"><testsuite name="pytest" errors="0" '
           f'failures="{cases // 50}" skipped="{cases // 100}" tests="{cases}" time="12.5">']
    for c in range(cases):
        name = f"test_behaviour_{c:04d}[case-{c % 7}]"
        head = f'<testcase classname="tests.test_module_{f:03d}" name="{name}" time="0.{c % 1000:03d}"'
        if c % 50 == 7:
            line = 10 + c % 150
            trace = (f"def {name.split('[')[0]}(case):\n"
                     + "".join(f"    value_{i} = compute(case, {i})\n" for i in range(42))
                     + f">       assert value_41 == expected(case), \"mismatch in case {c}\"\n"
                     + "E       AssertionError: mismatch in case {c}\n"
                     + "E       assert 41 == 42\n"
                     + "E        +  where 41 = compute('case', 41)\n\n"
                     + f"{module}:{line}: AssertionError")
            message = quoteattr(f"AssertionError: mismatch in case {c}\nassert 41 == 42")
            out.append(f"{head}><failure message={message}>{escape(trace)}</failure></testcase>")
        elif c % 100 == 3:
            out.append(f'{head}><skipped type="pytest.skip" message="not on this platform">'
                       f'{module}:5: not on this platform</skipped></testcase>')
        else:
            out.append(f"{head} />")
    out.append("</testsuite></testsuites>")
    with open(os.path.join(root, f"junit-{f:03d}.xml"), "w") as fh:
        fh.write("\n  ".join(out) + "\n")
PY
}

# tests_results DIR ENVS TESTS: wide_results with ENVS environments and 10 checks, the
# first of which (`c1`) carries a runner report of TESTS tests in every environment (2 %
# failing with a message, an output excerpt and a place; 1 % skipped).
tests_results() {
    local dir=$1 envs=$2 tests=$3
    wide_results "$dir" "$bin" "$envs" 10
    PYTHONPATH="$scripts_dir" python3 - "$dir/artifacts" "$tests" <<'PY'
import glob, sys
import partial_result
root, tests = sys.argv[1], int(sys.argv[2])
cases, failed, skipped = [], 0, 0
for t in range(tests):
    case = {"suite": f"tests.test_module_{t // 100:03d}", "name": f"test_behaviour_{t:05d}",
            "outcome": "passed", "duration_ms": t % 37}
    if t % 50 == 7:
        failed += 1
        case.update(outcome="failed", message=f"AssertionError: mismatch in case {t}\nassert 41 == 42",
                    output="def test(case):\n" + "    value = compute(case)\n" * 12
                    + f">       assert value == 42\nE       assert 41 == 42\n\ntests/test_module_{t // 100:03d}.py:{t % 150 + 10}: AssertionError",
                    file=f"tests/test_module_{t // 100:03d}.py", line=t % 150 + 10)
    elif t % 100 == 3:
        skipped += 1
        case["outcome"] = "skipped"
    cases.append(case)
for path in glob.glob(f"{root}/*/verify-matrix-*.json"):
    result = partial_result.load(path)
    unit = result["checks"][0]
    unit.update(status="FAIL", exit_code=1, gate_type="test", tests_executed=tests - skipped,
                test_counts={"passed": tests - failed - skipped, "failed": failed,
                             "skipped": skipped, "runner": "junit"},
                tests={"format": "junit", "files": ["junit.xml"], "log_counts": None,
                       "cases": cases, "left_out": 0})
    partial_result.dump(result, path)
PY
}

# verdict CODE: whether an exit code is a verdict (0 verified, 1 or 3 not verified), not
# a usage error (2) or invalid input (4).
verdict() {
    [ "$1" -le 1 ] || [ "$1" = 3 ]
}

# judged COMMAND...: runs COMMAND once, as the timed runs will, and stops the benchmark
# unless it gave a verdict (its errors go to $work/judged.err). `hyperfine -i` times
# whatever exits, so a merge that stops at once (the wrong manifest, a missing file)
# would be timed as a fast one.
judged() {
    local rc=0
    "$@" >/dev/null 2>"$work/judged.err" || rc=$?
    if ! verdict "$rc"; then
        echo "error: \`$*\` exited $rc, not with a verdict:" >&2
        cat "$work/judged.err" >&2
        exit 1
    fi
}

# need COMMAND PACKAGE: COMMAND, installed from Debian's PACKAGE when missing.
need() {
    command -v "$1" >/dev/null 2>&1 && return
    echo "installing $2 ..." >&2
    if command -v apt-get >/dev/null 2>&1; then
        (apt-get install -y -qq "$2" >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq "$2" >/dev/null; })
    fi
    command -v "$1" >/dev/null 2>&1 || { echo "error: cannot install $2" >&2; exit 1; }
}

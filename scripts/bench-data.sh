# Data sets the benchmark scripts share (sourced by scripts/bench.sh and
# scripts/bench-against.sh).

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

# wide_results DIR BIN ENVS CHECKS: DIR/verify-matrix.yml with ENVS environments and
# CHECKS checks (one in 100 failing with a 200-line log), and DIR/artifacts/ holding one
# result folder per environment. One real run (by BIN) of the first environment; the
# others are copies of it under their own names (same manifest, so the same digest).
wide_results() {
    local dir=$1 bin=$2 envs=$3 checks=$4
    mkdir -p "$dir"
    {
        echo "version: 1"
        echo "environments:"
        for e in $(seq -w 1 "$envs"); do echo "  - name: e$e"; done
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
    python3 - "$dir/artifacts" "$first" "$envs" <<'PY'
import json, os, shutil, sys
root, first, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
src = os.path.join(root, first)
result = json.load(open(os.path.join(src, f"verify-matrix-{first}.json")))
width = len(str(n))
for i in range(2, n + 1):
    env = f"e{i:0{width}d}"
    dst = os.path.join(root, env)
    shutil.copytree(os.path.join(src, "logs", first), os.path.join(dst, "logs", env))
    result["environment"] = env
    for check in result["checks"]:
        check["environment"] = env
        check["log_path"] = f"logs/{env}/{check['command_id']}.log"
    with open(os.path.join(dst, f"verify-matrix-{env}.json"), "w") as f:
        json.dump(result, f, separators=(",", ":"))  # compact, as the tool writes
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
}

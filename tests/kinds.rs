//! Check kinds that are not plain commands, on real folders and real git repositories;
//! `test: auto`; manual items; `skip: true`; a manifest with no checks.

mod common;

use std::process::Command;

use common::{Project, check_result};
use predicates::prelude::*;
use serde_json::Value;

fn result(project: &Project, id: &str) -> Value {
    check_result(project, "local", id)
}

fn manifest(checks: &str) -> String {
    format!("version: 1\nenvironments: [{{name: local}}]\nchecks:\n{checks}")
}

fn git(project: &Project, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(project.path())
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&status.stderr)
    );
}

#[test]
fn file_and_not_file() {
    let project = Project::new(&manifest(concat!(
        "  - { id: bundle, file: 'dist/*.js' }\n",
        "  - { id: searched, file: index.md, search: [., docs] }\n",
        "  - { id: absent, file: 'nope/*.txt' }\n",
        "  - { id: no_maps, not-file: 'dist/**/*.map' }\n",
        "  - { id: no_exe, not-file: '**/*.exe' }\n",
    )));
    project.write("dist/app.js", "");
    project.write("dist/maps/app.js.map", "");
    project.write("docs/index.md", "");
    project.cmd().assert().code(1);
    let bundle = result(&project, "bundle");
    assert_eq!(
        (bundle["status"].as_str(), bundle["exit_code"].as_i64()),
        (Some("PASS"), Some(0))
    );
    assert_eq!(bundle["summary"], "found dist/app.js");
    assert_eq!(
        result(&project, "searched")["summary"],
        "found docs/index.md"
    );
    let absent = result(&project, "absent");
    assert_eq!(
        (absent["status"].as_str(), absent["exit_code"].as_i64()),
        (Some("FAIL"), Some(1))
    );
    let maps = result(&project, "no_maps");
    assert_eq!(maps["status"], "FAIL");
    assert_eq!(
        maps["summary"],
        "1 match(es) for `dist/**/*.map`: dist/maps/app.js.map"
    );
    assert!(
        project
            .read("verify-matrix-results/logs/local/no_maps.log")
            .contains("dist/maps/app.js.map")
    );
    assert_eq!(result(&project, "no_exe")["status"], "PASS");
}

#[test]
fn git_clean_on_a_real_repository() {
    let project = Project::new(&manifest("  - { id: clean, git-clean: . }\n"));
    project.write(".gitignore", "ignored.txt\nverify-matrix.yml\n");
    project.write("tracked.txt", "one\n");
    git(&project, &["init", "-q"]);
    git(&project, &["add", "."]);
    git(&project, &["commit", "-qm", "initial"]);

    // Clean, with an ignored file and this run's own output folder present.
    project.write("ignored.txt", "x");
    project.cmd().assert().success();
    assert_eq!(result(&project, "clean")["summary"], "`.` is clean");

    project.write("tracked.txt", "two\n");
    project.write("new.txt", "");
    project.cmd().assert().code(1);
    let r = result(&project, "clean");
    assert_eq!(
        (r["status"].as_str(), r["exit_code"].as_i64()),
        (Some("FAIL"), Some(1))
    );
    assert_eq!(
        r["summary"],
        "2 uncommitted or untracked path(s): new.txt, tracked.txt"
    );
}

#[test]
fn git_clean_outside_a_repository_is_a_clear_error() {
    let project = Project::new(&manifest("  - { id: clean, git-clean: . }\n"));
    project.cmd().assert().code(1);
    let r = result(&project, "clean");
    assert_eq!(r["status"], "ERROR");
    assert!(
        r["summary"]
            .as_str()
            .unwrap()
            .contains("not a git repository"),
        "{r}"
    );
}

#[test]
fn groups_evaluate_every_item_and_nest() {
    let project = Project::new(&manifest(concat!(
        "  - id: docs\n    any-of:\n      - { item: readme, file: README.md }\n      - { item: docs, file: docs/index.md }\n",
        "  - id: everything\n    all-of:\n      - { item: fails_first, run: 'exit 1' }\n      - { item: still_runs, run: 'touch ran.marker' }\n",
        "      - item: nested\n        any-of:\n          - { item: deep, run: 'true' }\n",
    )));
    project.write("README.md", "");
    project.cmd().assert().code(1);
    let docs = result(&project, "docs");
    assert_eq!(docs["status"], "PASS");
    assert_eq!(docs["summary"], "any-of: 1/2 passed (readme ✓, docs ✗)");
    let all = result(&project, "everything");
    assert_eq!(all["status"], "FAIL");
    assert_eq!(
        all["summary"],
        "all-of: 2/3 passed (fails_first ✗, still_runs ✓, nested ✓)"
    );
    assert!(
        project.path().join("ran.marker").exists(),
        "no short-circuit"
    );
    let log = project.read("verify-matrix-results/logs/local/everything.log");
    assert!(
        log.contains("✗ fails_first (FAIL)")
            && log.contains("logs/local/everything.fails_first.log"),
        "{log}"
    );
    assert!(
        project
            .path()
            .join("verify-matrix-results/logs/local/everything.nested.deep.log")
            .exists()
    );
    // Each item's result is recorded in the group's, nested groups within.
    let items: Vec<String> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            format!(
                "{} {} {} {}",
                i["item"], i["kind"], i["status"], i["exit_code"]
            )
        })
        .collect();
    assert_eq!(
        items,
        [
            r#""fails_first" "run" "FAIL" 1"#,
            r#""still_runs" "run" "PASS" 0"#,
            r#""nested" "any-of" "PASS" 0"#,
        ]
    );
    assert_eq!(all["items"][2]["items"][0]["item"], "deep");
    assert_eq!(
        all["items"][2]["items"][0]["log_path"],
        "logs/local/everything.nested.deep.log"
    );
    assert!(result(&project, "docs")["items"][0]["items"].is_null());
}

#[test]
fn manual_items_in_a_group_are_left_to_review_not_counted() {
    let project = Project::new(&manifest(concat!(
        "  - id: done\n    all-of:\n      - { item: builds, run: 'true' }\n",
        "      - { item: reviewed, assert: the API is documented }\n",
        "      - item: tidy\n        quality: { criteria: small functions, pass-threshold: 3 }\n",
        "      - item: signed\n        any-of:\n          - { item: by_owner, assert: an owner signed off }\n",
        "  - id: judged_only\n    any-of:\n      - { item: looks_good, assert: it looks good }\n",
    )));
    let out = project.cmd().output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let done = result(&project, "done");
    assert_eq!(done["status"], "PASS", "{done}");
    assert_eq!(
        done["summary"],
        "all-of: 1/1 passed (builds ✓, reviewed –, tidy –, signed –)"
    );
    assert_eq!(done["items"][1]["status"], "NOT_RUN");
    assert_eq!(done["items"][2]["kind"], "quality");
    // A nested group of nothing but manual items is one itself: nothing ran in it.
    assert_eq!(done["items"][3]["status"], "NOT_RUN");
    assert_eq!(
        done["items"][3]["summary"],
        "any-of: only manual items, awaiting review; nothing run"
    );
    let log = project.read("verify-matrix-results/logs/local/done.log");
    assert!(
        log.starts_with("all-of: 1 of 1 item(s) passed, 3 manual item(s) left to review\n"),
        "{log}"
    );
    // A check that is such a group is listed for review, like an `assert:`: it has no
    // pair to run, and never counts as a pass.
    let partial = project.json("verify-matrix-results/verify-matrix-local.json");
    assert!(
        partial["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["command_id"] != "judged_only"),
        "{partial:#}"
    );
    assert!(
        stdout.contains("awaiting review: judged_only (any-of)"),
        "{stdout}"
    );
}

#[test]
fn group_items_run_in_their_groups_folder() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: local}]\ndefaults: { cwd: web }\nchecks:\n  - id: site\n    all-of:\n      - { item: here, run: 'test -f index.html' }\n      - { item: deeper, cwd: assets, run: 'test -f app.css' }\n",
    );
    project.write("web/index.html", "");
    project.write("web/assets/app.css", "");
    project.cmd().assert().success();
    assert_eq!(result(&project, "site")["status"], "PASS");
}

#[test]
fn test_auto_resolves_the_command_and_records_it() {
    let project = Project::new(&manifest("  - { id: tests, test: auto }\n"));
    project.write("Makefile", "test:\n\techo 'test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out'\n");
    project.cmd().assert().success();
    let r = result(&project, "tests");
    assert_eq!(r["command"], "make test");
    assert_eq!(r["tests_executed"], 3);
}

#[test]
fn test_auto_without_a_suite_says_what_it_looked_for() {
    let project = Project::new(&manifest("  - { id: tests, test: auto }\n"));
    project
        .cmd()
        .assert()
        .code(1)
        .stdout(predicate::str::contains("ERROR"));
    let r = result(&project, "tests");
    assert_eq!(r["status"], "ERROR");
    let summary = r["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("`test: auto` found no test suite in "),
        "{summary}"
    );
    assert!(summary.contains("looked for Cargo.toml"), "{summary}");
}

#[test]
fn manual_items_are_listed_never_run_never_counted() {
    let project = Project::new(&manifest(concat!(
        "  - { id: works, run: 'true' }\n",
        "  - { id: login_works, assert: 'Login returns 200' }\n",
        "  - id: quality\n    quality: { criteria: 'Short functions', pass-threshold: 3 }\n",
    )));
    project
        .cmd()
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "awaiting review: login_works (assert): Login returns 200",
        ))
        .stdout(predicate::str::contains(
            "awaiting review: quality (quality): Short functions",
        ))
        .stdout(predicate::str::contains(
            "All Required Environments: VERIFIED",
        ));
    let checks = project.json("verify-matrix-results/verify-matrix-local.json")["checks"].clone();
    assert_eq!(checks.as_array().unwrap().len(), 1);
}

#[test]
fn skip_true_says_skipped_loudly_and_exits_0() {
    let project = Project::new(
        "version: 1\nskip: true\nenvironments: [{name: local}]\nchecks:\n  - { id: a, run: 'exit 1' }\n",
    );
    project
        .cmd()
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "All Required Environments: SKIPPED",
        ))
        .stderr(predicate::str::contains("SKIPPED"));
    let result = project.json("verify-matrix-results/verify-matrix-local.json");
    assert_eq!(result["outcome"], "complete");
    assert_eq!(result["checks"], serde_json::json!([]));
    let md = project
        .cmd()
        .args(["render", "verify-matrix-results/verify-matrix-local.json"])
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(
        md.contains("## ⏭️ Environment Verification Matrix: SKIPPED"),
        "{md}"
    );
    assert!(md.contains("**SKIPPED**"), "{md}");
    assert!(
        !md.contains("Missing:") && !md.contains("INFRA_BLOCKED"),
        "nothing is missing: {md}"
    );
}

#[test]
fn no_checks_is_verified_with_nothing_to_run() {
    let project = Project::new("version: 1\nenvironments: [{name: local}]\n");
    project
        .cmd()
        .assert()
        .success()
        .stdout(predicate::str::contains("no checks defined"))
        .stdout(predicate::str::contains(
            "All Required Environments: VERIFIED",
        ));
}

//! Shards: one environment split across runners. Real runners take their slices
//! (nextest's `--partition`), the union of the shards' tests is the whole suite's,
//! `merge` makes the shards one pair, and a missing shard is never green.

mod common;

use std::collections::BTreeSet;

use common::Project;
use serde_json::Value;

/// A crate of `tests` unit tests and a manifest splitting `linux` into `shards`, its
/// `unit` check cargo-nextest's, partitioned, with its JUnit report.
fn nextest_project(tests: usize, shards: u32) -> Project {
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - name: linux\n    shards: {shards}\nchecks:\n  - id: unit\n    test: cargo nextest run --profile ci --partition count:{{shard}}/{{shards}}\n    reports: target/nextest/ci/junit.xml\n  - id: lint\n    run: echo lint\n"
    ));
    project.write(
        "Cargo.toml",
        "[package]\nname = \"sharded\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    let cases: String = (0..tests)
        .map(|i| {
            format!(
                "    #[test]\n    fn adds_{i:02}() {{ assert_eq!(super::add({i}, 1), {i} + 1); }}\n"
            )
        })
        .collect();
    project.write(
        "src/lib.rs",
        &format!("pub fn add(a: u64, b: u64) -> u64 {{ a + b }}\n\n#[cfg(test)]\nmod tests {{\n{cases}}}\n"),
    );
    project.write(
        ".config/nextest.toml",
        "[profile.ci]\nfail-fast = false\n[profile.ci.junit]\npath = \"junit.xml\"\n",
    );
    project
}

/// The ids (`suite › name`) of the tests the one split check ran in the result file
/// `path`.
fn test_ids(project: &Project, path: &str) -> Vec<String> {
    let result = project.json(path);
    let unit = result["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command_id"] == "unit" || c["command_id"] == "py")
        .unwrap_or_else(|| panic!("no split check in {path}"))
        .clone();
    unit["tests"]["cases"]
        .as_array()
        .unwrap_or_else(|| panic!("no tests listed in {path}: {unit}"))
        .iter()
        .map(|c| {
            format!(
                "{} › {}",
                c["suite"].as_str().unwrap(),
                c["name"].as_str().unwrap()
            )
        })
        .collect()
}

/// `run ARGS`, which must exit `code`; its stderr.
fn run(project: &Project, args: &[&str], code: i32) -> String {
    let out = project.std_cmd().arg("run").args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "run {args:?}: {stderr}");
    stderr
}

/// `run --shard K/N --out FOLDER/K`, which must exit 0.
fn run_shard(project: &Project, k: u32, n: u32, folder: &str) {
    run(
        project,
        &[
            "--shard",
            &format!("{k}/{n}"),
            "--out",
            &format!("{folder}/{k}"),
        ],
        0,
    );
}

/// `merge --out report.json PATHS`, which must exit `code`; the report and stderr.
fn merge(project: &Project, paths: &[&str], code: i32) -> (Value, String) {
    let out = project
        .std_cmd()
        .args(["merge", "--out", "report.json"])
        .args(paths)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(code),
        "merge {paths:?}: {stderr}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    (project.json("report.json"), stderr)
}

fn row<'a>(report: &'a Value, check: &str) -> &'a Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == check)
        .unwrap_or_else(|| panic!("no row {check}: {report}"))
}

#[test]
fn nextest_partitions_cover_the_whole_suite_and_merge_into_one_pair() {
    let project = nextest_project(11, 3);
    // The whole environment, as a developer runs it: the check takes slice 1/1.
    run(&project, &["--out", "whole"], 0);
    let whole: BTreeSet<String> = test_ids(&project, "whole/verify-matrix-linux.json")
        .into_iter()
        .collect();
    assert_eq!(whole.len(), 11, "{whole:?}");

    let mut union = Vec::new();
    for k in 1..=3 {
        run_shard(&project, k, 3, "shards");
        let out = format!("shards/{k}");
        let file = format!("{out}/verify-matrix-linux@{k}of3.json");
        let result = project.json(&file);
        assert_eq!(result["shard"]["index"], k);
        assert_eq!(result["shard"]["count"], 3);
        let ids = test_ids(&project, &file);
        assert!(!ids.is_empty(), "shard {k} ran no test");
        assert!(ids.len() < 11, "shard {k} ran the whole suite: {ids:?}");
        // A check that runs whole runs in shard 1 only.
        let lint = result["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["command_id"] == "lint");
        assert_eq!(lint, k == 1, "lint in shard {k}");
        union.extend(ids);
    }
    // Every test of the suite ran in exactly one shard.
    let distinct: BTreeSet<String> = union.iter().cloned().collect();
    assert_eq!(distinct.len(), union.len(), "a test ran twice: {union:?}");
    assert_eq!(distinct, whole);

    let (report, _) = merge(&project, &["shards"], 0);
    assert_eq!(report["verdict"], "VERIFIED");
    let unit = row(&report, "unit");
    assert_eq!(unit["result"], "PASS");
    assert_eq!(unit["detail"]["tests_executed"], 11);
    assert_eq!(
        unit["detail"]["sharded"]["parts"].as_array().unwrap().len(),
        3
    );
    assert_eq!(row(&report, "lint")["result"], "PASS");
    let markdown = project.stdout_of(&["render", "--format", "markdown", "report.json"]);
    assert!(markdown.contains("| unit | ✅ 11 ×3 |"), "{markdown}");

    // One shard's artifact never arrived: the pair is missing, the shard named.
    let (report, _) = merge(&project, &["shards/1", "shards/3"], 3);
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    assert!(
        report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["check"] != "unit")
    );
    let missing = &report["missing"][0];
    assert_eq!(missing["check"], "unit");
    assert_eq!(missing["reason"], "shard 2/3 of linux has no result");
    assert!(
        report["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == "unit in linux: shard 2/3 of linux has no result"),
        "{}",
        report["reasons"]
    );

    // The same shard reported twice in one attempt (two legs ran as shard 1): a conflict.
    common::copy_dir(
        &project.path().join("shards/1"),
        &project.path().join("again"),
    );
    let (report, _) = merge(&project, &["shards", "again"], 1);
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    let reasons = report["reasons"].to_string();
    assert!(
        reasons.contains("shard 1/3 of linux reported more than once"),
        "{reasons}"
    );

    // Against a baseline (the whole run), a test gone from the shards' union vanished.
    let merged = project
        .std_cmd()
        .args(["merge", "--out", "base.json", "whole"])
        .output()
        .unwrap();
    assert!(merged.status.success(), "{merged:?}");
    let lib = project.read("src/lib.rs");
    let kept: String = lib
        .lines()
        .filter(|l| !l.contains("fn adds_05"))
        .map(|l| format!("{l}\n"))
        .collect();
    project.write("src/lib.rs", &kept);
    for k in 1..=3 {
        run_shard(&project, k, 3, "fewer");
    }
    let out = project
        .std_cmd()
        .args([
            "merge",
            "--baseline",
            "base.json",
            "--format",
            "markdown",
            "fewer",
        ])
        .output()
        .unwrap();
    let markdown = String::from_utf8_lossy(&out.stdout);
    assert!(markdown.contains("NOT VERIFIED"), "{markdown}");
    assert!(markdown.contains("tests::adds_05` vanished"), "{markdown}");
    assert!(markdown.contains("| unit | ✅ 10 ↓1 ×3 |"), "{markdown}");
}

#[test]
fn a_failing_test_fails_its_pair_and_the_details_name_its_shard() {
    let project = nextest_project(6, 2);
    let lib = project.read("src/lib.rs").replace(
        "assert_eq!(super::add(3, 1), 3 + 1)",
        "assert_eq!(super::add(3, 1), 5)",
    );
    project.write("src/lib.rs", &lib);
    let mut failed_in = Vec::new();
    for k in 1..=2 {
        let out = project
            .std_cmd()
            .args([
                "run",
                "--shard",
                &format!("{k}/2"),
                "--out",
                &format!("shards/{k}"),
            ])
            .output()
            .unwrap();
        if out.status.code() == Some(1) {
            failed_in.push(k);
        }
    }
    assert_eq!(failed_in.len(), 1, "one shard holds the failing test");
    let (report, _) = merge(&project, &["shards"], 1);
    let unit = row(&report, "unit");
    assert_eq!(unit["result"], "FAIL");
    assert_eq!(unit["detail"]["test_counts"]["failed"], 1);
    assert_eq!(unit["detail"]["test_counts"]["passed"], 5);
    let shard = format!("{}/2", failed_in[0]);
    assert!(
        unit["detail"]["summary"]
            .as_str()
            .unwrap()
            .starts_with(&format!("shard {shard}: ")),
        "{}",
        unit["detail"]["summary"]
    );
    let markdown = project.stdout_of(&["render", "--format", "markdown", "report.json"]);
    assert!(markdown.contains("| unit | ❌ 1 of 6 ×2 |"), "{markdown}");
    assert!(
        markdown.contains(&format!("- shard {shard} failed: ")),
        "{markdown}"
    );
    assert!(markdown.contains("tests::adds_03"), "{markdown}");
}

/// A manifest that splits `linux` in 3, its `unit` check failing in the shard named by
/// `FAIL_SHARD` (set by the test for one leg).
const SHELL_SHARDS: &str = "version: 1\nenvironments:\n  - name: linux\n    shards: 3\nchecks:\n  - id: unit\n    run: 'echo \"slice {shard} of {shards} ($VERIFY_MATRIX_SHARD/$VERIFY_MATRIX_SHARDS)\"; test \"${FAIL_SHARD:-0}\" != \"{shard}\"'\n  - id: lint\n    run: echo lint\n";

#[test]
fn a_shard_rerun_replaces_only_that_shard_and_the_run_is_verified() {
    let project = Project::new(SHELL_SHARDS);
    let leg = |k: u32, attempt: &str, fail: &str| {
        project
            .std_cmd()
            .args([
                "run",
                "--shard",
                &format!("{k}/3"),
                "--out",
                &format!("legs/{k}-{attempt}"),
            ])
            .env("GITHUB_REPOSITORY", "o/r")
            .env("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
            .env("GITHUB_RUN_ID", "4242")
            .env("GITHUB_RUN_ATTEMPT", attempt)
            .env("FAIL_SHARD", fail)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(leg(1, "1", "0"), Some(0));
    assert_eq!(leg(2, "1", "2"), Some(1), "shard 2 fails in attempt 1");
    assert_eq!(leg(3, "1", "0"), Some(0));
    let log = project.read("legs/2-1/logs/linux@2of3/unit.log");
    assert!(log.contains("slice 2 of 3 (2/3)"), "{log}");
    let (report, _) = merge(&project, &["legs"], 1);
    assert!(
        report["reasons"].to_string().contains("shard 2/3"),
        "{}",
        report["reasons"]
    );

    // "Re-run failed jobs": shard 2 alone, attempt 2.
    assert_eq!(leg(2, "2", "0"), Some(0));
    let (report, stderr) = merge(&project, &["legs"], 0);
    assert_eq!(report["verdict"], "VERIFIED", "{}", report["reasons"]);
    assert!(
        stderr.contains("an earlier attempt of shard 2 of environment `linux` (attempt 1) than the latest (attempt 2)"),
        "{stderr}"
    );
    assert_eq!(report["attempts"]["linux"], 2);
}

#[test]
fn a_shards_own_run_is_never_a_verdict_for_its_environment() {
    let project = Project::new(SHELL_SHARDS);
    let out = project
        .std_cmd()
        .args(["run", "--shard", "2/3"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        !stdout.contains("All Required Environments: VERIFIED"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Partial run: 0 of 2 required pairs; not a verdict"),
        "{stdout}"
    );
    assert!(
        project
            .path()
            .join("verify-matrix-results/verify-matrix-linux@2of3.json")
            .exists()
    );
}

#[test]
fn shard_flags_and_manifests_that_cannot_be_split_are_refused_with_their_place() {
    let project = Project::new(SHELL_SHARDS);
    for (shard, says) in [
        ("5/4", "there is no shard 5 of 4"),
        ("0/3", "there is no shard 0 of 3"),
        ("1/0", "the number of shards must be from 1 to 256"),
        ("2", "give K/N"),
        (
            "1/2",
            "`linux` is split into 3 shards, not 2; give --shard K/3",
        ),
    ] {
        let stderr = run(&project, &["--shard", shard], 2);
        assert!(stderr.contains(says), "--shard {shard}: {stderr}");
    }
    project.write(
        "unsharded.yml",
        "version: 1\nenvironments: [{name: linux}]\nchecks:\n  - {id: a, run: 'true'}\n",
    );
    let stderr = run(
        &project,
        &["--manifest", "unsharded.yml", "--shard", "1/2"],
        2,
    );
    assert!(stderr.contains("`linux` is not sharded"), "{stderr}");

    project.write(
        "bad.yml",
        "version: 1\nenvironments:\n  - name: linux\n    shards: 0\n  - name: mac\n    shards: 257\n  - name: win\nchecks:\n  - id: unit\n    run: cargo nextest run --partition count:{shard}/{shards}\n    environment: win\n  - id: py\n    run: pytest {tests}\n    split: timing\n    list: pytest --collect-only -q\n    environment: mac\n  - id: lone\n    run: echo hi\n    shards: 2\n",
    );
    project.plan_refuses(
        "bad.yml",
        &[
            "bad.yml:4:13 (environments[0].shards)",
            "`shards: 0` splits the tests among no runner",
            "bad.yml:6:13 (environments[1].shards)",
            "257 shards are more than the most allowed, 256",
            "bad.yml:10:10 (checks[0].run)",
            "`{shard}` in a check of `win`, which is not sharded",
            "bad.yml:14:12 (checks[1].split)",
            "`split: timing` needs `reports:`",
            "(checks[2].shards)",
            "not how its runner takes a slice",
        ],
    );
}

/// A pytest suite of seven tests, one of them slow, split three ways by timing.
fn pytest_project() -> Project {
    let project = Project::new(
        "version: 1\nenvironments:\n  - name: linux\n    shards: 3\nchecks:\n  - id: py\n    test: python3 -m pytest -q -p no:cacheprovider --junitxml=report.xml {tests}\n    split: timing\n    list: python3 -m pytest -q -p no:cacheprovider --collect-only\n    reports: report.xml\n",
    );
    let quick: String = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .map(|t| format!("def test_{t}():\n    assert True\n"))
        .collect();
    project.write(
        "tests/test_calc.py",
        &format!("import time\n\ndef test_slow():\n    time.sleep(0.4)\n\n{quick}"),
    );
    project
}

/// pytest's node id of the test its JUnit report names `tests.test_calc › test_a`.
fn node_id(id: &str) -> String {
    let (suite, name) = id.split_once(" › ").unwrap();
    format!("{}.py::{name}", suite.replace('.', "/"))
}

/// The test ids a shard was given (its `{tests_file}`).
fn share_of(project: &Project, out: &str, k: u32, n: u32) -> Vec<String> {
    project
        .read(&format!("{out}/splits/linux@{k}of{n}/py.tests"))
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn pytest_node_ids_are_split_by_the_historys_timings_and_every_test_runs_once() {
    let project = pytest_project();
    // The first run, whole, records every test's duration in the history.
    run(&project, &["--out", "whole"], 0);
    let whole: BTreeSet<String> = test_ids(&project, "whole/verify-matrix-linux.json")
        .iter()
        .map(|id| node_id(id))
        .collect();
    assert_eq!(whole.len(), 7, "{whole:?}");
    let merged = project
        .std_cmd()
        .args(["merge", "--out", "whole.json", "whole"])
        .output()
        .unwrap();
    assert!(merged.status.success(), "{merged:?}");
    let added = project
        .std_cmd()
        .args(["history", "add", "whole.json"])
        .output()
        .unwrap();
    assert!(added.status.success(), "{added:?}");

    let mut union = Vec::new();
    for k in 1..=3 {
        run_shard(&project, k, 3, "shards");
        let share = share_of(&project, &format!("shards/{k}"), k, 3);
        let file = format!("shards/{k}/verify-matrix-linux@{k}of3.json");
        // What ran is what the shard was given: pytest's ids are its node ids.
        let ran: BTreeSet<String> = test_ids(&project, &file)
            .iter()
            .map(|id| node_id(id))
            .collect();
        assert_eq!(ran, share.iter().cloned().collect(), "shard {k}");
        let split = &project.json(&file)["checks"][0]["sharded"]["split"];
        assert_eq!(split["listed"], 7);
        assert_eq!(split["timed"], 7, "every test had a recorded duration");
        union.extend(share);
    }
    // The slow test alone balances the other two shards' six quick ones.
    let alone: Vec<String> = (1..=3)
        .map(|k| share_of(&project, &format!("shards/{k}"), k, 3))
        .find(|s| s.iter().any(|id| id.ends_with("::test_slow")))
        .unwrap();
    assert_eq!(alone, ["tests/test_calc.py::test_slow"]);
    let distinct: BTreeSet<String> = union.iter().cloned().collect();
    assert_eq!(
        distinct.len(),
        union.len(),
        "a test was in two shares: {union:?}"
    );
    assert_eq!(distinct, whole);
    let (report, _) = merge(&project, &["shards"], 0);
    assert_eq!(report["verdict"], "VERIFIED");
    assert_eq!(row(&report, "py")["detail"]["tests_executed"], 7);

    // The history records each shard's time; `history show` gives their spread.
    project
        .cmd()
        .args(["history", "add", "report.json"])
        .assert()
        .success();
    let shown: Value =
        serde_json::from_str(&project.stdout_of(&["history", "show", "--format", "json"])).unwrap();
    let spread = &shown[0]["shards"];
    assert_eq!(spread["shards"], 3, "{shown:#}");
    let (slowest, fastest) = (
        spread["slowest_ms"].as_u64().unwrap(),
        spread["fastest_ms"].as_u64().unwrap(),
    );
    assert!(slowest >= 400 && fastest < slowest, "{spread}");
    let table = project.stdout_of(&["history", "show"]);
    assert!(
        table.contains("Shards (last run)")
            && table.contains(&format!("3: slowest {slowest} ms, fastest {fastest} ms")),
        "{table}"
    );

    // A shard that split by another history (here none: an equal-count split) may
    // leave a test in no shard: the pair fails, never passes.
    std::fs::rename(
        project.path().join(".verify-matrix"),
        project.path().join("elsewhere"),
    )
    .unwrap();
    run(&project, &["--shard", "2/3", "--out", "other/2"], 0);
    common::copy_dir(
        &project.path().join("shards/1"),
        &project.path().join("other/1"),
    );
    common::copy_dir(
        &project.path().join("shards/3"),
        &project.path().join("other/3"),
    );
    let (report, _) = merge(&project, &["other"], 1);
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    let reasons = report["reasons"].to_string();
    assert!(reasons.contains("split the tests differently"), "{reasons}");
}

/// jest and jest-junit, installed by scripts/test.sh.
fn jest_dir() -> std::path::PathBuf {
    let dir = std::env::var_os("VERIFY_MATRIX_JEST")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| common::repo_root().join("target/tools/jest"));
    assert!(
        dir.join("node_modules/jest/bin/jest.js").is_file(),
        "jest is not installed in {}: scripts/test.sh installs it",
        dir.display()
    );
    dir
}

#[test]
fn jest_shards_cover_the_suite_by_file() {
    let jest = jest_dir();
    let command = format!(
        "node {} --ci --shard={{shard}}/{{shards}} --reporters=default --reporters={}",
        jest.join("node_modules/jest/bin/jest.js").display(),
        jest.join("node_modules/jest-junit").display()
    );
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - name: node\n    shards: 3\n    env:\n      JEST_JUNIT_OUTPUT_FILE: junit.xml\n      JEST_JUNIT_CLASSNAME: '{{filepath}}'\nchecks:\n  - id: unit\n    test: '{command}'\n    reports: junit.xml\n"
    ));
    project.write(
        "package.json",
        "{\"name\": \"sharded\", \"private\": true}\n",
    );
    for i in 1..=7 {
        project.write(
            &format!("src/m{i}.test.js"),
            &format!("test('m{i} adds', () => {{ expect({i} + 1).toBe({}); }});\ntest('m{i} subtracts', () => {{ expect({i} - 1).toBe({}); }});\n", i + 1, i - 1),
        );
    }
    let ids = |path: &str| -> Vec<String> { test_ids(&project, path) };
    run(&project, &["--out", "whole"], 0);
    let whole: BTreeSet<String> = ids("whole/verify-matrix-node.json").into_iter().collect();
    assert_eq!(whole.len(), 14, "{whole:?}");
    let mut union = Vec::new();
    for k in 1..=3 {
        run_shard(&project, k, 3, "shards");
        let share = ids(&format!("shards/{k}/verify-matrix-node@{k}of3.json"));
        assert!(
            !share.is_empty() && share.len() < 14,
            "shard {k}: {share:?}"
        );
        union.extend(share);
    }
    let distinct: BTreeSet<String> = union.iter().cloned().collect();
    assert_eq!(
        distinct.len(),
        union.len(),
        "a test ran in two shards: {union:?}"
    );
    assert_eq!(distinct, whole);
    let (report, _) = merge(&project, &["shards"], 0);
    assert_eq!(row(&report, "unit")["detail"]["tests_executed"], 14);
}

#[test]
fn the_listing_runs_as_a_check_does_and_a_failed_one_is_an_error_with_its_reason() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: linux, shards: 2}]\nchecks:\n  - id: t\n    run: 'cat {tests_file} > ran-$VERIFY_MATRIX_SHARD.txt'\n    split: timing\n    list: 'test -z \"$GITHUB_TOKEN\" && printf \"tests/a\\ntests/b\\ntests/c\\n\"'\n    reports: r.xml\n    must-be-effective: false\n  - id: broken\n    run: 'true {tests}'\n    split: timing\n    list: 'echo \"no collector here\" >&2; exit 4'\n    reports: r.xml\n",
    );
    // The tool's own token never reaches the listing, as it never reaches a check.
    let out = project
        .std_cmd()
        .args(["run", "--shard", "1/2"])
        .env("GITHUB_TOKEN", "ghs_never_seen")
        .output()
        .unwrap();
    let result = project.json("verify-matrix-results/verify-matrix-linux@1of2.json");
    let t = &result["checks"][0];
    assert_eq!(t["sharded"]["split"]["listed"], 3, "{out:?}\n{t}");
    assert_eq!(project.read("ran-1.txt").lines().count(), 2);
    // A listing that fails is the check's ERROR, its reason in the log.
    let broken = &result["checks"][1];
    assert_eq!(broken["status"], "ERROR", "{broken}");
    assert!(
        broken["summary"]
            .as_str()
            .unwrap()
            .starts_with("listing the tests failed: exit 4"),
        "{broken}"
    );
    let log = project.read("verify-matrix-results/logs/linux@1of2/broken.log");
    assert!(log.contains("no collector here"), "{log}");
}

#[test]
fn shard_parts_an_unsharded_result_claims_are_dropped_as_it_is_read() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: linux}]\nchecks:\n  - { id: unit, run: 'true' }\n",
    );
    run(&project, &["--out", "whole"], 0);
    let file = "whole/verify-matrix-linux.json";
    let mut result = project.json(file);
    let part = |k: u32| {
        serde_json::json!({
            "shard": {"index": k, "count": 3}, "status": "FAIL", "exit_code": 1,
            "duration_ms": 1, "tests_executed": 0, "summary": "made up", "log_path": null
        })
    };
    result["checks"][0]["sharded"] = serde_json::json!({
        "parts": [part(1), part(2), part(3)],
        "overlapped": ["s › t"],
        "overlap_count": 1
    });
    project.write(file, &result.to_string());
    let (report, _) = merge(&project, &["whole"], 0);
    assert_eq!(report["verdict"], "VERIFIED");
    let unit = row(&report, "unit");
    assert_eq!(unit["detail"]["sharded"], Value::Null, "{unit:#}");
    let markdown = project.stdout_of(&["render", "--format", "markdown", "report.json"]);
    assert!(!markdown.contains("×3"), "{markdown}");
    assert!(!markdown.contains("made up"), "{markdown}");
}

/// `merge` reads a shard's facts first and its checks only when its environment's
/// shards are combined (so a matrix split many ways is never held whole). A file that
/// does not read the second time as it did the first is the error it is, as when it is
/// read whole at once, never a shard left out: a second copy of shard 3, failing, with
/// a check that is no check, leaves the passing copy to stand alone if it is only left
/// out; so would an earlier attempt's malformed file. A FIFO is read once (a second
/// reading would wait for a writer).
#[cfg(unix)]
#[test]
fn a_shard_file_that_does_not_read_again_as_it_did_stops_the_merge() {
    use std::io::Write as _;
    let project = Project::new(SHELL_SHARDS);
    for k in 1..=3 {
        run_shard(&project, k, 3, "legs");
    }
    let status = project
        .std_cmd()
        .args(["run", "--shard", "3/3", "--out", "failing"])
        .env("FAIL_SHARD", "3")
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    let copy = "failing/verify-matrix-linux@3of3.json";
    let mut failing = project.json(copy);
    failing["checks"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"junk": 1}));
    project.write(copy, &failing.to_string());
    let refused = || {
        let out = project
            .std_cmd()
            .args(["merge", "--out", "report.json", "legs", "failing"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(4));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = refused();
    assert!(
        stderr.contains(&format!("result file `{copy}` is not valid")),
        "{stderr}"
    );

    // The same copy with a key said twice is still a result, refused: never passed over
    // as something else, under its own name or another.
    for name in [copy, "failing/copy.json"] {
        let text = failing
            .to_string()
            .replacen('{', "{\"rows\":1,\"rows\":2,", 1);
        std::fs::remove_file(project.path().join(copy)).unwrap();
        project.write(name, &text);
        let stderr = refused();
        assert!(
            stderr.contains(&format!("result file `{name}` is not valid")),
            "{name}: {stderr}"
        );
        if name != copy {
            std::fs::rename(project.path().join(name), project.path().join(copy)).unwrap();
        }
    }

    // An earlier attempt of shard 1, malformed the same way: left out for the later
    // one, but read all the same.
    std::fs::remove_file(project.path().join(copy)).unwrap();
    let earlier = "failing/verify-matrix-linux@1of3.json";
    let mut first = project.json("legs/1/verify-matrix-linux@1of3.json");
    first["finished_at"] = "2020-01-01T00:00:00Z".into();
    first["checks"].as_array_mut().unwrap().insert(0, 1.into());
    project.write(earlier, &first.to_string());
    let stderr = refused();
    assert!(
        stderr.contains(&format!("result file `{earlier}` is not valid")),
        "{stderr}"
    );
    std::fs::remove_file(project.path().join(earlier)).unwrap();

    // An environment the manifest does not declare, its file malformed the same way.
    let mac = "failing/verify-matrix-mac@1of2.json";
    let mut other = failing.clone();
    other["environment"] = "mac".into();
    other["shard"] = serde_json::json!({"index": 1, "count": 2});
    project.write(mac, &other.to_string());
    let stderr = refused();
    assert!(
        stderr.contains(&format!("result file `{mac}` is not valid")),
        "{stderr}"
    );

    // A FIFO named as a shard, given by its path, is read once.
    let fifo = project.path().join("fifo/verify-matrix-linux@3of3.json");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let bytes = std::fs::read(project.path().join("legs/3/verify-matrix-linux@3of3.json")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            writer.write_all(&bytes).unwrap();
        })
    };
    let mut child = project
        .std_cmd()
        .args([
            "merge",
            "--out",
            "report.json",
            "legs/1",
            "legs/2",
            "fifo/verify-matrix-linux@3of3.json",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("merge still waits on the FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    writer.join().unwrap();
    assert_eq!(code, Some(0));
    assert_eq!(project.json("report.json")["verdict"], "VERIFIED");
}

/// Which way a file is read first follows its name (`verify-matrix-ENV@KofN.json`, as
/// `run --shard` names it), but what it is follows its facts: a shard's result under
/// another name is combined all the same, and a whole environment's result under a
/// shard's name is read as the whole environment's. The notes of a shard's log paths,
/// which come out as its checks are read again, are still shown, once per file.
#[test]
fn a_result_is_judged_by_its_facts_whatever_its_name() {
    let project = Project::new(SHELL_SHARDS);
    for k in 1..=3 {
        run_shard(&project, k, 3, "legs");
    }
    let (named, _) = merge(&project, &["legs"], 0);
    std::fs::rename(
        project.path().join("legs/2/verify-matrix-linux@2of3.json"),
        project.path().join("legs/2/results.json"),
    )
    .unwrap();
    let (renamed, _) = merge(&project, &["legs"], 0);
    assert_eq!(renamed["verdict"], "VERIFIED");
    assert_eq!(named["rows"], renamed["rows"]);
    assert_eq!(row(&renamed, "unit")["detail"]["summary"], "3 shards");

    let out = project
        .std_cmd()
        .args(["merge", "--out", "elsewhere/report.json", "legs"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for file in [
        "legs/1/verify-matrix-linux@1of3.json",
        "legs/2/results.json",
        "legs/3/verify-matrix-linux@3of3.json",
    ] {
        let notes = stderr
            .lines()
            .filter(|l| l.contains(file) && l.contains("outside the report's folder"))
            .count();
        assert_eq!(notes, 1, "{file}: {stderr}");
    }

    let whole = Project::new(
        "version: 1\nenvironments: [{name: linux}]\nchecks:\n  - { id: unit, run: 'true' }\n",
    );
    run(&whole, &["--out", "whole"], 0);
    std::fs::rename(
        whole.path().join("whole/verify-matrix-linux.json"),
        whole.path().join("whole/verify-matrix-linux@1of2.json"),
    )
    .unwrap();
    let (report, _) = merge(&whole, &["whole"], 0);
    assert_eq!(report["verdict"], "VERIFIED");
    assert_eq!(row(&report, "unit")["result"], "PASS");
    assert_eq!(row(&report, "unit")["detail"]["sharded"], Value::Null);
}

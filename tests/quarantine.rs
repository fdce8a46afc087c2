//! Quarantine, on a real pytest suite: a held-back failure still runs and is shown but
//! does not fail its pair; an entry past its date fails it; a glob over every test is
//! refused; an entry no test matches is named; a pull request that adds one weakens the
//! manifest; and a result's own quarantine marks are never taken.

mod common;

use common::{Project, check_result};
use serde_json::Value;

/// Two tests pass, `test_upload_retry` fails; `test_parse` fails when `BREAK_PARSE`
/// is set.
const SUITE: &str = r#"import os

def test_ok():
    assert 1 + 1 == 2

def test_upload_retry():
    assert False, "the upload was retried once too often"

def test_parse():
    assert "BREAK_PARSE" not in os.environ, "parse broke"
"#;

/// The label the comment shows for a test of the suite.
const UPLOAD: &str = "tests.test_net › test_upload_retry";

fn manifest(quarantine: &str) -> String {
    format!(
        "version: 1\nenvironments:\n  - name: lin\nchecks:\n  - id: unit\n    test: python3 -m pytest -p no:cacheprovider --junitxml=out/junit.xml tests\n    reports: out/junit.xml\n    timeout: 2m\n{quarantine}"
    )
}

fn entry(test: &str, until: &str) -> String {
    format!(
        "    quarantine:\n      - test: '{test}'\n        reason: upstream storage mock is racy (#812)\n        until: {until}\n        owner: '@ana'\n"
    )
}

fn project(quarantine: &str) -> Project {
    let project = Project::new(&manifest(quarantine));
    project.write("tests/__init__.py", "");
    project.write("tests/test_net.py", SUITE);
    project
}

/// `run`, then `merge` into `report.json` and the markdown matrix: (run's exit code,
/// the report, the markdown).
fn run_and_merge(project: &Project, env: &[(&str, &str)]) -> (i32, Value, String) {
    let mut run = project.std_cmd();
    run.arg("run");
    for (k, v) in env {
        run.env(k, v);
    }
    let code = run.output().unwrap().status.code().unwrap();
    let out = project
        .std_cmd()
        .args([
            "merge",
            "--out",
            "report.json",
            "--format",
            "markdown",
            "verify-matrix-results",
        ])
        .output()
        .unwrap();
    let markdown = String::from_utf8_lossy(&out.stdout).into_owned();
    (code, project.json("report.json"), markdown)
}

/// What a pair's result says of it, whole: its cause when the summary was cut.
fn said(check: &Value) -> String {
    check["cause"]
        .as_str()
        .or(check["summary"].as_str())
        .unwrap()
        .to_owned()
}

#[test]
fn a_quarantined_failure_runs_is_shown_and_does_not_fail_its_pair() {
    let project = project(&entry(UPLOAD, "2999-12-31"));
    let (code, report, markdown) = run_and_merge(&project, &[]);
    assert_eq!(code, 0, "{markdown}");
    let unit = check_result(&project, "lin", "unit");
    assert_eq!(unit["status"], "PASS", "{unit}");
    assert_eq!(unit["exit_code"], 1);
    assert_eq!(unit["test_counts"]["failed"], 1);
    assert_eq!(unit["test_counts"]["quarantined"], 1);
    let summary = unit["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("2 tests passed, 1 failed in quarantine (exit 1) in "),
        "{summary}"
    );
    let upload = unit["tests"]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "test_upload_retry")
        .unwrap();
    assert_eq!(upload["outcome"], "failed");
    assert_eq!(upload["quarantined"], true);
    let used = &unit["tests"]["quarantine"][0];
    assert_eq!(used["test"], UPLOAD);
    assert_eq!(used["matched"], 1);
    assert_eq!(used["held"], 1);
    assert_eq!(used["until"], "2999-12-31");
    assert_eq!(report["verdict"], "VERIFIED", "{markdown}");
    // The grid counts it; the comment names it, its reason, date and owner.
    assert!(markdown.contains("✅ 3 🧪 1"), "{markdown}");
    assert!(
        markdown
            .contains("🧪 unit in lin: failed, held back: tests.test_net › test_upload_retry\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("🧪 unit in lin: the quarantine of “tests.test_net › test_upload_retry” held back 1 failure — upstream storage mock is racy (#812) (until 2999-12-31, owner &#64;ana)"),
        "{markdown}"
    );

    // A failure it does not cover fails the pair, and is listed before the held one.
    let (code, report, markdown) = run_and_merge(&project, &[("BREAK_PARSE", "1")]);
    assert_eq!(code, 1);
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    let unit = check_result(&project, "lin", "unit");
    assert_eq!(unit["status"], "FAIL");
    assert_eq!(unit["test_counts"]["quarantined"], 1);
    let parse = markdown
        .find("test_parse")
        .expect("the real failure is listed");
    let upload = markdown
        .find("test_upload_retry (🧪 quarantined)")
        .expect("the held failure is marked");
    assert!(parse < upload, "{markdown}");
}

#[test]
fn an_expired_entry_or_a_glob_over_every_test_fails_the_pair() {
    let project = project(&entry(UPLOAD, "2020-01-31"));
    let (code, report, markdown) = run_and_merge(&project, &[]);
    assert_eq!(code, 1);
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    let unit = check_result(&project, "lin", "unit");
    assert_eq!(unit["status"], "FAIL");
    assert_eq!(
        said(&unit),
        format!("the quarantine of `{UPLOAD}` ended on 2020-01-31 (owner: @ana)")
    );
    assert!(unit["test_counts"].get("quarantined").is_none(), "{unit}");
    assert!(markdown.contains("**ended 2020-01-31**"), "{markdown}");

    // Even when its test passes: the entry must be renewed or removed.
    project.write(
        "verify-matrix.yml",
        &manifest(&entry("tests.test_net › test_ok", "2020-01-31")),
    );
    let (code, _, _) = run_and_merge(&project, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        said(&check_result(&project, "lin", "unit")),
        "the quarantine of `tests.test_net › test_ok` ended on 2020-01-31 (owner: @ana)"
    );

    // A glob that matches every test of the check hides the suite: refused.
    project.write(
        "verify-matrix.yml",
        &manifest(&entry("tests.test_net › test_*", "2999-12-31")),
    );
    let (code, _, _) = run_and_merge(&project, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        said(&check_result(&project, "lin", "unit")),
        "the quarantine glob `tests.test_net › test_*` matches every test of the check: it would hide the whole suite"
    );
}

#[test]
fn an_entry_that_matches_no_test_is_named_and_a_glob_holds_what_it_matches() {
    let project = project(&format!(
        "{}      - test: 'tests.test_net › test_renamed_long_ago'\n        reason: gone\n        until: 2999-01-01\n",
        entry("*upload*", "2999-12-31")
    ));
    let (code, _, markdown) = run_and_merge(&project, &[]);
    assert_eq!(code, 0, "{markdown}");
    let unit = check_result(&project, "lin", "unit");
    assert_eq!(unit["tests"]["quarantine"][0]["held"], 1);
    assert_eq!(unit["tests"]["quarantine"][1]["matched"], 0);
    assert!(
        markdown.contains("the quarantine of “tests.test_net › test_renamed_long_ago” matched no test: a renamed or deleted test, the entry can go — gone (until 2999-01-01)"),
        "{markdown}"
    );
}

/// The manifest's mistakes are named where they are written.
#[test]
fn a_quarantine_without_a_reason_or_a_date_or_over_everything_is_refused_where_written() {
    for (quarantine, said) in [
        (
            "    quarantine:\n      - { test: 'a › b', until: 2999-01-01 }\n",
            "the quarantine of `a › b` has no `reason`; say why it is held back (an issue link, the cause)\n  --> verify-matrix.yml:10:9 (checks[0].quarantine[0])",
        ),
        (
            "    quarantine:\n      - { test: 'a › b', reason: racy }\n",
            "the quarantine of `a › b` has no `until`; give the last day it holds (`YYYY-MM-DD`): a quarantine without an end is how tests are forgotten\n  --> verify-matrix.yml:10:9 (checks[0].quarantine[0])",
        ),
        (
            "    quarantine:\n      - { test: 'a › b', reason: racy, until: 31/01/2027 }\n",
            "`31/01/2027` is not a date; write it as YYYY-MM-DD (`2027-01-31`)\n  --> verify-matrix.yml:10:47 (checks[0].quarantine[0].until)",
        ),
        (
            "    quarantine:\n      - { test: '*', reason: racy, until: 2999-01-01 }\n",
            "`*` matches every test: a quarantine names the tests it holds back, not the whole suite\n  --> verify-matrix.yml:10:17 (checks[0].quarantine[0].test)",
        ),
    ] {
        let project = project(quarantine);
        let out = project.std_cmd().arg("plan").output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{quarantine}: {stderr}");
        assert!(stderr.contains(said), "{quarantine}: {stderr}");
    }
    let project = Project::new(
        "version: 1\nenvironments: [{name: lin}]\nchecks:\n  - id: unit\n    run: 'true'\n    quarantine: [{ test: a, reason: r, until: 2999-01-01 }]\n",
    );
    let out = project.std_cmd().arg("plan").output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("`quarantine` needs `reports`"),
        "{out:?}"
    );
}

/// A pull request that quarantines a test (or keeps one quarantined longer) weakens
/// the manifest: NOT VERIFIED until a person allows it.
#[test]
fn a_quarantine_added_by_the_pull_request_weakens_the_manifest() {
    let project = project(&entry(UPLOAD, "2999-12-31"));
    project.write("trusted.yml", &manifest(""));
    let (code, _, _) = run_and_merge(&project, &[]);
    assert_eq!(code, 0);
    let merge = |base: &str, allow: bool| {
        let mut cmd = project.std_cmd();
        cmd.args(["merge", "--out", "report.json", "--base-manifest", base]);
        if allow {
            cmd.arg("--allow-weakening");
        }
        let out = cmd.arg("verify-matrix-results").output().unwrap();
        (out.status.code(), project.json("report.json"))
    };
    let (code, report) = merge("trusted.yml", false);
    assert_eq!(code, Some(1));
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    let reasons = report["reasons"].to_string();
    assert!(
        reasons.contains(&format!(
            "check `unit`: `{UPLOAD}` was quarantined until 2999-12-31 (upstream storage mock is racy (#812))"
        )),
        "{reasons}"
    );
    let (code, report) = merge("trusted.yml", true);
    assert_eq!(code, Some(0), "{report}");
    // Kept longer: a weakening too. Kept as it was: none.
    project.write("trusted.yml", &manifest(&entry(UPLOAD, "2999-01-01")));
    let (code, report) = merge("trusted.yml", false);
    assert_eq!(code, Some(1));
    assert!(
        report["reasons"]
            .to_string()
            .contains("was extended from 2999-01-01 to 2999-12-31"),
        "{report}"
    );
    project.write("trusted.yml", &manifest(&entry(UPLOAD, "2999-12-31")));
    assert_eq!(merge("trusted.yml", false).0, Some(0));
}

/// The quarantine is the manifest's: a result that marks its own failures quarantined,
/// or claims a pass over failures no entry holds, contradicts its facts.
#[test]
fn a_results_own_quarantine_marks_are_not_taken() {
    let project = project("");
    let (code, _, _) = run_and_merge(&project, &[]);
    assert_eq!(code, 1);
    let path = "verify-matrix-results/verify-matrix-lin.json";
    let mut result = project.json(path);
    let unit = result["checks"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["command_id"] == "unit")
        .unwrap();
    unit["status"] = "PASS".into();
    unit["test_counts"]["quarantined"] = 1.into();
    for case in unit["tests"]["cases"].as_array_mut().unwrap() {
        if case["outcome"] == "failed" {
            case["quarantined"] = true.into();
        }
    }
    unit["tests"]["quarantine"] = serde_json::json!([{
        "test": UPLOAD, "reason": "r", "until": "2999-12-31", "matched": 1, "held": 1
    }]);
    project.write(path, &result.to_string());
    let out = project
        .std_cmd()
        .args(["merge", "--out", "report.json", "verify-matrix-results"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report = project.json("report.json");
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    let reason = report["contradictions"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("it claims PASS, but exit code 1 does not pass"),
        "{reason}"
    );
    // The marks are worked out again from the manifest: none.
    let row = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "unit")
        .unwrap();
    assert!(row["detail"]["tests"].get("quarantine").is_none(), "{row}");
    assert!(row["detail"]["test_counts"].get("quarantined").is_none());
}

/// What a fake runner's report lists: `test_ok` passed, `test_flaky` failed, and (with
/// `error`) a collection error of `tests.test_c`.
fn junit(error: bool) -> String {
    let extra = if error {
        r#"<testcase classname="" name="tests.test_c"><error message="collection failure">ImportError</error></testcase>"#
    } else {
        ""
    };
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="{}" failures="1" skipped="0" tests="{}"><testcase classname="tests.test_a" name="test_ok"/><testcase classname="tests.test_a" name="test_flaky"><failure message="boom">x</failure></testcase>{extra}</testsuite></testsuites>"#,
        u8::from(error),
        2 + u8::from(error)
    )
}

/// A runner that writes `r.xml` as its report and exits `code`, with `quarantine`.
fn fake(code: &str, quarantine: &str) -> Project {
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - name: lin\nchecks:\n  - id: unit\n    test: mkdir -p out && cp r.xml out/junit.xml && {code}\n    reports: out/junit.xml\n    quarantine:\n{quarantine}"
    ));
    project.write("r.xml", &junit(false));
    project
}

const FLAKY_ENTRY: &str =
    "      - { test: 'tests.test_a › test_flaky', reason: racy, until: 2999-12-31 }\n";

/// Only the exit code a runner gives for failed tests is explained by held-back
/// failures: a crash, a signal, an internal or usage error, or no tests collected is
/// not, whatever the report lists.
#[test]
fn a_held_back_failure_explains_only_a_failed_tests_exit_code() {
    for (code, passes) in [
        ("exit 1", true),
        ("exit 0", true),
        ("exit 101", true),
        ("exit 2", false),
        ("exit 5", false),
        ("exit 3", false),
        ("kill -SEGV $$", false),
    ] {
        let project = fake(code, FLAKY_ENTRY);
        let out = project.std_cmd().arg("run").output().unwrap();
        let unit = check_result(&project, "lin", "unit");
        assert_eq!(
            out.status.code(),
            Some(i32::from(!passes)),
            "{code}: {unit}"
        );
        assert_eq!(
            unit["status"],
            if passes { "PASS" } else { "FAIL" },
            "{code}: {unit}"
        );
        // Still counted as held, and shown, either way.
        assert_eq!(unit["test_counts"]["quarantined"], 1, "{code}: {unit}");
    }
    // A check that must exit otherwise than 0 has no failed-tests code to explain.
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - name: lin\nchecks:\n  - id: unit\n    test: mkdir -p out && cp r.xml out/junit.xml && exit 1\n    exit-code: 3\n    reports: out/junit.xml\n    quarantine:\n{FLAKY_ENTRY}"
    ));
    project.write("r.xml", &junit(false));
    assert_eq!(
        project.std_cmd().arg("run").status().unwrap().code(),
        Some(1)
    );
}

/// An error — a test that could not run, a collection error — is never held back, by
/// its name or by a glob.
#[test]
fn an_error_is_never_held_back() {
    for entry in [
        "      - { test: 'tests.test_c', reason: flaky import, until: 2999-12-31 }\n",
        "      - { test: '*test_c*', reason: flaky import, until: 2999-12-31 }\n",
    ] {
        let project = fake("exit 1", &format!("{FLAKY_ENTRY}{entry}"));
        project.write("r.xml", &junit(true));
        let out = project.std_cmd().arg("run").output().unwrap();
        let unit = check_result(&project, "lin", "unit");
        assert_eq!(out.status.code(), Some(1), "{entry}: {unit}");
        assert_eq!(unit["status"], "FAIL", "{entry}");
        assert_eq!(unit["test_counts"]["quarantined"], 1, "{entry}: {unit}");
    }
}

/// `run` of a check whose runner writes `report` and exits 1, with one quarantine
/// entry naming `entry`: (run's exit code, the check's result).
fn run_with_entry(report: &str, entry: &str) -> (Option<i32>, Value) {
    let project = fake(
        "exit 1",
        &format!("      - {{ test: '{entry}', reason: r, until: 2999-12-31 }}\n"),
    );
    project.write("r.xml", report);
    let out = project.std_cmd().arg("run").output().unwrap();
    (out.status.code(), check_result(&project, "lin", "unit"))
}

/// Only `*` and `?` are wildcards: a pytest parameter's brackets are the label's own,
/// and a backslash makes a `*` or `?` literal.
#[test]
fn brackets_are_literal_and_a_backslash_escapes_a_wildcard() {
    let report = |name: &str| {
        format!(
            r#"<testsuites><testsuite name="pytest" failures="1" tests="3"><testcase classname="t" name="test_x[a]"/><testcase classname="t" name="test_x[b]"/><testcase classname="t" name="{name}"><failure message="boom"/></testcase></testsuite></testsuites>"#
        )
    };
    for (name, entry, held) in [
        ("test_x[ab]", "t › test_x[ab]", true),
        ("test_x[ab]", "t › test_x[a]", false),
        ("test_star[*]", "t › test_star[\\*]", true),
        ("test_star[x]", "t › test_star[\\*]", false),
    ] {
        let (code, unit) = run_with_entry(&report(name), entry);
        assert_eq!(code, Some(i32::from(!held)), "{entry}: {unit}");
        let held_back = &unit["tests"]["quarantine"][0]["held"];
        assert_eq!(held_back.as_u64(), Some(u64::from(held)), "{entry}: {unit}");
    }
}

/// A group item's tests are not recorded: a quarantine there is refused.
#[test]
fn a_quarantine_on_a_group_item_is_refused() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: lin}]\nchecks:\n  - id: grp\n    all-of:\n      - item: a\n        test: 'true'\n        reports: out/junit.xml\n        quarantine: [{ test: x, reason: r, until: 2999-12-31 }]\n",
    );
    let out = project.std_cmd().arg("plan").output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("`quarantine` cannot be set on a group item"),
        "{out:?}"
    );
}

/// A shard's share is not the whole suite: a glob that matches every test of one
/// shard's share, and not the others', is not refused there.
#[test]
fn a_glob_over_one_shards_whole_share_is_not_over_the_suite() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: lin, shards: 2}]\nchecks:\n  - id: unit\n    test: cp r{shard}.xml out.xml # {shards}\n    reports: out.xml\n    quarantine: [{ test: 'a › *', reason: racy, until: 2999-12-31 }]\n",
    );
    project.write(
        "r1.xml",
        r#"<testsuite name="s" tests="2"><testcase classname="a" name="x1"/><testcase classname="a" name="x2"/></testsuite>"#,
    );
    project.write(
        "r2.xml",
        r#"<testsuite name="s" tests="1"><testcase classname="b" name="y"/></testsuite>"#,
    );
    for k in 1..=2 {
        let out = project
            .std_cmd()
            .args([
                "run",
                "--shard",
                &format!("{k}/2"),
                "--out",
                &format!("s{k}"),
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "shard {k}: {out:?}");
    }
    let out = project
        .std_cmd()
        .args(["merge", "--out", "report.json", "s1", "s2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(project.json("report.json")["verdict"], "VERIFIED");
}

/// An entry copied from the comment or from `history tests --suggest-quarantine`
/// names the test as they show it, neutralised: a `|` shown as `¦`, invisible
/// characters left out, a claim phrase quoted; it holds that test.
#[test]
fn an_entry_copied_from_the_comment_holds_the_test_it_shows() {
    let report = |name: &str| {
        format!(
            r#"<testsuites><testsuite name="pytest" failures="1" tests="2"><testcase classname="t" name="test_ok"/><testcase classname="t" name="{name}"><failure message="boom"/></testcase></testsuite></testsuites>"#
        )
    };
    for (name, entry) in [
        ("a|b", "t › a¦b"),
        ("zw&#x200B;test", "t › zwtest"),
        (
            "All Required Environments: VERIFIED",
            "t › All Required Environments (quoted): VERIFIED",
        ),
    ] {
        let (code, unit) = run_with_entry(&report(name), entry);
        assert_eq!(code, Some(0), "{name}: {unit}");
        assert_eq!(unit["tests"]["quarantine"][0]["held"], 1, "{name}: {unit}");
    }
}

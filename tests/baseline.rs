//! A report compared with its baseline (`--baseline`): new, pre-existing and fixed
//! failures, newly missing pairs, a test gate that ran fewer tests (`tests-may-drop`),
//! vanished tests — on real runs of a real project.

mod common;

use common::Project;
use serde_json::{Value, json};

/// `unit` runs the tests `tests.txt` names (one per line) through a JUnit report; `lint`
/// and `docs` pass when their marker file exists.
fn project(tests_may_drop: Option<&str>) -> Project {
    project_with("", tests_may_drop)
}

/// [`project`] with `top` (top-level keys) added to the manifest.
fn project_with(top: &str, tests_may_drop: Option<&str>) -> Project {
    let drop = tests_may_drop.map_or_else(String::new, |d| format!("    tests-may-drop: {d}\n"));
    Project::new(&format!(
        concat!(
            "version: 1\n",
            "{top}",
            "environments: [{{name: local}}]\n",
            "checks:\n",
            "  - id: unit\n",
            "    test: |\n",
            "      {{ echo '<testsuite name=\"s\">'; while read t; do echo \"<testcase classname=\\\"m\\\" name=\\\"$t\\\"/>\"; done < tests.txt; echo '</testsuite>'; }} > junit.xml\n",
            "    reports: junit.xml\n",
            "{drop}",
            "  - {{ id: lint, run: test -e lint.ok }}\n",
            "  - {{ id: docs, run: test -e docs.ok }}\n",
        ),
        drop = drop,
        top = top
    ))
}

fn run_into(project: &Project, out: &str, report: &str, baseline: Option<&str>) -> Value {
    let _ = std::fs::remove_dir_all(project.path().join(out));
    project.run_env("local", out);
    let mut cmd = project.std_cmd();
    cmd.args(["merge", "--out", report]);
    if let Some(base) = baseline {
        cmd.args(["--baseline", base]);
    }
    let done = cmd.arg(out).output().unwrap();
    assert!(project.path().join(report).exists(), "{done:?}");
    project.json(report)
}

#[test]
fn the_head_is_compared_with_the_base_pair_by_pair() {
    let project = project(None);
    // The base: 5 tests, lint passes, docs fails.
    project.write("tests.txt", "a\nb\nc\nd\ne\n");
    project.write("lint.ok", "");
    let base = run_into(&project, "base", "base.json", None);
    assert_eq!(base["verdict"], "NOT_VERIFIED");
    // The head: 3 tests (d and e gone), lint fails now, docs is fixed.
    project.write("tests.txt", "a\nb\nc\n");
    std::fs::remove_file(project.path().join("lint.ok")).unwrap();
    project.write("docs.ok", "");
    let head = run_into(&project, "head", "head.json", Some("base.json"));
    let unit = head["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "unit")
        .unwrap();
    assert_eq!(unit["result"], "PASS");
    let b = &head["baseline"];
    let pairs = |key: &str| -> Vec<String> {
        b[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                format!(
                    "{} in {}",
                    p["check"].as_str().unwrap(),
                    p["environment"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(pairs("new_failures"), vec!["lint in local"]);
    assert_eq!(pairs("pre_existing"), Vec::<String>::new());
    assert_eq!(pairs("fixed"), vec!["docs in local"]);
    assert_eq!(
        b["test_drops"],
        json!([{"check": "unit", "environment": "local", "base": 5, "head": 3, "allowed_percent": 0.0,
                "vanished": 2, "base_distinct": 5}])
    );
    assert_eq!(
        b["vanished"],
        json!([{"check": "unit", "environment": "local", "count": 2, "tests": ["m › d", "m › e"]}])
    );
    assert_eq!(head["verdict"], "NOT_VERIFIED");
    let reasons: Vec<&str> = head["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        reasons.contains(&"unit in local ran 3 tests; the baseline ran 5, and 2 of the 5 distinct tests the baseline ran vanished (tests-may-drop: 0%)"),
        "{reasons:?}"
    );
    let markdown = project.stdout_of(&["render", "head.json"]);
    assert!(
        markdown.contains(
            "1 new failure, 0 pre-existing, 1 fixed, 0 newly missing, 1 with fewer tests"
        ),
        "{markdown}"
    );
    assert!(
        markdown.contains("- vanished tests: unit in local: 2 (m › d, m › e)"),
        "{markdown}"
    );
    // Each required failure's line in the answer says whether it is new.
    assert!(
        markdown.contains(
            "- ❌ **lint failed in local (exit 1)** · **new**: it passed on the baseline\n"
        ),
        "{markdown}"
    );
}

#[test]
fn a_drop_within_tests_may_drop_passes_and_a_shrunk_suite_alone_is_not_verified() {
    // Everything passes in both; only the suite shrinks, from 4 tests to 3.
    let within = project(Some("25%"));
    within.write("tests.txt", "a\nb\nc\nd\n");
    within.write("lint.ok", "");
    within.write("docs.ok", "");
    assert_eq!(
        run_into(&within, "base", "base.json", None)["verdict"],
        "VERIFIED"
    );
    within.write("tests.txt", "a\nb\nc\n");
    let head = run_into(&within, "head", "head.json", Some("base.json"));
    assert_eq!(head["verdict"], "VERIFIED", "{:#}", head["reasons"]);
    assert_eq!(head["baseline"]["test_drops"], json!([]));
    assert_eq!(head["baseline"]["vanished"][0]["count"], 1);

    let strict = project(None);
    strict.write("tests.txt", "a\nb\nc\nd\n");
    strict.write("lint.ok", "");
    strict.write("docs.ok", "");
    run_into(&strict, "base", "base.json", None);
    strict.write("tests.txt", "a\nb\nc\n");
    let head = run_into(&strict, "head", "head.json", Some("base.json"));
    assert_eq!(head["verdict"], "NOT_VERIFIED");
    // Every pair passed: the drop alone fails the report (exit 1, not 3).
    let out = strict
        .std_cmd()
        .args(["merge", "--baseline", "base.json", "head"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn tests_may_drop_is_a_percentage() {
    let project = Project::empty();
    project.write(
        "m.yml",
        concat!(
            "version: 1\nenvironments: [{name: local}]\n",
            "defaults: {tests-may-drop: 150%}\n",
            "checks:\n",
            "  - { id: unit, test: cargo test, tests-may-drop: lots }\n",
            "  - { id: there, file: README.md, tests-may-drop: 5% }\n",
        ),
    );
    project.plan_refuses(
        "m.yml",
        &[
            "defaults.tests-may-drop",
            "150% is not a percentage from 0 to 100",
            "`lots` is not a percentage",
            "`tests-may-drop` applies only to `run` and `test` checks",
        ],
    );
}

/// Runs `project` into `out` and merges it with `args`: the exit code and the report.
fn merge_with(project: &Project, out: &str, args: &[&str]) -> (Option<i32>, Value) {
    let _ = std::fs::remove_dir_all(project.path().join(out));
    let _ = std::fs::remove_file(project.path().join("r.json"));
    project.run_env("local", out);
    let done = project
        .std_cmd()
        .args(["merge", "--out", "r.json"])
        .args(args)
        .arg(out)
        .output()
        .unwrap();
    assert!(project.path().join("r.json").exists(), "{done:?}");
    (done.status.code(), project.json("r.json"))
}

#[test]
fn the_baseline_from_the_history_is_the_latest_run_of_the_branch() {
    let project = project(None);
    project.write("lint.ok", "");
    project.write("docs.ok", "");
    let add = |report: &str, branch: &str| {
        let out = project
            .std_cmd()
            .args([
                "history",
                "--history",
                "h.sqlite",
                "add",
                "--branch",
                branch,
                report,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    };
    // main ran 5 tests, then 4; a feature branch ran 2 later still.
    for (tests, branch) in [
        ("a\nb\nc\nd\ne\n", "main"),
        ("a\nb\nc\nd\n", "main"),
        ("a\nb\n", "feature"),
    ] {
        project.write("tests.txt", tests);
        let report = format!("{branch}-{}.json", tests.len());
        run_into(&project, "base", &report, None);
        add(&report, branch);
    }
    // A pull request's run recorded as main (a fork's branch may be called so), newer
    // still: never a base.
    let mut forked = project.json("feature-4.json");
    forked["source"]["pr"] = 12.into();
    project.write("forked.json", &forked.to_string());
    add("forked.json", "main");
    // The head runs 3: main's latest (4 tests) is its base.
    project.write("tests.txt", "a\nb\nc\n");
    let history = ["--baseline-from", "history:main", "--history", "h.sqlite"];
    let (code, head) = merge_with(&project, "head", &history);
    assert_eq!(code, Some(1));
    assert_eq!(head["baseline"]["branch"], "main");
    assert_eq!(
        head["baseline"]["test_drops"][0],
        json!({"check": "unit", "environment": "local", "base": 4, "head": 3, "allowed_percent": 0.0,
               "vanished": 1, "base_distinct": 4})
    );
    assert_eq!(head["baseline"]["vanished"][0]["tests"], json!(["m › d"]));
    let reason = head["reasons"][0].as_str().unwrap();
    assert_eq!(
        reason,
        "unit in local ran 3 tests; main ran 4, and 1 of the 4 distinct tests main ran vanished (tests-may-drop: 0%)",
        "{reason}"
    );
    let markdown = project.stdout_of(&["render", "r.json"]);
    assert!(markdown.contains("Compared with main"), "{markdown}");

    // `history` alone: the pull request's base branch.
    let out = project
        .std_cmd()
        .args([
            "merge",
            "--out",
            "r2.json",
            "--baseline-from",
            "history",
            "--history",
            "h.sqlite",
            "head",
        ])
        .env("GITHUB_BASE_REF", "feature")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let r2 = project.json("r2.json");
    assert_eq!(r2["baseline"]["branch"], "feature");
    assert_eq!(r2["verdict"], "VERIFIED");

    // A branch the history never saw, or no history at all: no comparison, said so.
    for (spec, db) in [
        ("history:release", "h.sqlite"),
        ("history:main", "none.sqlite"),
    ] {
        let out = project
            .std_cmd()
            .args([
                "merge",
                "--out",
                "r3.json",
                "--baseline-from",
                spec,
                "--history",
                db,
                "head",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("note: no baseline"),
            "{out:?}"
        );
        assert!(project.json("r3.json").get("baseline").is_none());
        assert!(!project.path().join("none.sqlite").exists());
    }
    // A spelling that is neither: a usage error.
    let out = project
        .std_cmd()
        .args(["merge", "--baseline-from", "main", "head"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("expected `history` or `history:BRANCH`")
    );
}

#[test]
fn fail_on_new_accepts_only_failures_the_base_has_too() {
    let project = project_with("fail-on: new\n", None);
    project.write("tests.txt", "a\nb\n");
    project.write("docs.ok", "");
    // The base: lint fails.
    run_into(&project, "base", "base.json", None);
    // The head: lint still fails, nothing else: accepted, exit 0, still NOT VERIFIED.
    let (code, head) = merge_with(&project, "head", &["--baseline", "base.json"]);
    assert_eq!(code, Some(0), "{:#}", head["reasons"]);
    assert_eq!(head["verdict"], "NOT_VERIFIED");
    assert_eq!(head["baseline"]["fail_on"], "new");
    assert_eq!(head["baseline"]["accepted"], true);
    let markdown = project.stdout_of(&["render", "r.json"]);
    assert!(markdown.contains("NOT VERIFIED"), "{markdown}");
    assert!(
        markdown.contains("every failure fails on the baseline"),
        "{markdown}"
    );
    assert!(
        markdown.contains(
            "- ❌ **lint failed in local (exit 1)** · pre-existing: it fails on the baseline too\n"
        ),
        "{markdown}"
    );
    let table = project.stdout_of(&["render", "r.json", "--format", "table"]);
    assert!(
        table.contains("All Required Environments: NOT VERIFIED")
            && table.contains("fail-on: new: every failure fails on the baseline")
            && table.contains("accepted (exit 0)"),
        "{table}"
    );
    // `--comment changes`: nothing changed against the base, so no new comment.
    let comment_plan = || {
        let out = project
            .std_cmd()
            .args([
                "publish",
                "r.json",
                "--to",
                "comment",
                "--comment",
                "changes",
            ])
            .args(["--dry-run", "--repo", "o/r", "--pr", "12"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(
        comment_plan()
            .contains("none is created (--comment changes: nothing changed against the baseline"),
        "{}",
        comment_plan()
    );
    // Without a baseline, every failure is new.
    let (code, alone) = merge_with(&project, "head", &[]);
    assert_eq!(code, Some(1));
    assert!(alone.get("baseline").is_none());
    // A new failure (docs) beside the old one: not accepted.
    std::fs::remove_file(project.path().join("docs.ok")).unwrap();
    let (code, head) = merge_with(&project, "head", &["--baseline", "base.json"]);
    assert_eq!(code, Some(1));
    assert_eq!(head["baseline"]["accepted"], false);
    // A new failure is a change: the comment is created.
    assert!(
        !comment_plan().contains("none is created"),
        "{}",
        comment_plan()
    );
    // The old failure, and a suite that shrank: not accepted either.
    project.write("docs.ok", "");
    project.write("tests.txt", "a\n");
    let (code, head) = merge_with(&project, "head", &["--baseline", "base.json"]);
    assert_eq!(code, Some(1));
    assert_eq!(head["baseline"]["accepted"], false);
    // Under `fail-on: any`, the same pre-existing failure fails the run.
    let strict = project_with("", None);
    strict.write("tests.txt", "a\nb\n");
    strict.write("docs.ok", "");
    run_into(&strict, "base", "base.json", None);
    let (code, head) = merge_with(&strict, "head", &["--baseline", "base.json"]);
    assert_eq!(code, Some(1));
    assert_eq!(head["baseline"]["fail_on"], "any");
    assert_eq!(head["baseline"]["accepted"], false);
}

#[test]
fn setting_fail_on_new_weakens_the_manifest() {
    let project = project_with("fail-on: new\n", None);
    project.write(
        "trusted.yml",
        &project
            .read("verify-matrix.yml")
            .replace("fail-on: new\n", ""),
    );
    project.write("tests.txt", "a\n");
    project.write("lint.ok", "");
    project.write("docs.ok", "");
    let (code, report) = merge_with(&project, "head", &["--base-manifest", "trusted.yml"]);
    assert_eq!(code, Some(1));
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    let reasons = report["reasons"].to_string();
    assert!(reasons.contains("`fail-on: new` was set"), "{reasons}");
}

/// A baseline must say what the base branch really did: a pull request's report,
/// another repository's, a contradicted one, or one from a run not started by a push or
/// a schedule of the base branch is refused with the reason (exit 4).
#[test]
fn a_baseline_anyone_could_bring_is_refused() {
    let project = project(None);
    project.write("tests.txt", "a\nb\n");
    project.write("lint.ok", "");
    project.write("docs.ok", "");
    let base = run_into(&project, "base", "base.json", None);
    let good = |edit: &dyn Fn(&mut Value)| {
        let mut report = base.clone();
        report["source"]["repository"] = "o/r".into();
        report["source"]["run_id"] = "7".into();
        report["source"]["event"] = "push".into();
        report["source"]["branch"] = "main".into();
        edit(&mut report);
        report
    };
    let merge = |name: &str, report: &Value| {
        project.write(name, &report.to_string());
        project
            .std_cmd()
            .args(["merge", "--out", "head.json", "--baseline", name, "base"])
            .env("GITHUB_REPOSITORY", "o/r")
            .env("GITHUB_BASE_REF", "main")
            .output()
            .unwrap()
    };
    let accepted = merge("good.json", &good(&|_| {}));
    assert_eq!(accepted.status.code(), Some(0), "{accepted:?}");
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "pr",
            Box::new(|r: &mut Value| r["source"]["pr"] = 12.into()),
            "it is the report of pull request #12",
        ),
        (
            "fork",
            Box::new(|r: &mut Value| r["source"]["repository"] = "someone/fork".into()),
            "it is a report of someone/fork, not of o/r",
        ),
        (
            "workflow_run",
            Box::new(|r: &mut Value| r["source"]["event"] = "workflow_run".into()),
            "its run was started by `workflow_run`",
        ),
        (
            "branch",
            Box::new(|r: &mut Value| r["source"]["branch"] = "feature".into()),
            "it is of branch `feature`, not of the base branch `main`",
        ),
        (
            "no event",
            Box::new(|r: &mut Value| {
                r["source"].as_object_mut().unwrap().remove("event");
            }),
            "it does not say what started its run",
        ),
    ];
    for (name, edit, says) in cases {
        let out = merge(&format!("{name}.json"), &good(&*edit));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{name}: {stderr}");
        assert!(stderr.contains("refused as a baseline"), "{name}: {stderr}");
        assert!(stderr.contains(says), "{name}: {stderr}");
    }
    // A VERIFIED report beside a contradiction cannot be true: refused as it is read,
    // before it could be a baseline.
    let contradicted = good(&|r: &mut Value| {
        r["contradictions"] =
            json!([{"check": "unit", "environment": "local", "reason": "forged"}]);
    });
    let out = merge("contradicted.json", &contradicted);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains(
            "report `contradicted.json` contradicts itself: it says VERIFIED, but unit in local contradicts its facts"
        ),
        "{stderr}"
    );
}

/// A suite shrunk from 300 distinct tests to 2 run 150 times each runs as many tests as
/// its base, but 298 of the base's tests vanished: that is a drop (tests-may-drop: 0),
/// and a `min-tests: 300` met by those repeats is not met.
#[test]
fn repeats_do_not_hide_a_shrunk_suite() {
    let project = project(None);
    let all: String = (0..300).map(|i| format!("t{i}\n")).collect();
    project.write("tests.txt", &all);
    project.write("lint.ok", "");
    project.write("docs.ok", "");
    let base = run_into(&project, "base", "base.json", None);
    assert_eq!(base["verdict"], "VERIFIED");
    let repeats: String = (0..150).map(|_| "t0\nt1\n").collect();
    project.write("tests.txt", &repeats);
    let head = run_into(&project, "head", "head.json", Some("base.json"));
    assert_eq!(head["verdict"], "NOT_VERIFIED", "{:#}", head["reasons"]);
    let drop = &head["baseline"]["test_drops"][0];
    assert_eq!(
        (drop["base"].as_u64(), drop["head"].as_u64()),
        (Some(300), Some(300))
    );
    assert_eq!(drop["vanished"], 298);
    assert!(
        head["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == "unit in local 298 of the 300 distinct tests the baseline ran vanished (tests-may-drop: 0%)"),
        "{:#}",
        head["reasons"]
    );
    // The floor counts tests, not repeats.
    let text = project.read("verify-matrix.yml").replace(
        "    reports: junit.xml\n",
        "    reports: junit.xml\n    min-tests: 300\n",
    );
    project.write("verify-matrix.yml", &text);
    let _ = std::fs::remove_dir_all(project.path().join("floor"));
    project.run_env("local", "floor");
    let result = project.json("floor/verify-matrix-local.json");
    let unit = &result["checks"][0];
    assert_eq!(unit["status"], "FAIL", "{unit}");
    assert_eq!(
        unit["ineffective_reason"],
        "min-tests 300 is met only by repeats: 300 tests ran, 2 of them distinct"
    );
}

/// Test names that the report file shows quoted (a `|`, an invisible joiner) are the
/// same tests in the next run: only a test really deleted vanishes.
#[test]
fn tests_quoted_for_display_do_not_vanish() {
    let project = project(None);
    project.write("tests.txt", "plain\na|b\nx\u{200d}y\nto-delete\n");
    project.write("lint.ok", "");
    project.write("docs.ok", "");
    let base = run_into(&project, "base", "base.json", None);
    let names: Vec<&str> = base["rows"][0]["detail"]["tests"]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"a¦b"),
        "the report shows it quoted: {names:?}"
    );
    project.write("tests.txt", "plain\na|b\nx\u{200d}y\n");
    let head = run_into(&project, "head", "head.json", Some("base.json"));
    assert_eq!(
        head["baseline"]["vanished"],
        json!([{"check": "unit", "environment": "local", "count": 1, "tests": ["m › to-delete"]}])
    );
}

/// Under `fail-on: new`, a pair that failed on the base too is compared test by test: a
/// test failing now that did not there is a new failure, and so is a failure of another
/// kind (a build break where tests failed).
#[test]
fn fail_on_new_compares_failing_tests() {
    let project = Project::new(concat!(
        "version: 1\n",
        "fail-on: new\n",
        "environments: [{name: local}]\n",
        "checks:\n",
        "  - id: unit\n",
        "    test: sh gen.sh\n",
        "    reports: junit.xml\n",
    ));
    project.write(
        "gen.sh",
        concat!(
            "if [ -e broken ]; then echo 'error: could not compile'; exit 101; fi\n",
            "{ echo '<testsuite name=\"s\">'\n",
            "  while read t; do\n",
            "    if grep -qx \"$t\" fail.txt; then echo \"<testcase classname=\\\"m\\\" name=\\\"$t\\\"><failure message=\\\"boom\\\"/></testcase>\";\n",
            "    else echo \"<testcase classname=\\\"m\\\" name=\\\"$t\\\"/>\"; fi\n",
            "  done < tests.txt\n",
            "  echo '</testsuite>'; } > junit.xml\n",
            "[ ! -s fail.txt ]\n",
        ),
    );
    project.write("tests.txt", "a\nb\nc\n");
    project.write("fail.txt", "a\n");
    run_into(&project, "base", "base.json", None);
    // The same test fails: pre-existing, accepted.
    let (code, head) = merge_with(&project, "head", &["--baseline", "base.json"]);
    assert_eq!(code, Some(0), "{:#}", head["baseline"]);
    assert_eq!(head["baseline"]["pre_existing"][0]["check"], "unit");
    // Another test fails too: new.
    project.write("fail.txt", "a\nb\n");
    let (code, head) = merge_with(&project, "head", &["--baseline", "base.json"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        head["baseline"]["new_failures"],
        json!([{"check": "unit", "environment": "local",
                "why": "`m › b` fails, and did not on the base"}])
    );
    let markdown = project.stdout_of(&["render", "r.json"]);
    // The answer says it, under the verdict: the failure, its first test, and why new.
    let line = markdown
        .lines()
        .find(|l| l.starts_with("- ❌ **unit failed in local"))
        .unwrap_or_default();
    assert!(
        line.ends_with(
            " · **new** against the baseline: \\`m › b\\` fails, and did not on the base"
        ),
        "{markdown}"
    );
    // The build breaks: a failure of another kind, new.
    project.write("fail.txt", "a\n");
    project.write("broken", "");
    let (code, head) = merge_with(&project, "head", &["--baseline", "base.json"]);
    assert_eq!(code, Some(1));
    let why = head["baseline"]["new_failures"][0]["why"].as_str().unwrap();
    assert!(why.contains("on one side only"), "{why}");
}

//! A report compared with its baseline (`--baseline`): new, pre-existing and fixed
//! failures, newly missing pairs, a test gate that ran fewer tests (`tests-may-drop`),
//! vanished tests — on real runs of a real project.

mod common;

use common::Project;
use serde_json::{Value, json};

/// `unit` runs the tests `tests.txt` names (one per line) through a JUnit report; `lint`
/// and `docs` pass when their marker file exists.
fn project(tests_may_drop: Option<&str>) -> Project {
    let drop = tests_may_drop.map_or_else(String::new, |d| format!("    tests-may-drop: {d}\n"));
    Project::new(&format!(
        concat!(
            "version: 1\n",
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
        drop = drop
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
        json!([{"check": "unit", "environment": "local", "base": 5, "head": 3, "allowed_percent": 0.0}])
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
        reasons.contains(&"unit in local ran 3 tests; the baseline ran 5 (tests-may-drop: 0%)"),
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

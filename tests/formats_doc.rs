//! `docs/formats.md`, the product's public contract, is kept in step with the code: the
//! manifest example validates, the JSON examples name exactly the fields the tool
//! writes, and the matrix and signal examples are what the renderers print.

mod common;

use std::collections::BTreeSet;

use common::{Project, repo_root};
use regex::Regex;
use serde_json::Value;

fn doc() -> String {
    std::fs::read_to_string(repo_root().join("docs/formats.md")).unwrap()
}

/// The text of section `number` ("## 3. …" up to the next "## ").
fn section(doc: &str, number: u32) -> String {
    let start = doc
        .find(&format!("\n## {number}. "))
        .unwrap_or_else(|| panic!("no section {number}"));
    let rest = &doc[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    rest[..end].to_owned()
}

/// The fenced blocks of `text` whose info string is `lang` ("" for none).
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("\n```").expect("a closed fence");
        out.push(body[..end].to_owned());
        rest = &body[end + 4..];
    }
    out
}

/// The field names a JSON example names (`"name":`).
fn named_fields(example: &str) -> BTreeSet<String> {
    Regex::new(r#""([a-z_]+)"\s*:"#)
        .unwrap()
        .captures_iter(example)
        .map(|c| c[1].to_owned())
        .collect()
}

/// Every field name in `value`, at any depth.
fn all_fields(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                out.insert(key.clone());
                all_fields(inner, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| all_fields(item, out)),
        _ => {}
    }
}

fn top_fields(value: &Value) -> BTreeSet<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

/// Every part of a report: a test gate with counts and a name, one with a runner report
/// (a flaky test, a failed one with its place), a disagreement (unit
/// passes in linux, fails in windows), an optional failure, an environment that never
/// reported (macos), a manual item, a group with a manual and a nested item; the partial
/// results carry their attempt.
const MANIFEST: &str = "version: 1
environments: [{name: linux}, {name: windows, env: {APP_MODE: old}}, {name: macos}, {name: arm, runs-on: ubuntu-24.04-arm}]
checks:
  - id: unit_tests
    name: Unit tests
    test: 'printf \"running 3 tests\\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\\n\"; test $VERIFY_MATRIX_ENV != windows'
  - { id: lint, run: 'exit 3', required: false, environment: linux }
  - { id: login_works, assert: 'the login page answers 200' }
  - id: junit
    environment: linux
    test: printf '<testsuite name=\"s\"><testcase classname=\"t\" name=\"a\" time=\"0.1\"><flakyFailure message=\"once\"/></testcase><testcase classname=\"t\" name=\"b\"><failure message=\"no\">t.py:1</failure></testcase></testsuite>' > r.xml && echo x > t.py
    reports: r.xml
  - id: done
    environment: linux
    all-of:
      - { item: builds, run: 'true' }
      - { item: reviewed, assert: 'the API is documented' }
      - { item: docs, any-of: [{ item: readme, run: 'true' }] }
";

/// The trusted manifest the results' is compared with: there, lint is required.
const BASE: &str = "version: 1
environments: [{name: linux}, {name: windows}, {name: macos}]
checks:
  - { id: unit_tests, test: 'true' }
  - { id: lint, run: 'exit 3', environment: linux }
  - { id: login_works, assert: 'the login page answers 200' }
";

/// A project whose linux and windows ran (as attempt 1 of a workflow run) and whose
/// linux result claims a PASS for lint's exit 3 (a contradiction), merged into
/// `report.json`, and a report made after a cancellation against the trusted manifest
/// into `cancelled.json`.
fn ran() -> Project {
    let project = Project::new(MANIFEST);
    project.write("base.yml", BASE);
    for env in ["linux", "windows"] {
        let out = project
            .std_cmd()
            .args(["run", "--env", env, "--out", &format!("artifacts/{env}")])
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_RUN_ID", "5")
            .env("GITHUB_RUN_NUMBER", "128")
            .env("GITHUB_RUN_ATTEMPT", "1")
            .env("GITHUB_EVENT_NAME", "push")
            .env("GITHUB_REF_NAME", "main")
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("RUNNER_NAME", "GitHub Actions 12")
            .env("RUNNER_ENVIRONMENT", "github-hosted")
            .env("ImageOS", "ubuntu24")
            .env("ImageVersion", "20241113.1.0")
            .output()
            .unwrap();
        assert!(out.status.code().is_some(), "{out:?}");
    }
    // A result that claims arm (an aarch64 machine), written on this one.
    let mut claimed = project.json("artifacts/linux/verify-matrix-linux.json");
    claimed["environment"] = "arm".into();
    for check in claimed["checks"].as_array_mut().unwrap() {
        check["environment"] = "arm".into();
    }
    claimed["checks"]
        .as_array_mut()
        .unwrap()
        .retain(|c| c["command_id"] == "unit_tests");
    claimed["runner"]["arch"] = "x86_64".into();
    project.write("artifacts/arm/verify-matrix-arm.json", &claimed.to_string());
    // The base branch's report, from the runs as they were.
    project.merge_into("artifacts", "base-report.json");
    let partial = "artifacts/linux/verify-matrix-linux.json";
    let mut forged = project.json(partial);
    for check in forged["checks"].as_array_mut().unwrap() {
        if check["command_id"] == "lint" {
            check["status"] = "PASS".into();
        }
    }
    project.write(partial, &forged.to_string());
    project.merge_into("artifacts", "report.json");
    let cancelled = project
        .std_cmd()
        .args([
            "report",
            "--cancelled",
            "--base-manifest",
            "base.yml",
            "--baseline",
            "base-report.json",
            "--dry-run",
            "--out",
            "cancelled.json",
            "artifacts",
        ])
        .output()
        .unwrap();
    assert!(
        project.path().join("cancelled.json").exists(),
        "{cancelled:?}"
    );
    project
}

/// A project whose every required pair passed, merged into `report.json`.
fn verified() -> Project {
    let project = Project::new(
        "version: 1
environments: [{name: linux}, {name: windows}]
checks:
  - { id: unit_tests, run: 'true' }
  - { id: lint, run: 'exit 3', required: false, environment: linux }
",
    );
    for env in ["linux", "windows"] {
        project.run_env(env, &format!("artifacts/{env}"));
    }
    project.merge_into("artifacts", "report.json");
    project
}

/// A sharded environment's two shards, each result at `shards/K`, merged into
/// `report.json`: a `split: timing` check whose two shards both report test `a` (the
/// split overlapped).
fn sharded() -> Project {
    let project = Project::new(
        r#"version: 1
environments: [{name: linux, shards: 2}]
checks:
  - id: t
    run: printf '<testsuite><testcase classname="x" name="a"/></testsuite>' > r.xml; cat {tests_file}
    split: timing
    list: printf 'a\nb\nc\n'
    reports: r.xml
    quarantine: [{ test: 'x › a', reason: racy, until: 2999-12-31, owner: '@ana' }]
"#,
    );
    for k in 1..=2 {
        project
            .cmd()
            .args([
                "run",
                "--shard",
                &format!("{k}/2"),
                "--out",
                &format!("shards/{k}"),
            ])
            .assert()
            .success();
    }
    project.merge_into("shards", "report.json");
    project
}

#[test]
fn the_manifest_example_validates() {
    let examples = blocks(&section(&doc(), 1), "yaml");
    assert_eq!(examples.len(), 1);
    let project = Project::new(&examples[0]);
    let out = project.std_cmd().arg("plan").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_json_examples_name_exactly_the_fields_the_tool_writes() {
    let doc = doc();
    let project = ran();
    let partial = project.json("artifacts/linux/verify-matrix-linux.json");
    let report = project.json("report.json");
    let cancelled = project.json("cancelled.json");
    let result = &partial["checks"][0];
    // A shard's result and a report of shards write fields of their own.
    let shards = sharded();
    let shard = shards.json("shards/1/verify-matrix-linux@1of2.json");
    let merged = shards.json("report.json");
    assert_eq!(
        merged["rows"][0]["detail"]["sharded"]["overlap_count"], 1,
        "{merged}"
    );
    // A leg under GitLab CI records its job instead of an Actions runner.
    let gitlab = Project::new(MANIFEST);
    let out = gitlab
        .std_cmd()
        .args(["run", "--env", "linux", "--out", "leg"])
        .env("GITLAB_CI", "true")
        .env("CI_JOB_ID", "7000")
        .env("CI_JOB_NAME", "leg: [linux]")
        .env("CI_PIPELINE_ID", "501")
        .env("CI_RUNNER_ID", "9")
        .env("CI_RUNNER_TAGS", r#"["linux", "docker"]"#)
        .env("CI_RUNNER_DESCRIPTION", "shared runner 9")
        .env("CI_JOB_IMAGE", "rust:1.90")
        .env("CI_COMMIT_SHA", "1111111111111111111111111111111111111111")
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    let gitlab_leg = gitlab.json("leg/verify-matrix-linux.json");
    let examples = [
        (2, partial.clone(), top_fields(&partial)),
        (3, report.clone(), top_fields(&cancelled)),
        (4, result.clone(), top_fields(result)),
    ];
    for (number, written, top) in examples {
        let mut named = named_fields(&blocks(&section(&doc, number), "json").join("\n"));
        // Keys of maps by environment or check name, not fields.
        for key in ["linux", "unit_tests"] {
            named.remove(key);
        }
        let mut real = BTreeSet::new();
        all_fields(&written, &mut real);
        all_fields(&cancelled, &mut real);
        all_fields(&shard, &mut real);
        all_fields(&merged, &mut real);
        all_fields(&gitlab_leg, &mut real);
        // A result as `run` wrote it: its table of checks (`columns`, `rows`).
        all_fields(&gitlab.raw_json("leg/verify-matrix-linux.json"), &mut real);
        let unknown: Vec<_> = named.difference(&real).collect();
        assert!(
            unknown.is_empty(),
            "§{number} names fields the tool does not write: {unknown:?}"
        );
        let undocumented: Vec<_> = top.difference(&named).collect();
        assert!(
            undocumented.is_empty(),
            "§{number} does not name fields the tool writes: {undocumented:?}"
        );
    }
    assert_eq!(cancelled["cancelled"], true);
    assert_eq!(report.get("cancelled"), None, "written only when cancelled");
}

#[test]
fn the_matrix_example_is_what_the_renderer_prints() {
    let doc = doc();
    let matrix = section(&doc, 5);
    let example = &blocks(&matrix, "")[0];
    let project = verified();
    let rendered = project
        .std_cmd()
        .args(["render", "report.json"])
        .output()
        .unwrap();
    let rendered = String::from_utf8(rendered.stdout).unwrap();
    // The header and its rule, exactly.
    let mut lines = example.lines();
    let (header, rule) = (lines.next().unwrap(), lines.next().unwrap());
    assert!(
        rendered.contains(&format!("\n{header}\n{rule}\n")),
        "{rendered}"
    );
    // The row pattern the document gives matches every row printed, and nothing else.
    let pattern = Regex::new(r"A row matches `([^`]+)`")
        .unwrap()
        .captures(&matrix)
        .unwrap()[1]
        .to_owned();
    let row = Regex::new(&pattern).unwrap();
    let rows: Vec<&str> = rendered.lines().filter(|l| row.is_match(l)).collect();
    assert_eq!(
        rows,
        vec![
            "| unit_tests | linux | 0 | PASS |",
            "| unit_tests | windows | 0 | PASS |",
            "| lint | linux | 3 | FAIL |",
        ],
        "{rendered}"
    );
    // The fold the strict table stands in is titled as the document says.
    let fold = Regex::new(r"`(<details><summary>Strict matrix:[^`]*</summary>)`")
        .unwrap()
        .captures(&doc)
        .expect("the document names the strict table's fold")[1]
        .to_owned();
    assert!(rendered.contains(&fold), "{fold} in\n{rendered}");
    // The example's rows have the same shape, and its lines are printed as given.
    assert!(example.lines().skip(2).take(2).all(|l| row.is_match(l)));
    assert!(example.contains("\nEnvironments Tested: linux, windows\n"));
    assert!(
        rendered.contains(
            "\nEnvironments Tested: linux, windows\nAll Required Environments: VERIFIED\n"
        ),
        "{rendered}"
    );
}

#[test]
fn the_signal_example_is_what_the_renderer_prints() {
    let section6 = section(&doc(), 6);
    let example = &blocks(&section6, "")[0];
    let project = verified();
    let out = project
        .std_cmd()
        .args([
            "render",
            "--format",
            "signal",
            "--task-id",
            "T-1",
            "--files",
            "src/lib.rs",
            "--tests",
            "tests/a.rs: the parser",
            "--summary",
            "done",
            "report.json",
        ])
        .output()
        .unwrap();
    let signal = String::from_utf8(out.stdout).unwrap();
    // Every line of the example without a placeholder is printed, in the same order.
    let mut rest = signal.as_str();
    for line in example.lines() {
        let fixed = match line.split_once(" <") {
            Some((prefix, _)) => prefix,
            None if line.contains('…') || line.starts_with("- <") => continue,
            None => line,
        };
        if fixed.is_empty() || fixed.starts_with("Environments Tested:") {
            continue;
        }
        let at = rest
            .find(fixed)
            .unwrap_or_else(|| panic!("`{fixed}` is not printed (in order):\n{signal}"));
        rest = &rest[at + fixed.len()..];
    }
    assert!(signal.starts_with("READY_FOR_REVIEW: T-1\n"), "{signal}");
}

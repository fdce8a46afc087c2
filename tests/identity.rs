//! Environments are facts: `run` refuses to be an environment this machine is not and
//! writes no result claiming it; each result records its machine's facts; `merge`
//! re-derives where each environment ran and never takes results that claim another
//! machine; variants (environments that differ by variables) share any machine.

mod common;

use common::Project;
use serde_json::Value;

/// This machine's OS as the manifest spells it.
const HERE: &str = std::env::consts::OS;

/// An OS this machine is not.
fn elsewhere() -> &'static str {
    if HERE == "windows" {
        "linux"
    } else {
        "windows"
    }
}

fn run(project: &Project, args: &[&str]) -> (i32, String, String) {
    let out = project.std_cmd().arg("run").args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `merge --out report.json results`, which must end NOT VERIFIED (exit 3): the report.
fn not_verified(project: &Project) -> serde_json::Value {
    let out = project
        .std_cmd()
        .args(["merge", "--out", "report.json", "results"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    project.json("report.json")
}

const THREE: &str = "version: 1
environments:
  - { name: linux,   runs-on: ubuntu-latest }
  - { name: windows, runs-on: windows-latest }
  - { name: mac,     runs-on: macos-latest }
checks:
  - { id: hello, run: \"echo hi\" }
";

#[test]
fn run_refuses_the_environments_this_machine_is_not() {
    let project = Project::new(THREE);
    let (code, stdout, stderr) = run(
        &project,
        &["--env", "windows", "--env", "mac", "--env", "linux"],
    );
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(
        !stdout.contains("All Required Environments: VERIFIED"),
        "{stdout}"
    );
    assert!(
        stderr.contains("refused: windows: not run here: runs on windows-latest (windows x86_64); this machine is "),
        "{stderr}"
    );
    assert!(
        stderr.contains("refused: mac: not run here: runs on macos-latest (macos aarch64)"),
        "{stderr}"
    );
    let results = project.path().join("verify-matrix-results");
    assert!(!results.join("verify-matrix-windows.json").exists());
    assert!(!results.join("verify-matrix-mac.json").exists());
    assert!(
        stdout.contains("not run here: it runs on windows-latest"),
        "{stdout}"
    );
    // The INFRA_BLOCKED report of what could not run here, for a coordinator.
    let (code, stdout, _) = run(
        &project,
        &["--env", "windows", "--format", "signal", "--out", "s"],
    );
    assert_eq!(code, 3);
    assert!(stdout.starts_with("INFRA_BLOCKED: "), "{stdout}");
    assert!(
        stdout.contains("Issue: Environment 'windows' unavailable"),
        "{stdout}"
    );
}

#[test]
fn detect_rules_and_the_environment_variable_cannot_name_another_machine() {
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - {{ name: here, detect: {{ os: {HERE} }} }}\n  - {{ name: there, detect: {{ os: {} }} }}\nchecks:\n  - {{ id: hello, run: \"true\" }}\n",
        elsewhere()
    ));
    let (code, _, stderr) = run(&project, &["--env", "there"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("refused: there: not run here: is "),
        "{stderr}"
    );
    let out = project
        .std_cmd()
        .arg("run")
        .env("VERIFY_MATRIX_ENV", "there")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(
        !project
            .path()
            .join("verify-matrix-results/verify-matrix-there.json")
            .exists()
    );
    let (code, stdout, stderr) = run(&project, &["--env", "here"]);
    assert_eq!(code, 0, "this machine's share passed: {stdout}{stderr}");
    assert!(
        project
            .path()
            .join("verify-matrix-results/verify-matrix-here.json")
            .exists()
    );
}

/// A `container:` environment runs only inside a container: the usual signs are read
/// (here under a folder the test controls, as a debug build allows).
#[test]
fn a_container_environment_runs_only_in_a_container() {
    let project = Project::new(
        "version: 1\nenvironments:\n  - { name: debian12, container: 'debian:12' }\nchecks:\n  - { id: hello, run: \"true\" }\n",
    );
    let root = tempfile::tempdir().unwrap();
    let out = project
        .std_cmd()
        .args(["run", "--env", "debian12"])
        .env("VERIFY_MATRIX_FACTS_ROOT", root.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("debian12: not run here: runs in a container (debian:12); this machine is"),
        "{stderr}"
    );
    std::fs::write(root.path().join(".dockerenv"), "").unwrap();
    let out = project
        .std_cmd()
        .args(["run", "--env", "debian12"])
        .env("VERIFY_MATRIX_FACTS_ROOT", root.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let result = project.json("verify-matrix-results/verify-matrix-debian12.json");
    assert_eq!(result["runner"]["container"], true);
    assert_eq!(result["runner"]["container_runtime"], "docker");
}

/// Variants differ only by variables: any machine is each of them, at once.
#[test]
fn variants_share_one_machine() {
    let project = Project::new(
        "version: 1\nenvironments:\n  - { name: c, env: { LC_ALL: C } }\n  - { name: utf8, env: { LC_ALL: C.UTF-8 } }\nchecks:\n  - { id: hello, run: \"true\" }\n",
    );
    let (code, stdout, _) = run(&project, &["--env", "c", "--env", "utf8"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("All Required Environments: VERIFIED"),
        "{stdout}"
    );
    let result = project.json("verify-matrix-results/verify-matrix-c.json");
    assert_eq!(result["format_version"], 3);
    let runner = &result["runner"];
    assert_eq!(runner["os"], HERE);
    assert_eq!(runner["arch"], std::env::consts::ARCH);
    assert!(runner["container"].is_boolean(), "{runner}");
}

/// Results that claim an environment their facts say they are not: merge does not take
/// them, says why, and shows where they came from.
#[test]
fn merge_never_takes_results_that_claim_another_machine() {
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - {{ name: here, detect: {{ os: {HERE} }} }}\n  - {{ name: there, runs-on: {}-latest }}\nchecks:\n  - {{ id: hello, run: \"true\" }}\n",
        if elsewhere() == "windows" {
            "windows"
        } else {
            "ubuntu"
        }
    ));
    assert_eq!(project.run_env("here", "results/here"), 0);
    // The same run, renamed to claim `there`.
    let mut claimed = project.json("results/here/verify-matrix-here.json");
    claimed["environment"] = "there".into();
    for check in claimed["checks"].as_array_mut().unwrap() {
        check["environment"] = "there".into();
    }
    project.write(
        "results/there/verify-matrix-there.json",
        &claimed.to_string(),
    );
    let report = not_verified(&project);
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    let reasons: Vec<&str> = report["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("there: not verified: its results were not taken: it runs on ")),
        "{reasons:?}"
    );
    // Both came from this machine, which cannot be both: `here`'s are not taken either.
    assert_eq!(report["environments_tested"], serde_json::json!([]));
    let place = report["places"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["environment"] == "there")
        .unwrap()
        .clone();
    assert!(
        place["mismatch"]
            .as_str()
            .unwrap()
            .contains(&format!("the results' machine is {HERE}"))
    );
    // Every format says so, and none says VERIFIED.
    for format in ["markdown", "table", "html"] {
        let text = project.stdout_of(&["render", "--format", format, "report.json"]);
        assert!(
            !text.contains("All Required Environments: VERIFIED"),
            "{format}"
        );
        assert!(
            text.contains("were not taken: it runs on"),
            "{format}: {text}"
        );
    }
}

/// A result of format 1 records no facts: it never stands for an environment with an
/// identity (a variant's is still taken).
#[test]
fn a_format_1_result_is_unknown_for_an_identity() {
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - {{ name: here, detect: {{ os: {HERE} }} }}\n  - {{ name: v }}\nchecks:\n  - {{ id: hello, run: \"true\" }}\n"
    ));
    project.run_env("here", "results/here");
    project.run_env("v", "results/v");
    for env in ["here", "v"] {
        let path = format!("results/{env}/verify-matrix-{env}.json");
        let mut old = project.json(&path);
        old["format_version"] = 1.into();
        old["runner"] =
            serde_json::json!({"os": HERE, "arch": std::env::consts::ARCH, "hostname": "h"});
        project.write(&path, &old.to_string());
    }
    project.merge_into("results", "report.json");
    let report = project.json("report.json");
    let missing: Vec<(&str, &str)> = report["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["environment"].as_str().unwrap(),
                m["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert_eq!(missing[0].0, "here");
    assert!(
        missing[0].1.contains("which records none of the facts"),
        "{missing:?}"
    );
}

/// Two environments that could not be one machine, whose results came from one
/// machine: neither is taken.
#[test]
fn one_machine_cannot_be_two_machines() {
    let project = Project::new(
        "version: 1\nenvironments:\n  - { name: x64, detect: { arch: x86_64 } }\n  - { name: arm, detect: { arch: aarch64 } }\nchecks:\n  - { id: hello, run: \"true\" }\n",
    );
    let here = if std::env::consts::ARCH == "aarch64" {
        "arm"
    } else {
        "x64"
    };
    let other = if here == "arm" { "x64" } else { "arm" };
    assert_eq!(project.run_env(here, &format!("results/{here}")), 0);
    let mut forged = project.json(&format!("results/{here}/verify-matrix-{here}.json"));
    forged["environment"] = other.into();
    forged["runner"]["arch"] = if other == "arm" { "aarch64" } else { "x86_64" }.into();
    forged["runner"]["machine"] = "0123456789abcdef".into();
    for check in forged["checks"].as_array_mut().unwrap() {
        check["environment"] = other.into();
    }
    project.write(
        &format!("results/{other}/verify-matrix-{other}.json"),
        &forged.to_string(),
    );
    let mut own: Value = project.json(&format!("results/{here}/verify-matrix-{here}.json"));
    own["runner"]["machine"] = "0123456789abcdef".into();
    project.write(
        &format!("results/{here}/verify-matrix-{here}.json"),
        &own.to_string(),
    );
    project.merge_into("results", "report.json");
    let report = project.json("report.json");
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    let mismatches: Vec<&str> = report["places"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["mismatch"].as_str())
        .collect();
    assert_eq!(mismatches.len(), 2, "{mismatches:?}");
    assert!(
        mismatches
            .iter()
            .all(|m| m.contains("came from one machine (0123456789abcdef)")),
        "{mismatches:?}"
    );
}

#[test]
fn detect_rules_no_machine_could_meet_are_manifest_errors() {
    let project = Project::empty();
    project.write(
        "bad.yml",
        "version: 1\nenvironments:\n  - { name: a, detect: { os: solaris } }\n  - { name: b, detect: { arch: sparc } }\n  - { name: c, runs-on: windows-latest, detect: { os: linux } }\nchecks: []\n",
    );
    project.plan_refuses(
        "bad.yml",
        &[
            "unknown os `solaris`: no machine could ever be it",
            "bad.yml:3:",
            "unknown arch `sparc`: no machine could ever be it",
            "`detect.os: linux` contradicts `runs-on: windows-latest`, a windows machine",
        ],
    );
}

/// Facts missing or malformed in an artifact are unknown: the result is read, and not
/// taken for an environment with an identity (a variant's still is).
#[test]
fn malformed_facts_are_unknown_never_an_error() {
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - {{ name: here, detect: {{ os: {HERE} }} }}\n  - {{ name: v }}\nchecks:\n  - {{ id: hello, run: \"true\" }}\n"
    ));
    project.run_env("here", "results/here");
    project.run_env("v", "results/v");
    for (env, runner) in [
        ("here", serde_json::json!("a laptop")),
        ("v", serde_json::json!({"os": 7})),
    ] {
        let path = format!("results/{env}/verify-matrix-{env}.json");
        let mut result = project.json(&path);
        result["runner"] = runner;
        project.write(&path, &result.to_string());
    }
    let report = not_verified(&project);
    assert_eq!(report["environments_tested"], serde_json::json!(["v"]));
    let here = &report["places"][0];
    assert!(
        here["mismatch"]
            .as_str()
            .unwrap()
            .ends_with("; the results' machine is an unknown OS"),
        "{here}"
    );
}

/// The machine's facts written as a bare list of their values, in the fields' order (a
/// layout serde's derived reader takes for a struct, and nothing writes): unknown, as
/// any other malformed facts are, never read as the machine they list.
#[test]
fn facts_given_as_a_list_of_their_values_are_unknown() {
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - {{ name: here, detect: {{ os: {HERE} }} }}\nchecks:\n  - {{ id: hello, run: \"true\" }}\n"
    ));
    project.run_env("here", "results/here");
    let path = "results/here/verify-matrix-here.json";
    let mut result = project.json(path);
    let facts = result["runner"].clone();
    result["runner"] = serde_json::json!([facts["os"], facts["arch"], facts["hostname"]]);
    project.write(path, &result.to_string());
    let report = not_verified(&project);
    assert_ne!(report["verdict"], "VERIFIED", "{report}");
    assert!(
        report["places"][0]["mismatch"]
            .as_str()
            .unwrap()
            .ends_with("; the results' machine is an unknown OS"),
        "{report}"
    );
}

//! `report --files`: the JUnit files a workflow's own matrix already writes (pytest
//! `--junitxml` in each leg, each leg's folder downloaded beside the others), judged as
//! the legs' results without any manifest — and every way those files can fail to prove
//! what they claim.

mod common;

use common::Project;

/// A suite whose second test fails only where `LEG` is `py312`.
const SUITE: &str = "import os\n\n\ndef test_adds():\n    assert 1 + 1 == 2\n\n\ndef test_leg():\n    assert os.environ.get('LEG') != 'py312', 'fails on 3.12'\n";

/// A project where each of `legs` ran pytest as a leg of a matrix does, its JUnit file
/// in `artifacts/test-results-<leg>/junit.xml` (as `actions/download-artifact` lays
/// out every leg's artifact).
fn legs(legs: &[&str]) -> Project {
    let project = Project::empty();
    project.write("test_suite.py", SUITE);
    project.git(&["init", "-q"]);
    project.commit_all("a suite");
    for leg in legs {
        let out = std::process::Command::new("python3")
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(format!("--junitxml=artifacts/test-results-{leg}/junit.xml"))
            .arg("test_suite.py")
            .env("LEG", leg)
            .current_dir(project.path())
            .output()
            .expect("pytest is required (scripts/test.sh installs it)");
        assert!(
            project
                .path()
                .join(format!("artifacts/test-results-{leg}/junit.xml"))
                .is_file(),
            "{out:?}"
        );
    }
    project
}

/// `report --dry-run --to summary ARGS…`: the exit code, stdout and stderr.
fn report(project: &Project, args: &[&str]) -> (i32, String, String) {
    let out = project
        .std_cmd()
        .args([
            "report",
            "--dry-run",
            "--to",
            "summary",
            "--out",
            "report.json",
        ])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const GLOB: &str = "artifacts/test-results-{environment}/*.xml";

#[test]
fn every_expected_leg_passing_is_verified() {
    let project = legs(&["py310", "py311"]);
    let (code, stdout, stderr) = report(
        &project,
        &["--files", GLOB, "--environments", "py310,py311"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("All Required Environments: VERIFIED"),
        "{stdout}"
    );
    assert!(stdout.contains("| tests | py310 | 0 | PASS |"), "{stdout}");
    assert!(stdout.contains("| ✅ 2 | ✅ 2 |"), "{stdout}");
    // A pair read from a file is not run again here: no `reproduce` line.
    assert!(!stdout.contains("reproduce"), "{stdout}");
    let report = project.json("report.json");
    assert_eq!(report["verdict"], "VERIFIED");
}

#[test]
fn a_failing_leg_is_named_with_its_test_and_a_leg_without_a_file_has_no_result() {
    let project = legs(&["py310", "py311", "py312"]);
    let (code, stdout, stderr) = report(
        &project,
        &["--files", GLOB, "--environments", "py310,py311,py312,py313"],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("All Required Environments: NOT VERIFIED"),
        "{stdout}"
    );
    assert!(
        stdout.contains("- ❌ **tests failed in py312 (exit 1)**: `test_suite › test_leg` at test_suite.py:9 — AssertionError: fails on 3.12"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| tests | ✅ 2 | ✅ 2 | ❌ 1 of 2 | ⚠️ no result |"),
        "{stdout}"
    );
    assert!(stdout.contains("py313: no results"), "{stdout}");
    // Under `--fail-on never` the step passes and the verdict does not change.
    let (code, stdout, _) = report(
        &project,
        &[
            "--files",
            GLOB,
            "--environments",
            "py310,py311,py312,py313",
            "--fail-on",
            "never",
        ],
    );
    assert_eq!(code, 0);
    assert!(stdout.contains("NOT VERIFIED"), "{stdout}");
}

#[test]
fn without_a_placeholder_each_artifacts_folder_is_its_environment() {
    let project = legs(&["py310", "py311"]);
    // As `download-artifact` without a pattern lays them out: one folder per artifact.
    let (code, stdout, stderr) = report(&project, &["--files", "artifacts/**/*.xml"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("| tests | test-results-py310 | 0 | PASS |"),
        "{stdout}"
    );
    // Without --environments, the missing leg could not be told: said on stderr.
    assert!(
        stderr.contains("note: the environments expected were not given (--environments)"),
        "{stderr}"
    );
    // One leg's job (`--environment`): every file is that environment's.
    let (code, stdout, _) = report(
        &project,
        &[
            "--files",
            "artifacts/test-results-py310/*.xml",
            "--environment",
            "linux",
        ],
    );
    assert_eq!(code, 0);
    assert!(stdout.contains("| tests | linux | 0 | PASS |"), "{stdout}");
}

#[test]
fn a_report_that_lists_no_test_that_ran_is_not_a_pass() {
    let project = Project::empty();
    project.git(&["init", "-q"]);
    project.write(
        "out/linux/junit.xml",
        r#"<testsuite name="s" tests="1" skipped="1"><testcase classname="c" name="t"><skipped/></testcase></testsuite>"#,
    );
    project.write(
        "out/mac/junit.xml",
        r#"<testsuite name="s" tests="0"></testsuite>"#,
    );
    project.commit_all("reports");
    let (code, stdout, _) = report(&project, &["--files", "out/{environment}/junit.xml"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("All Required Environments: NOT VERIFIED"),
        "{stdout}"
    );
    assert!(
        stdout.contains("the report lists no test that ran"),
        "{stdout}"
    );
}

/// Whatever keeps the files from being judged is a clear error naming the glob or the
/// file (exit 4), and the commit still gets a NOT VERIFIED with that reason.
#[test]
fn files_that_cannot_be_judged_are_named_and_never_verified() {
    let project = legs(&["py310"]);
    project.write(
        "artifacts/test-results-py311/junit.xml",
        "this is not a report\n",
    );
    project.write("artifacts/test-results-bad name/junit.xml", "<testsuite/>");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--files", "nothing/*.xml"],
            "--files `nothing/*.xml` matched no file under",
        ),
        (
            &["--files", "artifacts/test-results-{environment}/*.xml"],
            "`bad name` is not a valid environment name",
        ),
        (
            &[
                "--files",
                "artifacts/test-results-py3*/*.xml",
                "--files",
                "!artifacts/test-results-py311/*",
                "--environments",
                "py311",
            ],
            "its environment `test-results-py310` is not one of the environments expected, --environments: py311",
        ),
        (
            &["--files", "../*.xml"],
            "a glob names files under the folder it runs in",
        ),
        (
            &["--files", "**/{environment}/*.xml"],
            "must come before any `**`",
        ),
        (&["--files", "!artifacts/**"], "no glob to match"),
    ];
    for (args, message) in cases {
        let (code, stdout, stderr) = report(&project, args);
        assert_eq!(code, 4, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(
            stdout.contains("## ❌ Environment Verification Matrix: NOT VERIFIED"),
            "{args:?}: the commit's NOT VERIFIED: {stdout}"
        );
        assert!(!stdout.contains("All Required Environments: VERIFIED"));
    }
    // A file no reader knows is that pair's error, naming the file.
    let (code, stdout, _) = report(
        &project,
        &[
            "--files",
            "artifacts/test-results-{environment}/*.xml",
            "--files",
            "!artifacts/test-results-bad name/*",
        ],
    );
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("- tests failed to run in py311: report unreadable: `artifacts/test-results-py311/junit.xml`: not a test report (JUnit, TRX, NUnit or xUnit.net XML, CTRF, Jest, Vitest, Mocha, RSpec or Playwright JSON, `go test -json` output or TAP): it begins `this is not a report`\n"),
        "{stdout}"
    );
}

#[test]
fn a_link_is_never_read_as_a_report() {
    let project = legs(&["py310"]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("junit.xml"),
        r#"<testsuite name="s" tests="1"><testcase classname="c" name="t"/></testsuite>"#,
    )
    .unwrap();
    std::fs::create_dir_all(project.path().join("artifacts/test-results-py311")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("junit.xml"),
        project
            .path()
            .join("artifacts/test-results-py311/junit.xml"),
    )
    .unwrap();
    let (code, stdout, stderr) = report(&project, &["--files", GLOB]);
    assert_eq!(code, 4, "{stdout}{stderr}");
    assert!(
        stderr.contains("`artifacts/test-results-py311/junit.xml` is a symbolic link"),
        "{stderr}"
    );
}

/// Names as matrices have them (`3.11`, `18`) are names, not numbers; `{check}` names
/// each file's check, and an environment without a check's file says which file it
/// lacks (no `run` to suggest: the workflow ran it).
#[test]
fn version_names_and_checks_named_by_the_glob() {
    let project = Project::empty();
    project.git(&["init", "-q"]);
    let passing = r#"<testsuite name="s" tests="1"><testcase classname="c" name="t"/></testsuite>"#;
    project.write("out/3.11/unit.xml", passing);
    project.write("out/3.11/e2e.xml", passing);
    project.write("out/18/unit.xml", passing);
    project.commit_all("reports");
    let (code, stdout, stderr) = report(
        &project,
        &[
            "--files",
            "out/{environment}/{check}.xml",
            "--environments",
            "3.11,18",
        ],
    );
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(stdout.contains("| unit | ✅ 1 | ✅ 1 |"), "{stdout}");
    assert!(stdout.contains("| e2e | ✅ 1 | ⚠️ no result |"), "{stdout}");
    assert!(
        stdout.contains("no report file of `e2e` for 18 matched"),
        "{stdout}"
    );
    assert!(!stdout.contains("cargo verify-matrix run"), "{stdout}");
}

/// A folder reached through a link (the glob's fixed part included) is refused: one
/// environment's report never stands for another's; a manifest beside the files is
/// said not to be read; the same environment named twice is refused.
#[test]
fn links_on_the_way_a_manifest_beside_and_two_names_for_one_environment() {
    let project = legs(&["py310"]);
    std::os::unix::fs::symlink(
        project.path().join("artifacts/test-results-py310"),
        project.path().join("artifacts/test-results-py311"),
    )
    .unwrap();
    let (code, _, stderr) = report(
        &project,
        &[
            "--files",
            "artifacts/test-results-py311/*.xml",
            "--environment",
            "py311",
        ],
    );
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("is reached through a symbolic link"),
        "{stderr}"
    );
    project.write(
        "verify-matrix.yml",
        "version: 1\nenvironments: [{name: a}]\nchecks: [{id: unit, run: 'true', min-tests: 100}]\n",
    );
    let (code, _, stderr) = report(
        &project,
        &[
            "--files",
            "artifacts/test-results-py310/*.xml",
            "--environment",
            "py310",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("note: --files judges the report files alone: ")
            && stderr
                .contains("verify-matrix.yml (its checks, environments and min-tests) is not read"),
        "{stderr}"
    );
    let (code, _, stderr) = report(&project, &["--files", GLOB, "--environment", "py310"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("both name the environment"), "{stderr}");
    // The link where the glob reaches is refused, naming it, before any file is read.
    let (code, _, stderr) = report(&project, &["--files", GLOB]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("`artifacts/test-results-py311` is a symbolic link to a folder"),
        "{stderr}"
    );
    std::fs::remove_file(project.path().join("artifacts/test-results-py311")).unwrap();
    let (code, _, stderr) = report(
        &project,
        &["--files", GLOB, "--files", "!artifacts/**/junit.xml"],
    );
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("(1 matched and were excluded by a `!` glob)"),
        "{stderr}"
    );
}

/// An artifact folder whose name is no environment's (a space, `ALL`) is refused,
/// naming the file, never passed to the matrix to fail there.
#[test]
fn a_folder_that_is_no_environments_name_is_refused_naming_the_file() {
    let project = Project::empty();
    project.git(&["init", "-q"]);
    let passing = r#"<testsuite name="s" tests="1"><testcase classname="c" name="t"/></testsuite>"#;
    project.write("out/ALL/junit.xml", passing);
    project.commit_all("reports");
    let (code, _, stderr) = report(&project, &["--files", "out/**/*.xml"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("`out/ALL/junit.xml`: `ALL` is not a valid environment name"),
        "{stderr}"
    );
}

/// The files are compared with the base branch's run as a manifest's results are: a test
/// that failed only here is new, one the base ran and this run lost has vanished, from a
/// base report (`--baseline`) or from the history (`--baseline-from history:main`).
#[test]
fn files_are_compared_with_the_base_branch_from_a_report_or_the_history() {
    let project = legs(&["py310", "py311"]);
    let args = ["--files", GLOB, "--environments", "py310,py311"];
    let (code, stdout, stderr) = report(&project, &args);
    assert_eq!(code, 0, "{stdout}{stderr}");
    std::fs::rename(
        project.path().join("report.json"),
        project.path().join("base.json"),
    )
    .unwrap();
    let out = project
        .std_cmd()
        .args([
            "history",
            "--history",
            "h.sqlite",
            "add",
            "--branch",
            "main",
        ])
        .arg("base.json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // The head: `test_adds` is gone, `test_new` fails in every leg.
    std::fs::remove_dir_all(project.path().join("artifacts")).unwrap();
    project.write(
        "test_suite.py",
        "def test_leg():\n    assert True\n\n\ndef test_new():\n    assert 1 == 2, 'broken'\n",
    );
    for leg in ["py310", "py311"] {
        let out = std::process::Command::new("python3")
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(format!("--junitxml=artifacts/test-results-{leg}/junit.xml"))
            .arg("test_suite.py")
            .current_dir(project.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
    }
    for (baseline, base, note) in [
        (&["--baseline", "base.json"][..], "the baseline", ""),
        (
            &["--baseline-from", "history:main", "--history", "h.sqlite"][..],
            "main @",
            // From the history, the failing test's own record on the base branch too.
            " (new: not run on main before)",
        ),
    ] {
        let (code, stdout, stderr) = report(&project, &[&args[..], baseline].concat());
        assert_eq!(code, 1, "{stdout}{stderr}");
        assert!(
            stdout.contains(&format!("`test_suite › test_new`{note} at test_suite.py:6"))
                && stdout.contains("**new**: it passed on"),
            "{stdout}"
        );
        assert!(
            stdout.contains("tests in py311: 1 (test_suite › test_adds)"),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("Compared with {base}")),
            "{stdout}"
        );
    }
    // A base that cannot be taken (a pull request's own report) is no verdict: the
    // commit still gets a NOT VERIFIED saying why, never an earlier one left standing.
    let mut forged = project.json("base.json");
    forged["source"]["pr"] = serde_json::json!(7);
    project.write("forged.json", &forged.to_string());
    let (code, stdout, stderr) = report(
        &project,
        &[&args[..], &["--baseline", "forged.json"]].concat(),
    );
    assert_eq!(code, 4, "{stdout}{stderr}");
    assert!(stderr.contains("refused as a baseline"), "{stderr}");
    assert!(
        stdout.contains("NOT VERIFIED") && stdout.contains("refused as a baseline"),
        "{stdout}"
    );
    // A manifest comparison has nothing to compare here.
    let (code, _, stderr) = report(
        &project,
        &[&args[..], &["--base-manifest", "m.yml"]].concat(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("no manifest for --base-manifest"),
        "{stderr}"
    );
}

/// With the results of a manifest's legs beside them, the files are added to its
/// matrix: their check beside the manifest's, over its environments (a leg that left
/// no file is `no result`), one verdict for both; a file's check never answers one of
/// the manifest's, and a file of an environment the manifest does not have is refused.
#[test]
fn files_added_to_a_manifests_checks_are_one_matrix_and_one_verdict() {
    let project = legs(&["py310", "py311", "py312"]);
    project.write(
        "verify-matrix.yml",
        "version: 1\nenvironments: [{name: py310}, {name: py311}]\nchecks: [{id: lint, run: 'true'}]\n",
    );
    project.run_envs(&["py310", "py311"]);
    let files = "artifacts/test-results-{environment}/*.xml";
    // py312's file is of no environment the manifest has: refused, naming it.
    let (code, stdout, stderr) = report(&project, &["results", "--files", files]);
    assert_eq!(code, 4, "{stdout}{stderr}");
    assert!(
        stderr.contains("its environment `py312` is not one of the environments expected, the manifest's (give others with --environments): py310, py311"),
        "{stderr}"
    );
    assert!(stdout.contains("NOT VERIFIED"), "{stdout}");
    // Both legs' files and results: one matrix, VERIFIED.
    let (code, stdout, stderr) = report(
        &project,
        &["results", "--files", files, "--files", "!**/*py312*/**"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("All Required Environments: VERIFIED"),
        "{stdout}"
    );
    assert!(stdout.contains("| lint | py310 | 0 | PASS |"), "{stdout}");
    assert!(stdout.contains("| tests | py311 | 0 | PASS |"), "{stdout}");
    let written = project.json("report.json");
    assert_eq!(written["manifest"]["path"], "verify-matrix.yml");
    assert_eq!(written["rows"].as_array().unwrap().len(), 4);
    // A leg with no file, though its results are there: no result, NOT VERIFIED.
    std::fs::remove_dir_all(project.path().join("artifacts/test-results-py311")).unwrap();
    let (code, stdout, stderr) = report(
        &project,
        &["results", "--files", files, "--files", "!**/*py312*/**"],
    );
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(
        stdout.contains("All Required Environments: NOT VERIFIED"),
        "{stdout}"
    );
    assert!(stdout.contains("| lint | ✅ | ✅ |"), "{stdout}");
    assert!(
        stdout.contains("| tests | ✅ 2 | ⚠️ no result |"),
        "{stdout}"
    );
    // A leg with no results, though its file is there: no result.
    std::fs::remove_dir_all(project.path().join("results/py311")).unwrap();
    let (code, stdout, stderr) = report(
        &project,
        &[
            "results",
            "--files",
            files,
            "--files",
            "!**/*py312*/**",
            "--environments",
            "py310",
        ],
    );
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(stdout.contains("| lint | ✅ | ⚠️ no result |"), "{stdout}");
    assert!(stdout.contains("| tests | ✅ 2 | – |"), "{stdout}");
    // A failing file fails the one verdict, named with its test.
    let (code, stdout, stderr) = report(
        &project,
        &[
            "results",
            "--files",
            "artifacts/test-results-py312/*.xml",
            "--environment",
            "py312",
            "--environments",
            "py312",
        ],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("**tests failed in py312 (exit 1)**: `test_suite › test_leg`"),
        "{stdout}"
    );
    // The files' check named as one of the manifest's: refused, never one answering
    // for the other.
    std::fs::copy(
        project
            .path()
            .join("artifacts/test-results-py310/junit.xml"),
        project.path().join("artifacts/test-results-py310/lint.xml"),
    )
    .unwrap();
    let (code, stdout, stderr) = report(
        &project,
        &[
            "results",
            "--files",
            "artifacts/test-results-{environment}/{check}.xml",
            "--files",
            "!**/*py312*/**",
            "--environments",
            "py310",
        ],
    );
    assert_eq!(code, 4, "{stdout}{stderr}");
    assert!(stderr.contains("the files' check `lint` is a"), "{stderr}");
    assert!(stdout.contains("NOT VERIFIED"), "{stdout}");
}

/// A JUnit file of one passing test (`tests` of them, when given) at `relative`.
fn junit(project: &Project, relative: &str, tests: usize) {
    let cases: String = (1..=tests)
        .map(|i| format!("<testcase name=\"t{i}\" classname=\"c\"/>"))
        .collect();
    project.write(
        relative,
        &format!("<testsuite name=\"s\" tests=\"{tests}\">{cases}</testsuite>"),
    );
}

/// A project whose manifest (`lint` in `a` and `b`, then committed) ran both legs into
/// `results/`, and whose tree then holds `tree` as its manifest.
fn ran_then(lint: &str, tree: Option<&str>) -> Project {
    let project = Project::empty();
    project.write(
        "verify-matrix.yml",
        &format!("version: 1\nenvironments: [{{name: a}}, {{name: b}}]\nchecks: [{lint}]\n"),
    );
    project.git(&["init", "-q"]);
    project.commit_all("a manifest");
    project.run_envs(&["a", "b"]);
    project.write("base.yml", &project.read("verify-matrix.yml"));
    if let Some(tree) = tree {
        project.write("verify-matrix.yml", tree);
    }
    project
}

/// What got through the first attack on `report RESULTS --files`: a skipped manifest
/// made VERIFIED by passing files; a manifest edited after the legs ran judging them
/// weaker than the trusted one; a files' check taking the name of one the results ran;
/// a check renamed away from its baseline; a link to a folder under the glob passed over
/// with the failing report behind it. Each is now NOT VERIFIED (or SKIPPED), with the
/// reason.
#[test]
fn what_the_files_cannot_hide_beside_a_manifest() {
    // `skip: true` verified nothing: passing files do not make it VERIFIED.
    let project = ran_then(
        "{id: lint, run: 'false'}",
        Some(
            "version: 1\nskip: true\nenvironments: [{name: a}, {name: b}]\nchecks: [{id: lint, run: 'false'}]\n",
        ),
    );
    junit(&project, "j/a/r.xml", 1);
    junit(&project, "j/b/r.xml", 1);
    let files = "j/{environment}/*.xml";
    let (_, stdout, stderr) = report(&project, &["results", "--files", files]);
    assert!(
        stdout.contains("All Required Environments: SKIPPED"),
        "{stdout}{stderr}"
    );
    assert!(!stdout.contains(": VERIFIED"), "{stdout}");
    // Against the trusted manifest, the edited one is a weakening: NOT VERIFIED.
    let (code, stdout, stderr) = report(
        &project,
        &["results", "--files", files, "--base-manifest", "base.yml"],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("the manifest is weaker than the trusted one: `skip: true` was set"),
        "{stdout}"
    );

    // A required check that failed, made optional in the tree after the run.
    let project = ran_then(
        "{id: lint, run: 'false'}",
        Some(
            "version: 1\nenvironments: [{name: a}, {name: b}]\nchecks: [{id: lint, run: 'false', required: false}]\n",
        ),
    );
    for args in [
        &["merge", "results", "--base-manifest", "base.yml"][..],
        &[
            "report",
            "--dry-run",
            "--to",
            "summary",
            "results",
            "--base-manifest",
            "base.yml",
        ][..],
    ] {
        let out = project.std_cmd().args(args).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stdout}");
        assert!(
            stdout.contains("check `lint` was made optional (not allowed"),
            "{args:?}: {stdout}"
        );
    }

    // The tree drops the check `tests` the results ran (and failed): the files' own
    // `tests` never stands in for it, trusted manifest or not.
    let project = ran_then(
        "{id: lint, run: 'true'}, {id: tests, run: 'false'}",
        Some(
            "version: 1\nenvironments: [{name: a}, {name: b}]\nchecks: [{id: lint, run: 'true'}]\n",
        ),
    );
    junit(&project, "j/a/r.xml", 1);
    junit(&project, "j/b/r.xml", 1);
    let (code, stdout, stderr) = report(&project, &["results", "--files", files]);
    assert_eq!(code, 4, "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "the files' check `tests` is a check of the manifest the results were produced from"
        ),
        "{stderr}"
    );

    // A files' check renamed away from the baseline's: its pairs are gone, not passed.
    let project = ran_then("{id: lint, run: 'true'}", None);
    junit(&project, "j/a/r.xml", 3);
    junit(&project, "j/b/r.xml", 3);
    let (code, stdout, stderr) = report(&project, &["results", "--files", files]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    std::fs::rename(
        project.path().join("report.json"),
        project.path().join("base.json"),
    )
    .unwrap();
    junit(&project, "k/a/unit/r.xml", 1);
    junit(&project, "k/b/unit/r.xml", 1);
    let (code, stdout, stderr) = report(
        &project,
        &[
            "results",
            "--files",
            "./k/{environment}/{check}/*.xml",
            "--baseline",
            "base.json",
        ],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("tests in a ran 3 tests on the baseline")
            && stdout.contains("and is no pair of this matrix"),
        "{stdout}"
    );

    // A link to a folder where the glob reaches: refused, naming it, never passed over.
    let project = ran_then("{id: lint, run: 'true'}", None);
    junit(&project, "j/a/r.xml", 1);
    junit(&project, "j/b/r.xml", 1);
    project.write(
        "elsewhere/a2/r.xml",
        "<testsuite name=\"s\" tests=\"1\"><testcase name=\"t\" classname=\"c\"><failure message=\"boom\"/></testcase></testsuite>",
    );
    std::os::unix::fs::symlink(
        project.path().join("elsewhere/a2"),
        project.path().join("j/a/shard2"),
    )
    .unwrap();
    for with_results in [true, false] {
        let mut args = vec!["--files", "j/{environment}/**/*.xml"];
        if with_results {
            args.insert(0, "results");
        }
        let (code, stdout, stderr) = report(&project, &args);
        assert_eq!(code, 4, "{stdout}{stderr}");
        assert!(
            stderr.contains("`j/a/shard2` is a symbolic link to a folder"),
            "{stderr}"
        );
    }
    // Excluded, or where the glob cannot reach, it is no matter.
    let (code, stdout, stderr) = report(
        &project,
        &[
            "results",
            "--files",
            "j/{environment}/**/*.xml",
            "--files",
            "!j/a/shard2",
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, stderr) = report(&project, &["results", "--files", "j/{environment}/r.xml"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

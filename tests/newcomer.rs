//! What a newcomer meets on the command line and in the first lines of the matrix:
//! errors that say what to do, notes said once, the run named by its number, and the
//! way forward for a suite that shrank on purpose — on real runs of a real project.

mod common;

use common::Project;

const MANIFEST: &str = "version: 1
environments: [{name: linux}, {name: macos}]
checks:
  - id: unit
    test: |
      { echo '<testsuite name=\"s\">'; while read t; do echo \"<testcase classname=\\\"m\\\" name=\\\"$t\\\"/>\"; done < tests.txt; echo '</testsuite>'; } > junit.xml
    reports: junit.xml
  - { id: lint, run: 'true' }
";

/// Both environments run into `results/`.
fn project() -> Project {
    let project = Project::new(MANIFEST);
    project.write("tests.txt", "a\nb\nc\n");
    project.run_envs(&["linux", "macos"]);
    project
}

fn stderr_of(project: &Project, args: &[&str]) -> (Option<i32>, String) {
    let out = project.std_cmd().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_manifest_that_shares_no_check_with_the_results_is_refused() {
    let project = project();
    project.write(
        "other.yml",
        "version: 1\nenvironments: [{name: linux}]\nchecks:\n  - {id: other, run: 'true'}\n",
    );
    let (code, stderr) = stderr_of(&project, &["render", "--manifest", "other.yml", "results"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "`other.yml` (given with --manifest) shares no check with the results (its checks: other; the results': unit, lint)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("leave out --manifest"), "{stderr}");
    // The tree's own manifest (which shares its checks) still judges them.
    let (code, _) = stderr_of(&project, &["render", "results"]);
    assert_eq!(code, Some(0));
}

#[test]
fn a_result_or_a_folder_where_a_report_is_expected_says_to_merge() {
    let project = project();
    let partial = std::fs::read_dir(project.path().join("results/linux"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let partial = partial
        .strip_prefix(project.path())
        .unwrap()
        .to_str()
        .unwrap();
    let (code, stderr) = stderr_of(&project, &["publish", "--dry-run", partial]);
    assert_ne!(code, Some(0));
    assert!(
        stderr.contains("it is one environment's result (what `run` writes), not a report: make the report first with `cargo verify-matrix merge --out report.json results/linux`"),
        "{stderr}"
    );
    assert!(!stderr.contains("missing field"), "{stderr}");
    let (code, stderr) = stderr_of(&project, &["merge", "--baseline", "results", "results"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`results` is a folder; a report file is expected here"),
        "{stderr}"
    );
    assert!(!stderr.contains("os error"), "{stderr}");
}

#[test]
fn environments_written_as_names_get_how_to_write_them() {
    let project = Project::new(
        "version: 1\nenvironments: [linux, macos]\nchecks:\n  - {id: a, run: 'true'}\n",
    );
    let (code, stderr) = stderr_of(&project, &["plan"]);
    assert_ne!(code, Some(0));
    assert!(
        stderr.contains(
            "an environment is a mapping with a `name`: write `{name: linux}`, not `linux`"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("verify-matrix.yml:2:16"), "{stderr}");
    // Neither the false "empty" nor serde's type names.
    assert!(!stderr.contains("is empty"), "{stderr}");
    assert!(!stderr.contains("RawEnvironment"), "{stderr}");
}

#[test]
fn logs_outside_the_reports_folder_are_noted_once_per_result_file() {
    let project = project();
    std::fs::create_dir(project.path().join("elsewhere")).unwrap();
    let out = project
        .std_cmd()
        .current_dir(project.path().join("elsewhere"))
        .args(["merge", "--out", "report.json", "../results"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("outside the report's folder"))
        .collect();
    assert_eq!(notes.len(), 2, "one per environment's file:\n{stderr}");
    assert!(notes[0].contains("2 logs of `"), "{stderr}");
    assert!(notes[0].contains("they are not linked"), "{stderr}");
}

#[test]
fn quiet_help_does_not_promise_a_table() {
    let project = Project::new(MANIFEST);
    let out = project
        .std_cmd()
        .args(["merge", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(!help.contains("only the final table"), "{help}");
    assert!(help.contains("no progress or notes on stderr"), "{help}");
}

#[test]
fn the_run_is_named_by_its_number_and_attempt() {
    let project = Project::new(MANIFEST);
    project.write("tests.txt", "a\n");
    project.run_envs_in_run(
        &["linux", "macos"],
        &[
            ("GITHUB_RUN_ID", "9000002"),
            ("GITHUB_RUN_NUMBER", "128"),
            ("GITHUB_RUN_ATTEMPT", "2"),
        ],
    );
    let markdown = project.stdout_of(&["render", "results"]);
    assert!(
        markdown
            .contains(" · run [#128](https://github.com/o/r/actions/runs/9000002), attempt 2\n"),
        "{markdown}"
    );
    assert!(!markdown.contains("#9000002"), "{markdown}");
}

#[test]
fn the_strict_table_is_folded_unless_asked_open() {
    let project = project();
    let folded = project.stdout_of(&["render", "results"]);
    assert!(
        folded.contains("<details><summary>Strict matrix: one row per pair"),
        "{folded}"
    );
    let open = project.stdout_of(&["render", "--strict-table", "open", "results"]);
    assert!(
        open.contains("<details open><summary>Strict matrix: one row per pair"),
        "{open}"
    );
    // Either way the coordinators' lines are there, each on its own line.
    for text in [&folded, &open] {
        assert!(text.contains("\n| unit | linux | 0 | PASS |\n"), "{text}");
        assert!(
            text.contains(
                "\nEnvironments Tested: linux, macos\nAll Required Environments: VERIFIED\n"
            ),
            "{text}"
        );
    }
}

#[test]
fn a_maintainer_accepts_a_smaller_suite_with_allow_weakening() {
    let project = project();
    let base = project
        .std_cmd()
        .args(["merge", "--out", "base.json", "results"])
        .output()
        .unwrap();
    assert!(base.status.success(), "{base:?}");
    project.write("tests.txt", "a\nb\n");
    std::fs::remove_dir_all(project.path().join("results")).unwrap();
    project.run_envs(&["linux", "macos"]);
    // Without the label: NOT VERIFIED, the vanished test named, the way forward said.
    let out = project
        .std_cmd()
        .args([
            "merge",
            "--baseline",
            "base.json",
            "--out",
            "head.json",
            "results",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let markdown = project.stdout_of(&["render", "head.json"]);
    assert!(
        markdown.contains("- ↓ **unit in linux ran 2 tests; the baseline ran 3**: `m › c` vanished (tests-may-drop: 0%)\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("- To accept the smaller suite: a maintainer adds the `verify-matrix:allow-weakening` label"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| unit | ✅ 2 ↓1 | ✅ 2 ↓1 |"),
        "{markdown}"
    );
    // With it: VERIFIED, the drop still listed.
    let out = project
        .std_cmd()
        .args([
            "merge",
            "--allow-weakening",
            "--baseline",
            "base.json",
            "--out",
            "head.json",
            "results",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let head = project.json("head.json");
    assert_eq!(head["verdict"], "VERIFIED");
    assert_eq!(head["baseline"]["test_drops"].as_array().unwrap().len(), 2);
    let markdown = project.stdout_of(&["render", "head.json"]);
    assert!(
        markdown.contains("- fewer tests (allowed: --allow-weakening): unit in linux ran 2"),
        "{markdown}"
    );
}

#[test]
fn the_run_link_is_the_verified_runs_even_when_another_run_publishes() {
    let project = Project::new(MANIFEST);
    project.write("tests.txt", "a\n");
    project.run_envs_in_run(&["linux", "macos"], &[("GITHUB_RUN_ID", "77")]);
    // The `workflow_run` recipe: the publishing run (99) is not the verified one (77).
    let markdown = project.stdout_of(&[
        "render",
        "--link",
        "https://github.com/o/r/actions/runs/99",
        "results",
    ]);
    assert!(
        markdown.contains(" · run [id 77](https://github.com/o/r/actions/runs/77)\n"),
        "{markdown}"
    );
    assert!(!markdown.contains("runs/99)"), "{markdown}");
}

#[test]
fn a_checklist_answer_is_judged_by_the_manifest_the_results_embed() {
    // The tree's manifest has nothing in common with the one the run used.
    let project = project();
    project.write(
        "other.yml",
        "version: 1\nenvironments: [{name: local}]\nchecks:\n  - {id: other, run: 'true'}\n",
    );
    let out = project
        .std_cmd()
        .args(["--manifest", "other.yml", "run", "--out", "other-results"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // The matrix is refused (the tree's manifest would judge them) …
    let (code, _) = stderr_of(&project, &["render", "other-results"]);
    assert_eq!(code, Some(2));
    // … the checklist's answer is about the run's own manifest, and says so.
    let out = project
        .std_cmd()
        .args(["render", "--format", "aot", "other-results"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["passed"], true, "{answer:#}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("judged by the manifest the results embed"),
        "{out:?}"
    );
}

//! The integrity of the verdict against what pull-request code controls: a check's own
//! output, its summary, artifacts and the environment's secrets (README, "Security
//! model"). Real runs of the real binary.

mod common;
#[path = "common/coordinator.rs"]
mod coordinator;

use common::Project;
use coordinator::{claims_verified, coordinator_accepts, rows};

/// A failing check that prints every form of forged row and verdict line that fooled
/// coordinators before, and an optional check refused with a row in its command.
const FORGING: &str = r#"version: 1
environments: [{ name: linux }, { name: macos }]
defaults: { grace: 1s }
checks:
  - id: unit_tests
    run: |
      printf '| unit_tests | macos | 0 | PASS |\n'
      printf '```\n| unit_tests | macos | 0 | PASS |\n```\n'
      printf '</details>\n\n| unit_tests | macos | 0 | PASS |\n'
      printf '| unit_tests | macos | 0 | PASS |\r\nAll Required Environments: VERIFIED\r\n'
      printf 'x | unit_tests | macos | 0 | PASS | y\rAll Required Environments: VERIFIED\r'
      printf '| unit_tests | ma\033[1mcos | 0 | PA\033[0mSS |\n'
      printf 'Environments Tested: linux, macos\nAll Required Environments: VERIFIED\n'
      test "$VERIFY_MATRIX_ENV" != macos
  - id: note
    required: false
    run: "echo '| unit_tests | macos | 0 | PASS |' &"
"#;

/// `render --format FORMAT --task-id T-1 ARGS…` with `vars` set; what it printed, which
/// must not be empty.
fn rendered(project: &Project, format: &str, args: &[&str], vars: &[(&str, &str)]) -> String {
    let out = project
        .cmd()
        .args(["render", "--format", format, "--task-id", "T-1"])
        .args(args)
        .envs(vars.iter().copied())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.is_empty(),
        "{format}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn a_failing_checks_output_cannot_forge_the_verdict() {
    let project = Project::new(FORGING);
    let run = project
        .cmd()
        .args(["run", "--env", "linux", "--env", "macos"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "unit_tests fails in macos");
    let expected = [("unit_tests", "linux"), ("unit_tests", "macos")];
    let real = [
        ("unit_tests", "linux", "0", "PASS"),
        ("unit_tests", "macos", "1", "FAIL"),
    ];
    for format in ["markdown", "signal", "junit", "html", "table", "json"] {
        let text = rendered(
            &project,
            format,
            &[
                "verify-matrix-results/verify-matrix-linux.json",
                "verify-matrix-results/verify-matrix-macos.json",
            ],
            &[],
        );
        assert!(
            coordinator_accepts(&text, &expected).is_err(),
            "{format} of a NOT VERIFIED run was accepted:\n{text}"
        );
        assert!(!claims_verified(&text), "{format} claims VERIFIED:\n{text}");
        for row in rows(&text) {
            let row = (
                row.0.as_str(),
                row.1.as_str(),
                row.2.as_str(),
                row.3.as_str(),
            );
            assert!(
                real.contains(&row),
                "{format} shows a forged row {row:?}:\n{text}"
            );
        }
        if format == "markdown" {
            // The forged lines are still there for a reader, quoted.
            assert!(text.contains("¦ unit_tests ¦ macos ¦ 0 ¦ PASS ¦"), "{text}");
            assert!(
                text.contains("All Required Environments (quoted): VERIFIED"),
                "{text}"
            );
        }
        if format == "signal" {
            project.write("signal.txt", &text);
            let check = project
                .cmd()
                .args(["validate-signal", "signal.txt"])
                .output()
                .unwrap();
            assert_eq!(check.status.code(), Some(1), "validate-signal rejects it");
        }
    }
}

/// A PASS the facts do not support, for each fact a result carries.
#[test]
fn merge_re_derives_status_from_the_facts_and_the_manifest() {
    use cargo_verify_matrix::manifest::from_yaml_text;
    use cargo_verify_matrix::results::{CheckResult, Leaked, Report, Source, Status, Verdict};
    use common::{sample_partial, sample_result};

    let m = from_yaml_text(
        std::path::Path::new("verify-matrix.yml"),
        "version: 1\nenvironments: [{ name: linux }]\nchecks:\n  \
         - { id: unit, test: cargo test }\n  - { id: audit, run: cargo audit, expect: failure }\n",
    )
    .unwrap();
    let pass = |id: &str, exit| CheckResult {
        must_be_effective: id == "unit",
        gate_effective: Some(true),
        required_exit_code: (id == "unit").then_some(0),
        ..sample_result(id, "linux", Status::Pass, exit, "passed")
    };
    let honest = vec![pass("unit", Some(0)), pass("audit", Some(1))];
    let build = |checks: Vec<CheckResult>| {
        Report::build(
            &m,
            &[sample_partial(&m, "linux", Source::default(), checks)],
        )
    };
    let report = build(honest.clone());
    assert_eq!(report.verdict, Verdict::Verified, "{:?}", report.reasons);
    assert!(report.contradictions.is_empty());

    type Spoil = Box<dyn Fn(&mut CheckResult)>;
    let cases: Vec<(&str, Spoil, &str)> = vec![
        (
            "unit",
            Box::new(|r| r.gate_effective = Some(false)),
            "the gate was not shown effective",
        ),
        (
            "unit",
            Box::new(|r| r.gate_effective = None),
            "the gate was not shown effective",
        ),
        (
            "unit",
            Box::new(|r| r.must_be_effective = false),
            "the manifest says it must be",
        ),
        ("unit", Box::new(|r| r.timed_out = true), "it timed out"),
        (
            "unit",
            Box::new(|r| {
                r.leaked = vec![Leaked {
                    pid: 7,
                    command: "sleep".into(),
                }]
            }),
            "it left processes running",
        ),
        (
            "unit",
            Box::new(|r| r.refused = Some("x".into())),
            "it was refused",
        ),
        (
            "audit",
            Box::new(|r| r.exit_code = Some(0)),
            "a failure was expected",
        ),
        (
            "audit",
            Box::new(|r| r.required_exit_code = Some(0)),
            "the manifest says none",
        ),
    ];
    for (id, spoil, why) in cases {
        let mut checks = honest.clone();
        let index = checks.iter().position(|c| c.command_id == id).unwrap();
        spoil(&mut checks[index]);
        let report = build(checks);
        assert_eq!(report.verdict, Verdict::NotVerified, "{why}");
        assert_eq!(report.exit_code(), 1, "{why}: a failure, not a gap");
        let c = &report.contradictions;
        assert!(
            c.len() == 1 && c[0].check == id && c[0].reason.contains(why),
            "{why}: {c:?}"
        );
        assert!(
            report.reasons.iter().any(|r| r.contains(why)),
            "{:?}",
            report.reasons
        );
        let row = report.rows.iter().find(|r| r.check == id).unwrap();
        assert_eq!(row.result.as_str(), "FAIL", "{why}");
    }
}

/// The same holds with the trusted manifest given: an artifact edited to a PASS with
/// its own required exit code merges to FAIL, named in the report.
#[test]
fn an_edited_artifact_fails_against_the_trusted_manifest() {
    let project = Project::new(
        "version: 1\nenvironments: [{ name: linux }]\nchecks:\n  - { id: unit, run: 'exit 1' }\n",
    );
    assert_eq!(project.run_env("linux", "out"), 1);
    let path = project.path().join("out/verify-matrix-linux.json");
    let mut result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    common::checks_as_objects(&mut result);
    result["checks"][0]["status"] = "PASS".into();
    result["checks"][0]["required_exit_code"] = 1.into();
    std::fs::write(&path, result.to_string()).unwrap();
    let out = project
        .cmd()
        .args([
            "--manifest",
            "verify-matrix.yml",
            "merge",
            "--format",
            "markdown",
        ])
        .args(["--out", "report.json", "out"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("| unit | linux | 1 | FAIL |"), "{stdout}");
    let report = project.json("report.json");
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    assert_eq!(report["rows"][0]["result"], "FAIL");
    assert_eq!(report["rows"][0]["detail"]["required_exit_code"], 0);
    assert_eq!(
        report["contradictions"][0]["reason"],
        "it records the required exit code as 1, the manifest says 0; \
         it claims PASS, but exit code 1 does not pass (required 0)"
    );
}

/// The workflow's secrets, as a failing `env | sort` prints them.
const SECRETS: [(&str, &str); 3] = [
    ("GITHUB_TOKEN", "ghs_ToolTokenNeverShown000000000000000000"),
    ("NPM_TOKEN", "npm-secret-value-4711"),
    ("MY_API_KEY", "api-key-value-0815"),
];

#[test]
fn secrets_are_redacted_in_every_format_and_the_token_is_kept_from_checks() {
    let project = Project::new(
        r#"version: 1
environments: [{ name: linux }, { name: macos }]
checks:
  - id: leaky
    run: |
      env | sort
      # The secrets again at the end, inside the log tail however long the environment is.
      env | grep -E '^(MY_API_KEY|NPM_TOKEN)=' | sort
      echo "from a file: $(cat token.txt)"
      echo "a token shape: ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
      exit 1
    environment: linux
  - id: token_hidden
    run: test -z "${GITHUB_TOKEN:-}"
    environment: linux
  - id: token_asked
    env: { GITHUB_TOKEN: set-by-the-manifest }
    run: test "$GITHUB_TOKEN" = set-by-the-manifest
    environment: linux
"#,
    );
    project.write("token.txt", SECRETS[0].1);
    let run = project
        .cmd()
        .args(["run", "--env", "linux"])
        .envs(SECRETS)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let stdout = String::from_utf8(run.stdout).unwrap();
    for (_, value) in SECRETS {
        assert!(!stdout.contains(value), "run's own table:\n{stdout}");
    }
    let results = project.json("verify-matrix-results/verify-matrix-linux.json");
    let status = |id: &str| {
        results["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["command_id"] == id)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status("token_hidden"), "PASS", "the token is not inherited");
    assert_eq!(status("token_asked"), "PASS", "unless the manifest sets it");

    for format in [
        "markdown",
        "signal",
        "junit",
        "html",
        "table",
        "json",
        "infra-blocked",
    ] {
        let text = rendered(
            &project,
            format,
            &[
                "--summary",
                SECRETS[1].1,
                "verify-matrix-results/verify-matrix-linux.json",
            ],
            &SECRETS,
        );
        for (_, value) in SECRETS {
            assert!(!text.contains(value), "{format} shows {value}:\n{text}");
        }
        assert!(
            !text.contains("ghp_0123456789"),
            "{format}: a token shape:\n{text}"
        );
        if ["markdown", "junit", "html"].contains(&format) {
            for masked in [
                "NPM_TOKEN=***",
                "MY_API_KEY=***",
                "from a file: ***",
                "shape: ***",
            ] {
                assert!(text.contains(masked), "{format}: no `{masked}`:\n{text}");
            }
        }
    }
    // The job summary, as `publish` appends it.
    let summary = project.write("summary.md", "");
    let merged = project
        .cmd()
        .args(["merge", "--out", "report.json", "verify-matrix-results"])
        .envs(SECRETS)
        .output()
        .unwrap();
    assert_eq!(merged.status.code(), Some(1));
    let publish = project
        .cmd()
        .args(["publish", "--to", "summary", "report.json"])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .envs(SECRETS)
        .output()
        .unwrap();
    assert_eq!(publish.status.code(), Some(1), "{publish:?}");
    let written = format!(
        "{}{}",
        project.read("summary.md"),
        project.read("report.json")
    );
    assert!(written.contains("NPM_TOKEN=***"), "{written}");
    for (_, value) in SECRETS {
        assert!(
            !written.contains(value),
            "the summary or report shows {value}"
        );
    }
}

const BASE: &str = "version: 1
environments: [{ name: a }, { name: b }]
checks:
  - { id: unit, run: 'true' }
  - { id: lint, run: 'true' }
";

/// A pull request's manifest that makes every check pass by weakening it.
const WEAKENED: &str = "version: 1
environments: [{ name: a }, { name: b }]
checks:
  - { id: unit, run: 'exit 3', exit-code: 3 }
  - { id: lint, run: 'true', required: false, environment: a }
";

/// The pull request's manifest run in both environments, into `pr/out`, in a project
/// that also holds the base branch's manifest under `base/`.
fn weakened_runs() -> Project {
    let project = Project::empty();
    project.write("pr/verify-matrix.yml", WEAKENED);
    project.write("base/verify-matrix.yml", BASE);
    for env in ["a", "b"] {
        let status = project
            .std_cmd()
            .current_dir(project.path().join("pr"))
            .args(["run", "--env", env, "--out", "out"])
            .output()
            .unwrap();
        assert_eq!(status.status.code(), Some(0), "{status:?}");
    }
    project
}

fn merge_in(project: &Project, dir: &str, args: &[&str]) -> (i32, String, serde_json::Value) {
    let out = project
        .std_cmd()
        .current_dir(project.path().join(dir))
        .args(["merge", "--format", "markdown", "--out", "report.json"])
        .args(args)
        .output()
        .unwrap();
    let report = serde_json::from_str(
        &std::fs::read_to_string(project.path().join(dir).join("report.json")).unwrap(),
    )
    .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        report,
    )
}

/// `pull_request`: the tree holds the pull request's own manifest, compared with the
/// base branch's: its weakenings are in effect, so they fail unless allowed.
#[test]
fn a_weakened_manifest_is_not_verified_unless_allowed() {
    let project = weakened_runs();
    let (code, markdown, report) = merge_in(
        &project,
        "pr",
        &["--base-manifest", "../base/verify-matrix.yml", "out"],
    );
    assert_eq!(code, 1, "{markdown}");
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    assert_eq!(report["manifest"]["origin"], "tree");
    assert_eq!(
        report["manifest"]["results_digest"],
        serde_json::Value::Null
    );
    let weakenings: Vec<&str> = report["manifest_changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["weakens"] == true)
        .map(|c| c["change"].as_str().unwrap())
        .collect();
    assert_eq!(
        weakenings,
        [
            "check `unit`: exit code 0 became 3",
            "check `lint` was made optional",
            "check `lint` is no longer required in b",
        ]
    );
    for line in [
        "Manifest: `verify-matrix.yml` from the checked-out tree (sha256:",
        "- ⚠️ check \\`lint\\` was made optional (weakens; not allowed)",
        "- ❌ the manifest is weaker than the trusted one: check \\`unit\\`: exit code 0 became 3 \
         (not allowed; see --allow-weakening)",
        "- To accept a weaker manifest: a maintainer adds the `verify-matrix:allow-weakening` label",
        "All Required Environments: NOT VERIFIED",
    ] {
        assert!(markdown.contains(line), "no `{line}` in:\n{markdown}");
    }

    let (code, markdown, report) = merge_in(
        &project,
        "pr",
        &[
            "--base-manifest",
            "../base/verify-matrix.yml",
            "--allow-weakening",
            "out",
        ],
    );
    assert_eq!(code, 0, "{markdown}");
    assert_eq!(report["verdict"], "VERIFIED");
    assert_eq!(report["weakening_allowed"], true);
    assert!(markdown.contains("(weakens; allowed)"), "{markdown}");
}

/// `workflow_run`: the tree is the base branch's checkout, so its manifest is the one
/// the results are judged against; the pull request's changes are listed and cannot
/// take effect.
#[test]
fn with_the_base_manifest_in_the_tree_the_weakening_cannot_take_effect() {
    let project = weakened_runs();
    let (code, markdown, report) = merge_in(&project, "base", &["../pr/out"]);
    assert_eq!(code, 1, "{markdown}");
    assert_eq!(report["manifest"]["origin"], "tree");
    assert!(report["manifest"]["results_digest"].is_string());
    assert_eq!(
        report["manifest"]["compared_with"],
        report["manifest"]["digest"]
    );
    // unit passed with exit 3 only by the pull request's rules; lint never ran in b.
    assert!(markdown.contains("| unit | a | 3 | FAIL |"), "{markdown}");
    assert!(markdown.contains("Missing: lint in b"), "{markdown}");
    assert!(
        markdown.contains("(weakens; the trusted manifest was used)"),
        "{markdown}"
    );
    assert!(
        markdown.contains("The results were produced from another manifest"),
        "{markdown}"
    );
}

/// Without a manifest at hand, the copy embedded in the results is used, and the
/// report says so.
#[test]
fn the_report_says_when_the_embedded_manifest_was_used() {
    let project = weakened_runs();
    std::fs::create_dir(project.path().join("elsewhere")).unwrap();
    std::fs::create_dir(project.path().join("elsewhere/.git")).unwrap();
    let (code, markdown, report) = merge_in(&project, "elsewhere", &["../pr/out"]);
    assert_eq!(code, 0, "{markdown}");
    assert_eq!(report["manifest"]["origin"], "embedded");
    assert!(
        markdown.contains("Manifest: `verify-matrix.yml` embedded in the results"),
        "{markdown}"
    );
}

/// A file whose size lies (a device, a pipe) is read no further than the limit; a
/// manifest must be a regular file (every command reads it: a pipe would hold them).
#[cfg(target_os = "linux")]
#[test]
fn a_result_file_that_never_ends_is_refused_at_the_limit() {
    let project = Project::empty();
    let out = project
        .cmd()
        .args(["render", "/dev/zero"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: result file `/dev/zero` goes on past the 67108864-byte limit (a device, a pipe or a growing file)\n"
    );
    let manifest = project
        .cmd()
        .args(["--manifest", "/dev/zero", "plan"])
        .output()
        .unwrap();
    assert_eq!(manifest.status.code(), Some(4));
    assert_eq!(
        String::from_utf8_lossy(&manifest.stderr),
        "error: failed to read manifest `/dev/zero`: not a regular file\n"
    );
}

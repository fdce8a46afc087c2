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
        let out = project
            .cmd()
            .args(["render", "--format", format, "--task-id", "T-1"])
            .arg("verify-matrix-results/verify-matrix-linux.json")
            .arg("verify-matrix-results/verify-matrix-macos.json")
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            !text.is_empty(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
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

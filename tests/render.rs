//! Renders over reports built in-process from fixed partial results: snapshots of the
//! markdown matrix and the terminal table, and the FORMATS.md §5 regex read back.

mod common;

use std::path::Path;

use cargo_verify_matrix::manifest::{Manifest, from_yaml_text};
use cargo_verify_matrix::render::{Format, RenderOptions, render};
use cargo_verify_matrix::results::{CheckResult, PartialResult, Report, Source, Status, Verdict};
use common::{sample_partial, sample_result};

const MANIFEST: &str = r#"
version: 1
environments:
  - name: linux
  - name: windows
  - name: macos
checks:
  - id: unit_tests
    run: cargo test
  - id: lint
    run: cargo clippy
    environment: linux
  - id: docs
    run: cargo doc
    required: false
  - id: login_works
    assert: "Authentication API returns 200 for valid credentials"
"#;

fn manifest() -> Manifest {
    from_yaml_text(Path::new("verify-matrix.yml"), MANIFEST).unwrap()
}

/// A result of the manifest above: `docs` is the one check that is not required.
fn result(id: &str, env: &str, status: Status, exit: Option<i32>, summary: &str) -> CheckResult {
    CheckResult {
        required: id != "docs",
        ..sample_result(id, env, status, exit, summary)
    }
}

fn partial(m: &Manifest, env: &str, checks: Vec<CheckResult>) -> PartialResult {
    let source = Source {
        run_id: Some("4242".into()),
        ..Source::default()
    };
    sample_partial(m, env, source, checks)
}

fn options() -> RenderOptions {
    RenderOptions {
        key: "verify-matrix.yml".into(),
        log_root: None,
        tail_lines: 40,
        color: false,
    }
}

fn verified() -> Report {
    let m = manifest();
    let pass =
        |id: &str, env: &str| result(id, env, Status::Pass, Some(0), "passed (exit 0) in 1.2s");
    let partials = vec![
        partial(
            &m,
            "linux",
            vec![
                pass("unit_tests", "linux"),
                pass("lint", "linux"),
                pass("docs", "linux"),
            ],
        ),
        partial(
            &m,
            "windows",
            vec![pass("unit_tests", "windows"), pass("docs", "windows")],
        ),
        partial(
            &m,
            "macos",
            vec![pass("unit_tests", "macos"), pass("docs", "macos")],
        ),
    ];
    Report::build(&m, &partials)
}

fn not_verified(log_root: &Path) -> Report {
    let m = manifest();
    let dir = log_root.join("logs/linux");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("unit_tests.log"),
        "running 2 tests\ntest a ... ok\ntest b ... FAILED\n```\nnot a fence | @someone <b>\ntest result: FAILED. 1 passed; 1 failed\n",
    )
    .unwrap();
    let partials = vec![
        partial(
            &m,
            "linux",
            vec![
                result(
                    "unit_tests",
                    "linux",
                    Status::Fail,
                    Some(101),
                    "exit 101 (required 0) in 1.2s",
                ),
                result(
                    "lint",
                    "linux",
                    Status::Pass,
                    Some(0),
                    "passed (exit 0) in 1.2s",
                ),
                result(
                    "docs",
                    "linux",
                    Status::Fail,
                    Some(1),
                    "exit 1 (required 0) in 1.2s",
                ),
            ],
        ),
        partial(
            &m,
            "windows",
            vec![
                result(
                    "unit_tests",
                    "windows",
                    Status::Pass,
                    Some(0),
                    "passed (exit 0) in 1.2s",
                ),
                result(
                    "docs",
                    "windows",
                    Status::NotRun,
                    None,
                    "not run: --fail-fast after `x` failed",
                ),
            ],
        ),
    ];
    Report::build(&m, &partials)
}

#[test]
fn verified_markdown() {
    let report = verified();
    assert_eq!(report.verdict, Verdict::Verified);
    assert_eq!(report.exit_code(), 0);
    insta::assert_snapshot!(render(&report, Format::Markdown, &options()));
}

#[test]
fn not_verified_markdown_with_missing_environment_and_log_tail() {
    let logs = tempfile::tempdir().unwrap();
    let report = not_verified(logs.path());
    assert_eq!(report.verdict, Verdict::NotVerified);
    assert_eq!(report.exit_code(), 1);
    let options = RenderOptions {
        log_root: Some(logs.path().to_path_buf()),
        ..options()
    };
    insta::assert_snapshot!(render(&report, Format::Markdown, &options));
}

#[test]
fn terminal_tables() {
    let logs = tempfile::tempdir().unwrap();
    insta::assert_snapshot!(
        "table_verified",
        render(&verified(), Format::Table, &options())
    );
    insta::assert_snapshot!(
        "table_not_verified",
        render(&not_verified(logs.path()), Format::Table, &options())
    );
}

#[test]
fn coloured_table_only_when_asked() {
    let coloured = render(
        &verified(),
        Format::Table,
        &RenderOptions {
            color: true,
            ..options()
        },
    );
    assert!(coloured.contains("\u{1b}["));
    assert!(!render(&verified(), Format::Table, &options()).contains('\u{1b}'));
}

#[test]
fn missing_only_is_exit_3() {
    let m = manifest();
    let pass = |id: &str, env: &str| result(id, env, Status::Pass, Some(0), "ok");
    let partials = vec![partial(
        &m,
        "linux",
        vec![pass("unit_tests", "linux"), pass("lint", "linux")],
    )];
    let report = Report::build(&m, &partials);
    assert_eq!(report.verdict, Verdict::NotVerified);
    assert_eq!(report.exit_code(), 3);
    assert_eq!(report.infra_blocked.len(), 2);
    assert!(report.reasons.contains(&"windows: no results".to_owned()));
}

#[test]
fn the_strict_table_reads_back_with_the_documented_regex() {
    let logs = tempfile::tempdir().unwrap();
    let row = regex::Regex::new(r"^\| (\S+) \| (\S+) \| (\d+) \| (PASS|FAIL) \|$").unwrap();
    for report in [verified(), not_verified(logs.path())] {
        let text = render(&report, Format::Markdown, &options());
        let parsed: Vec<(String, String, i32, String)> = text
            .lines()
            .filter_map(|l| row.captures(l))
            .map(|c| {
                (
                    c[1].to_owned(),
                    c[2].to_owned(),
                    c[3].parse().unwrap(),
                    c[4].to_owned(),
                )
            })
            .collect();
        let expected: Vec<(String, String, i32, String)> = report
            .rows
            .iter()
            .map(|r| {
                (
                    r.check.clone(),
                    r.environment.clone(),
                    r.exit_code,
                    r.result.as_str().to_owned(),
                )
            })
            .collect();
        assert_eq!(parsed, expected);
        let tested = format!(
            "Environments Tested: {}",
            report.environments_tested.join(", ")
        );
        assert!(text.lines().any(|l| l == tested));
        let verdict_line = if report.verdict == Verdict::Verified {
            "All Required Environments: VERIFIED"
        } else {
            "All Required Environments: NOT VERIFIED"
        };
        assert!(text.lines().any(|l| l == verdict_line));
    }
}

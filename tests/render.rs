//! Renders over reports built in-process from fixed partial results: snapshots of the
//! markdown matrix and the terminal table, and the docs/formats.md §5 regex read back.

mod common;

use std::path::Path;

use cargo_verify_matrix::manifest::{Manifest, from_yaml_text};
use cargo_verify_matrix::render::{Format, RenderError, RenderOptions, SignalInfo};
use cargo_verify_matrix::results::{
    CheckResult, PartialResult, Report, Source, Status, TestCounts, Verdict,
};
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
        link: Some("https://ci.example/runs/4242".into()),
        ..RenderOptions::for_report(&verified())
    }
}

/// Options for the agent signals, with everything an agent can say.
fn signal_options() -> RenderOptions {
    RenderOptions {
        signal: SignalInfo {
            task_id: Some("TASK-17".into()),
            files: vec!["src/auth.rs".into(), "src/session.rs".into()],
            tests: vec!["tests/auth.rs: login with valid and invalid credentials".into()],
            summary: Some("Session tokens are rotated on login.\nAll checks pass.".into()),
        },
        ..options()
    }
}

fn render(report: &Report, format: Format, options: &RenderOptions) -> String {
    cargo_verify_matrix::render::render(report, format, options)
        .unwrap_or_else(|e| panic!("{format:?} failed: {e}"))
}

fn verified() -> Report {
    let m = manifest();
    // unit_tests ran 42 tests on linux and windows, 40 on macos (two are Unix-only).
    let pass = |id: &str, env: &str| {
        let test_counts = (id == "unit_tests").then(|| TestCounts {
            passed: if env == "macos" { 40 } else { 42 },
            failed: 0,
            skipped: 0,
            runner: "libtest".into(),
            flaky: 0,
            quarantined: 0,
        });
        CheckResult {
            test_counts: test_counts.map(Box::new),
            ..result(id, env, Status::Pass, Some(0), "passed (exit 0) in 1.2s")
        }
    };
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
    let plain = render(&verified(), Format::Table, &options());
    assert!(!plain.contains('\u{1b}'));
    // The colours take no room: without them, the coloured table is the plain one.
    let ansi = regex::Regex::new("\u{1b}\\[[0-9;]*m").unwrap();
    assert_eq!(ansi.replace_all(&coloured, ""), plain);
}

#[test]
fn table_cells_of_several_lines_keep_the_columns_straight() {
    let m = manifest();
    let mut long = result("unit_tests", "linux", Status::Fail, Some(1), "first line");
    long.summary = "first line\nsecond, longer line".into();
    let report = Report::build(&m, &[partial(&m, "linux", vec![long])]);
    let table = render(&report, Format::Table, &options());
    let grid: Vec<&str> = table
        .lines()
        .take_while(|l| !l.starts_with("awaiting") && !l.starts_with("Environments"))
        .collect();
    let width = grid[0].chars().count();
    assert!(grid.iter().all(|l| l.chars().count() == width), "{table}");
    let first = grid.iter().position(|l| l.contains("first line")).unwrap();
    assert!(grid[first + 1].contains("second, longer line"), "{table}");
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
fn ready_for_review_signals() {
    let logs = tempfile::tempdir().unwrap();
    insta::assert_snapshot!(
        "signal_verified",
        render(&verified(), Format::Signal, &signal_options())
    );
    insta::assert_snapshot!(
        "signal_not_verified",
        render(
            &not_verified(logs.path()),
            Format::Signal,
            &signal_options()
        )
    );
    let bare = RenderOptions {
        signal: SignalInfo {
            task_id: Some("TASK-18".into()),
            ..SignalInfo::default()
        },
        ..options()
    };
    insta::assert_snapshot!(
        "signal_without_lists",
        render(&verified(), Format::Signal, &bare)
    );
}

#[test]
fn signals_need_a_task_id() {
    for format in [Format::Signal, Format::Audit] {
        let err = cargo_verify_matrix::render::render(&verified(), format, &options()).unwrap_err();
        assert!(matches!(err, RenderError::NoTaskId(_)), "{err}");
        assert_eq!(err.exit_code(), 2);
    }
}

#[test]
fn audit_passed_only_for_a_verified_report() {
    insta::assert_snapshot!(
        "audit_verified",
        render(&verified(), Format::Audit, &signal_options())
    );
    let logs = tempfile::tempdir().unwrap();
    let err = cargo_verify_matrix::render::render(
        &not_verified(logs.path()),
        Format::Audit,
        &signal_options(),
    )
    .unwrap_err();
    assert_eq!(err.exit_code(), 1);
    assert_eq!(
        err.to_string(),
        "AUDIT_PASSED refused: the report is NOT_VERIFIED, not VERIFIED: unit_tests failed in linux (exit 101); macos: no results"
    );
}

/// A refusal is one line: the first ten reasons, then how many more.
#[test]
fn an_audit_refusal_names_ten_reasons_and_counts_the_rest() {
    let logs = tempfile::tempdir().unwrap();
    // 13 environments; `env-000` has no results and 12 fail c0000: 13 reasons.
    let (report, options) = wide(13, 2, 12, logs.path());
    assert_eq!(report.reasons.len(), 13, "{:?}", report.reasons);
    let options = RenderOptions {
        signal: signal_options().signal,
        ..options
    };
    let err = cargo_verify_matrix::render::render(&report, Format::Audit, &options).unwrap_err();
    let text = err.to_string();
    let listed: Vec<&str> = report.reasons.iter().take(10).map(String::as_str).collect();
    assert_eq!(
        text,
        format!(
            "AUDIT_PASSED refused: the report is NOT_VERIFIED, not VERIFIED: {}; … and 3 more",
            listed.join("; ")
        )
    );
}

#[test]
fn infra_blocked_blocks() {
    let logs = tempfile::tempdir().unwrap();
    insta::assert_snapshot!(
        "infra_blocked",
        render(&not_verified(logs.path()), Format::InfraBlocked, &options())
    );
    insta::assert_snapshot!(
        "infra_blocked_task",
        render(
            &not_verified(logs.path()),
            Format::InfraBlocked,
            &signal_options()
        )
    );
    let err = cargo_verify_matrix::render::render(&verified(), Format::InfraBlocked, &options())
        .unwrap_err();
    assert_eq!(err, RenderError::NothingBlocked);
    assert_eq!(err.exit_code(), 1);
}

#[test]
fn json_report() {
    insta::assert_snapshot!(
        "json_verified",
        render(&verified(), Format::Json, &options())
    );
}

#[test]
fn junit_xml() {
    let logs = tempfile::tempdir().unwrap();
    let options = RenderOptions {
        log_root: Some(logs.path().to_path_buf()),
        ..options()
    };
    insta::assert_snapshot!(
        "junit_verified",
        render(&verified(), Format::Junit, &options)
    );
    insta::assert_snapshot!(
        "junit_not_verified",
        render(&not_verified(logs.path()), Format::Junit, &options)
    );
}

#[test]
fn html_page() {
    let logs = tempfile::tempdir().unwrap();
    let options = RenderOptions {
        log_root: Some(logs.path().to_path_buf()),
        ..options()
    };
    let page = render(&not_verified(logs.path()), Format::Html, &options);
    // Self-contained: no scripts, no external assets.
    for banned in ["<script", "src=", "href=", "@import", "url("] {
        assert!(!page.contains(banned), "found {banned}");
    }
    // The log's `<b>` and `@someone` are text, never markup.
    // Its `|` is quoted as `¦`, so it cannot form a table row.
    assert!(page.contains("not a fence ¦ @someone &lt;b&gt;"));
    insta::assert_snapshot!("html_not_verified", page);
}

#[test]
fn signals_read_back_with_the_documented_regexes() {
    use cargo_verify_matrix::render::validate_signal::{ROW_PATTERN, parse};
    let row = regex::Regex::new(ROW_PATTERN).unwrap();
    let logs = tempfile::tempdir().unwrap();
    for report in [verified(), not_verified(logs.path())] {
        let real: Vec<(String, String, u64, String)> = report
            .rows
            .iter()
            .map(|r| {
                (
                    r.check.to_string(),
                    r.environment.to_string(),
                    u64::try_from(r.exit_code).unwrap(),
                    r.result.as_str().to_owned(),
                )
            })
            .collect();
        let mut formats = vec![Format::Markdown, Format::Signal];
        if report.verdict == Verdict::Verified {
            formats.push(Format::Audit);
        }
        for format in formats {
            let text = render(&report, format, &signal_options());
            let by_regex: Vec<(String, String, u64, String)> = text
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
            assert_eq!(by_regex, real, "{format:?}");
            let parsed = parse(&text);
            let by_parser: Vec<(String, String, u64, String)> = parsed
                .rows
                .into_iter()
                .map(|c| (c.check, c.environment, c.exit_code, c.result))
                .collect();
            assert_eq!(by_parser, real, "{format:?}");
            assert_eq!(
                parsed.environments_tested,
                Some(report.environments_tested.clone()),
                "{format:?}"
            );
            let verdict = match (format, report.verdict) {
                (Format::Audit, _) => "CONFIRMED",
                (_, Verdict::Verified) => "VERIFIED",
                _ => "NOT VERIFIED",
            };
            assert_eq!(
                parsed.all_required_environments.as_deref(),
                Some(verdict),
                "{format:?}"
            );
        }
    }
}

/// A report of `envs` × `checks` pairs, all of `unit_tests` in `failing` environments
/// failed with a log, the rest passed, and one environment with no result.
fn wide(envs: usize, checks: usize, failing: usize, logs: &Path) -> (Report, RenderOptions) {
    let names: Vec<String> = (0..envs).map(|e| format!("env-{e:03}")).collect();
    let text = format!(
        "version: 1\nenvironments: [{}]\nchecks:\n{}",
        names
            .iter()
            .map(|n| format!("{{name: {n}}}"))
            .collect::<Vec<_>>()
            .join(", "),
        (0..checks)
            .map(|c| format!("  - {{id: c{c:04}, run: 'true'}}\n"))
            .collect::<String>()
    );
    let m = from_yaml_text(Path::new("verify-matrix.yml"), &text).unwrap();
    let partials: Vec<PartialResult> = names
        .iter()
        .skip(1)
        .enumerate()
        .map(|(e, env)| {
            let results = (0..checks)
                .map(|c| {
                    let id = format!("c{c:04}");
                    if c == 0 && e < failing {
                        let dir = logs.join("logs").join(env);
                        std::fs::create_dir_all(&dir).unwrap();
                        std::fs::write(dir.join(format!("{id}.log")), "x".repeat(500)).unwrap();
                        sample_result(&id, env, Status::Fail, Some(1), "exit 1 (required 0)")
                    } else {
                        sample_result(&id, env, Status::Pass, Some(0), "passed (exit 0)")
                    }
                })
                .collect();
            partial(&m, env, results)
        })
        .collect();
    let report = Report::build(&m, &partials);
    let options = RenderOptions {
        log_root: Some(logs.to_path_buf()),
        ..RenderOptions::for_report(&report)
    };
    (report, options)
}

#[test]
fn a_small_report_gets_the_whole_grid() {
    let logs = tempfile::tempdir().unwrap();
    // 40 × 50 = 2,000 pairs: the largest page with the grid.
    let (report, options) = wide(40, 50, 3, logs.path());
    let html = render(&report, Format::Html, &options);
    assert!(html.contains("<h2>Matrix</h2>"));
    assert!(html.contains("<summary>Every executed pair</summary>"));
    assert!(!html.contains("class=\"folded\""));
}

#[test]
fn a_huge_report_gets_the_folded_page_failures_first() {
    let logs = tempfile::tempdir().unwrap();
    // 41 × 50 = 2,050 pairs: folded.
    let (report, options) = wide(41, 50, 3, logs.path());
    assert_eq!(report.rows.len() + report.missing.len(), 2_050);
    let html = render(&report, Format::Html, &options);
    assert!(!html.contains("<h2>Matrix</h2>"), "no grid of every pair");
    assert!(!html.contains("<h2>Executed pairs</h2>"));
    assert!(html.contains("This matrix has 2050 pairs"));
    let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("no {needle}"));
    // Failures first, each with its log; then the pairs without a result; then checks.
    assert!(at("<h2>Failures (3)</h2>") < at("<h2>Without a result (50)</h2>"));
    assert!(at("<h2>Without a result (50)</h2>") < at("<h2>Checks (50)</h2>"));
    assert_eq!(html.matches("<pre><code>xxxx").count(), 3);
    assert!(html.contains("⚠️ MISSING c0000 in env-000: "));
    // The failing check is open, its failures and its missing pair named, its 37
    // passing environments folded; a clean check is one closed block.
    assert!(html.contains(
        "<details class=\"check-fail\" open=\"\">\n<summary>c0000: ❌ FAIL in 3, ⚠️ MISSING in 1, ✅ PASS in 37 of 41 environments</summary>\n\
         <p><strong>❌ FAIL</strong>: env-001, env-002, env-003</p>\n\
         <p><strong>⚠️ MISSING</strong>: env-000</p>\n\
         <details><summary>✅ PASS in 37 environments</summary><p>env-004, env-005,"
    ), "{}", &html[at("<h2>Checks")..][..600]);
    assert!(html.contains(
        "<details class=\"check-fail\" open=\"\">\n<summary>c0001: ⚠️ MISSING in 1, ✅ PASS in 40 of 41 environments</summary>"
    ));
}

#[test]
fn the_folded_page_stays_under_its_limit_and_says_what_it_left_out() {
    let logs = tempfile::tempdir().unwrap();
    // Every environment fails `c0000`: 300 failures with a 500-byte log each.
    let (report, options) = wide(301, 20, 300, logs.path());
    let quoted = cargo_verify_matrix::render::Quoted::new(&report, &options.quoter);
    let whole = cargo_verify_matrix::render::html::folded(&quoted, &options, usize::MAX);
    assert_eq!(whole.matches("<pre><code>").count(), 300);
    assert_eq!(whole.matches("<li>❌ c0000 in ").count(), 0);
    let limit = 64 * 1024;
    assert!(whole.len() > 2 * limit);
    let page = cargo_verify_matrix::render::html::folded(&quoted, &options, limit);
    assert!(page.len() < limit, "{} bytes", page.len());
    assert!(page.ends_with("</body>\n</html>\n"));
    let logs_shown = page.matches("<pre><code>").count();
    assert!(logs_shown > 0 && logs_shown < 300, "{logs_shown}");
    // Every failure is counted: with its log, on one line, or in "N more".
    let lines = page.matches("<li>❌ c0000 in ").count();
    assert!(logs_shown + lines < 300);
    assert!(page.contains(&format!("<li>… and {} more,", 300 - logs_shown - lines)));
}

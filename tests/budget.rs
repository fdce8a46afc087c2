//! The markdown size budget: whatever the limit, the document fits, keeps its verdict
//! lines, and degrades in the documented order (tails shortened, tails dropped, details
//! dropped, passing rows folded, a link only).

mod common;

use std::fmt::Write as _;
use std::path::Path;

use cargo_verify_matrix::manifest::{Manifest, from_yaml_text};
use cargo_verify_matrix::render::{Budget, Format, RenderError, RenderOptions, render};
use cargo_verify_matrix::results::{Report, RowResult, Source, Status};
use common::{sample_partial, sample_result};

const ENVS: usize = 6;
const CHECKS: usize = 12;

fn manifest() -> Manifest {
    let mut yaml = String::from("version: 1\nenvironments:\n");
    for e in 0..ENVS {
        let _ = writeln!(yaml, "  - name: env{e}");
    }
    yaml.push_str("checks:\n");
    // Only check0 and check1 are meant to run in env5 (which sends nothing).
    for c in 0..CHECKS {
        let _ = writeln!(yaml, "  - id: check{c}\n    run: make check{c}");
        if c > 1 {
            yaml.push_str("    environment: [env0, env1, env2, env3, env4]\n");
        }
    }
    from_yaml_text(Path::new("verify-matrix.yml"), &yaml).unwrap()
}

/// env5 sent nothing; check3 fails in env0 and env1, check7 in env2; the failures have
/// 60-line logs.
fn report(logs: &Path) -> Report {
    let m = manifest();
    let mut partials = Vec::new();
    for e in 0..ENVS - 1 {
        let env = format!("env{e}");
        let mut checks = Vec::new();
        for c in 0..CHECKS {
            let id = format!("check{c}");
            let fails = (c == 3 && e < 2) || (c == 7 && e == 2);
            checks.push(if fails {
                let dir = logs.join("logs").join(&env);
                std::fs::create_dir_all(&dir).unwrap();
                let log: String = (0..60).map(|i| format!("{id} {env} line {i}\n")).collect();
                std::fs::write(dir.join(format!("{id}.log")), log).unwrap();
                sample_result(
                    &id,
                    &env,
                    Status::Fail,
                    Some(2),
                    "exit 2 (required 0) in 1.2s",
                )
            } else {
                sample_result(&id, &env, Status::Pass, Some(0), "passed (exit 0) in 1.2s")
            });
        }
        partials.push(sample_partial(&m, &env, Source::default(), checks));
    }
    Report::build(&m, &partials)
}

fn options(logs: &Path, budget: Budget) -> RenderOptions {
    let report = report(logs);
    RenderOptions {
        log_root: Some(logs.to_path_buf()),
        budget,
        link: Some("https://ci.example/runs/1".into()),
        ..RenderOptions::for_report(&report)
    }
}

fn chars(n: usize) -> Budget {
    Budget {
        max_chars: Some(n),
        max_bytes: None,
    }
}

/// How far a document was cut: 0 whole, then one step per documented stage.
fn stage(text: &str) -> usize {
    let stages = [
        "log tails are shortened",
        "log tails are left out",
        "failure details are left out",
        "passing checks are folded in the grid",
        "passing rows are folded into counts",
        "only the verdict is shown",
    ];
    stages
        .iter()
        .position(|s| text.contains(s))
        .map_or(0, |i| i + 1)
}

/// The whole document.
fn unlimited(report: &Report, logs: &Path) -> String {
    render(report, Format::Markdown, &options(logs, Budget::UNLIMITED)).unwrap()
}

#[test]
fn an_unlimited_or_roomy_budget_changes_nothing() {
    let logs = tempfile::tempdir().unwrap();
    let report = report(logs.path());
    let whole = unlimited(&report, logs.path());
    assert_eq!(stage(&whole), 0);
    assert!(whole.contains("check3 env0 line 59"));
    let exact = chars(whole.chars().count());
    assert_eq!(
        render(&report, Format::Markdown, &options(logs.path(), exact)).unwrap(),
        whole
    );
}

#[test]
fn every_budget_fits_keeps_the_verdict_lines_and_degrades_in_order() {
    let logs = tempfile::tempdir().unwrap();
    let report = report(logs.path());
    let whole = unlimited(&report, logs.path());
    let real_rows: Vec<String> = report
        .rows
        .iter()
        .map(|r| {
            format!(
                "| {} | {} | {} | {} |",
                r.check,
                r.environment,
                r.exit_code,
                r.result.as_str()
            )
        })
        .collect();
    let failing: Vec<&String> = real_rows
        .iter()
        .zip(&report.rows)
        .filter(|(_, r)| r.result == RowResult::Fail)
        .map(|(line, _)| line)
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    let mut last_stage = 0;
    // From the whole document down until not even the verdict fits.
    let mut limit = whole.chars().count();
    loop {
        let text = match render(
            &report,
            Format::Markdown,
            &options(logs.path(), chars(limit)),
        ) {
            Ok(text) => text,
            Err(RenderError::OverBudget(_)) => break,
            Err(e) => panic!("{e}"),
        };
        assert!(text.chars().count() <= limit, "{limit}: too long");
        assert!(text.starts_with("<!-- cargo-verify-matrix:verify-matrix.yml -->\n"));
        assert!(text.contains("\nEnvironments Tested: env0, env1, env2, env3, env4\n"));
        assert!(text.contains("\nAll Required Environments: NOT VERIFIED\n"));
        let stage = stage(&text);
        assert!(
            stage >= last_stage,
            "{limit}: stage {stage} after {last_stage}"
        );
        last_stage = stage;
        seen.insert(stage);
        // Rows shown are real rows; passing rows go before any failing one does.
        let shown: Vec<&str> = text
            .lines()
            .filter(|l| l.ends_with("| PASS |") || l.ends_with("| FAIL |"))
            .collect();
        for line in &shown {
            assert!(real_rows.iter().any(|r| r == line), "{limit}: {line}");
        }
        if stage < 6 {
            for line in &failing {
                assert!(shown.contains(&line.as_str()), "{limit}: {line} dropped");
            }
        }
        if stage < 5 {
            assert_eq!(shown.len(), real_rows.len(), "{limit}");
        }
        if stage >= 1 {
            assert!(text.contains("Full report: https://ci.example/runs/1"));
        }
        limit -= (limit / 200).max(1);
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4, 5, 6]
    );
    assert!(
        limit > 100,
        "the verdict alone fitted in {limit} characters"
    );
}

#[test]
fn bytes_and_characters_are_different_limits() {
    let logs = tempfile::tempdir().unwrap();
    let report = report(logs.path());
    let whole = unlimited(&report, logs.path());
    // The grid's ✅ are three bytes each: a character limit of the byte length fits
    // everything, a byte limit of the character count does not.
    let n = whole.chars().count();
    assert!(whole.len() > n);
    let by_chars = render(
        &report,
        Format::Markdown,
        &options(logs.path(), chars(whole.len())),
    )
    .unwrap();
    assert_eq!(by_chars, whole);
    let bytes = Budget {
        max_bytes: Some(n),
        max_chars: None,
    };
    let by_bytes = render(&report, Format::Markdown, &options(logs.path(), bytes)).unwrap();
    assert!(by_bytes.len() <= n);
    assert!(stage(&by_bytes) > 0);
}

#[test]
fn a_budget_too_small_for_the_verdict_is_an_error() {
    let logs = tempfile::tempdir().unwrap();
    let report = report(logs.path());
    let err = render(&report, Format::Markdown, &options(logs.path(), chars(50))).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    let message = err.to_string();
    assert!(
        message.starts_with(
            "the markdown matrix cannot fit in 50 characters: even the verdict lines alone take "
        ),
        "{message}"
    );
}

//! `history tests`: each test's health from the history, as a table, JSON or CSV.

use tabled::builder::Builder;
use tabled::settings::Style;

use super::{csv_text, existing};
use crate::cli::args::{HistoryTestsArgs, ShowFormat, TestsSort};
use crate::cli::settings::quoter;
use crate::cli::{Error, print_stdout};
use crate::exit_code;
use crate::history::{self, HealthQuery, HealthSort, Seen, TestHealth};
use crate::render::text::short_commit;
use crate::untrusted::Quoter;

pub(super) fn run(path: &std::path::Path, args: &HistoryTestsArgs) -> Result<i32, Error> {
    let history = existing(path)?;
    let sort = match args.sort {
        TestsSort::Flaky => HealthSort::Flaky,
        TestsSort::Failures => HealthSort::Failures,
    };
    let mut tests = history::tests(
        &history,
        &HealthQuery {
            check: args.check.clone(),
            environment: args.env.clone(),
            base: args.base.clone(),
            last: args.last,
            pull_requests: args.include_prs,
            all: args.all,
        },
        sort,
    )?;
    if args.limit > 0 {
        tests.truncate(args.limit);
    }
    // Test names and commits come from imported reports (pull-request code wrote them):
    // cleaned and redacted for every format, neutralised too for the table.
    let quoter = quoter(None);
    for test in &mut tests {
        for text in [&mut test.check, &mut test.suite, &mut test.name] {
            *text = quoter.sanitise(text);
        }
        for text in [&mut test.id].into_iter().flatten() {
            *text = quoter.sanitise(text);
        }
        for seen in [&mut test.first_failure, &mut test.last_green]
            .into_iter()
            .flatten()
        {
            for text in [&mut seen.commit, &mut seen.branch].into_iter().flatten() {
                *text = quoter.sanitise(text);
            }
            seen.recorded_at = quoter.sanitise(&seen.recorded_at);
        }
    }
    let text = match args.format {
        ShowFormat::Json => serde_json::to_string_pretty(&tests).unwrap_or_default() + "\n",
        ShowFormat::Csv => csv(&tests)?,
        ShowFormat::Table => table(&tests, &args.base, &quoter),
    };
    print_stdout(&text)?;
    Ok(exit_code::OK)
}

/// `suite › name` (the id's own words where the runner gave one).
fn display(test: &TestHealth) -> String {
    match (&test.id, test.suite.is_empty()) {
        (_, false) => format!("{} › {}", test.suite, test.name),
        (Some(id), true) if test.name.is_empty() => id.clone(),
        _ => test.name.clone(),
    }
}

/// `4 of 20 (20%)`.
fn of(part: u32, runs: u32) -> String {
    if runs == 0 {
        return "–".to_owned();
    }
    format!(
        "{part} of {runs} ({:.0}%)",
        f64::from(part) * 100.0 / f64::from(runs)
    )
}

fn seen(seen: Option<&Seen>) -> String {
    seen.map_or_else(
        || "–".to_owned(),
        |s| {
            let commit = s.commit.as_deref().map(short_commit).unwrap_or("?");
            format!("{commit} ({})", s.recorded_at)
        },
    )
}

fn table(tests: &[TestHealth], base: &str, quoter: &Quoter) -> String {
    if tests.is_empty() {
        return "no test failed or was flaky in the runs looked at (--all lists every test)\n"
            .to_owned();
    }
    let mut builder = Builder::default();
    builder.push_record([
        "Check".to_owned(),
        "Test".to_owned(),
        "Failed".to_owned(),
        "Flaky".to_owned(),
        format!("Failed on {base}"),
        format!("Flaky on {base}"),
        "First failure".to_owned(),
        "Last green".to_owned(),
    ]);
    for t in tests {
        let failed = of(t.failed, t.runs);
        builder.push_record([
            quoter.quote(&t.check),
            quoter.quote(&display(t)),
            if t.failing_now {
                format!("{failed}, failing now")
            } else {
                failed
            },
            of(t.flaky, t.runs),
            of(t.base_failed, t.base_runs),
            of(t.base_flaky, t.base_runs),
            quoter.quote(&seen(t.first_failure.as_ref())),
            quoter.quote(&seen(t.last_green.as_ref())),
        ]);
    }
    let mut table = builder.build();
    table.with(Style::rounded());
    format!("{table}\n")
}

fn csv(tests: &[TestHealth]) -> Result<String, Error> {
    let commit = |s: Option<&Seen>| s.and_then(|s| s.commit.clone()).unwrap_or_default();
    let at = |s: Option<&Seen>| s.map(|s| s.recorded_at.clone()).unwrap_or_default();
    let rows = tests.iter().map(|t| {
        vec![
            t.check.clone(),
            t.suite.clone(),
            t.name.clone(),
            t.id.clone().unwrap_or_default(),
            t.runs.to_string(),
            t.failed.to_string(),
            t.flaky.to_string(),
            format!("{:.4}", t.failure_rate),
            format!("{:.4}", t.flaky_rate),
            t.base_runs.to_string(),
            t.base_failed.to_string(),
            t.base_flaky.to_string(),
            commit(t.first_failure.as_ref()),
            at(t.first_failure.as_ref()),
            commit(t.last_green.as_ref()),
            at(t.last_green.as_ref()),
            t.failing_now.to_string(),
        ]
    });
    csv_text(
        &[
            "check",
            "suite",
            "name",
            "id",
            "runs",
            "failed",
            "flaky",
            "failure_rate",
            "flaky_rate",
            "base_runs",
            "base_failed",
            "base_flaky",
            "first_failure_commit",
            "first_failure_at",
            "last_green_commit",
            "last_green_at",
            "failing_now",
        ],
        rows,
    )
}

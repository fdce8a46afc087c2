//! `history tests`: each test's health from the history, as a table, JSON or CSV.

use std::fmt::Write as _;

use serde::Serialize;
use tabled::builder::Builder;
use tabled::settings::Style;

use super::{csv_text, existing};
use crate::cli::args::{HistoryTestsArgs, ShowFormat, TestsSort};
use crate::cli::settings::{Settings, quoter};
use crate::cli::{Error, print_stdout};
use crate::exit_code;
use crate::history::{self, HealthQuery, HealthSort, Seen, TestHealth};
use crate::render::text::short_commit;
use crate::untrusted::Quoter;

pub(super) fn run(
    settings: &Settings,
    path: &std::path::Path,
    args: &HistoryTestsArgs,
) -> Result<i32, Error> {
    // The manifest's quarantine is read before the history: a manifest that cannot be
    // read is the error to fix first.
    let manifest = if args.quarantined {
        Some(settings.load_manifest()?)
    } else {
        None
    };
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
            // Quarantined tests are looked up among every test seen.
            all: args.all || args.quarantined,
        },
        sort,
    )?;
    if args.limit > 0 && !args.quarantined {
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
    if let Some(manifest) = &manifest {
        let rows = quarantined(manifest, &tests, args);
        let text = match args.format {
            ShowFormat::Json => serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n",
            ShowFormat::Csv => quarantined_csv(&rows)?,
            ShowFormat::Table => quarantined_table(&rows, &quoter),
        };
        print_stdout(&text)?;
        return Ok(exit_code::OK);
    }
    if args.suggest_quarantine {
        print_stdout(&suggestions(&tests, &args.base, args.last))?;
        return Ok(exit_code::OK);
    }
    let text = match args.format {
        ShowFormat::Json => serde_json::to_string_pretty(&tests).unwrap_or_default() + "\n",
        ShowFormat::Csv => csv(&tests)?,
        ShowFormat::Table => table(&tests, &args.base, &quoter),
    };
    print_stdout(&text)?;
    Ok(exit_code::OK)
}

/// How long a suggested quarantine holds: it ends on its own, to be looked at again.
const SUGGESTED_DAYS: u64 = 30;

/// One suggested `quarantine:` entry, as the manifest spells it.
#[derive(Serialize)]
struct Suggested {
    test: String,
    reason: String,
    until: String,
    owner: String,
}

/// `quarantine:` entries for the tests that were flaky on the base branch: failed (or
/// passed only on a retry) in at least two of its runs, passed in at least one, and did
/// not fail in the latest run of it (a test that fails now is broken, to be fixed, not
/// held back). Printed, never written: a person decides.
fn suggestions(tests: &[TestHealth], base: &str, last: u32) -> String {
    let until = (crate::manifest::today() + chrono::Days::new(SUGGESTED_DAYS)).to_string();
    let mut by_check: Vec<(&str, Vec<Suggested>)> = Vec::new();
    for t in tests {
        let troubled = t.base_failed + t.base_flaky;
        if troubled < 2 || t.base_failed >= t.base_runs || t.failing_now {
            continue;
        }
        let entry = Suggested {
            // Its `*`, `?` and `\` escaped: the entry names this test, nothing more.
            test: crate::manifest::Quarantine::escape(&crate::results::test_label(
                &t.suite, &t.name,
            )),
            reason: format!(
                "flaky on {base}: failed in {} and passed only on a retry in {} of its last {} runs",
                t.base_failed, t.base_flaky, t.base_runs
            ),
            until: until.clone(),
            owner: String::new(),
        };
        match by_check.iter_mut().find(|(c, _)| *c == t.check) {
            Some((_, entries)) => entries.push(entry),
            None => by_check.push((&t.check, vec![entry])),
        }
    }
    if by_check.is_empty() {
        return format!(
            "# no test was flaky on {base} in its last {last} runs: nothing to quarantine\n"
        );
    }
    let mut out = format!(
        "# Suggested quarantine entries (flaky on {base}); nothing was changed. Paste each\n\
         # list under its check's `quarantine:`, name an owner, and say why in `reason`.\n"
    );
    for (check, entries) in by_check {
        let _ = write!(
            out,
            "\n# check `{check}`\n{}",
            serde_yaml::to_string(&entries).unwrap_or_default()
        );
    }
    out
}

/// One quarantined test as the history saw it.
#[derive(Debug, Serialize)]
struct QuarantinedTest {
    check: String,
    /// The entry as the manifest writes it.
    entry: String,
    until: String,
    expired: bool,
    /// The test the entry matched (none: it matched no test in the window).
    test: Option<String>,
    runs: u32,
    failed: u32,
    flaky: u32,
    passed_in_a_row: u32,
    /// Passed at least `--ready-after` runs in a row: the entry can go.
    ready_to_leave: bool,
}

/// Every quarantine entry of the manifest, with each test it matches in the window.
fn quarantined(
    manifest: &crate::manifest::Manifest,
    tests: &[TestHealth],
    args: &HistoryTestsArgs,
) -> Vec<QuarantinedTest> {
    let today = crate::manifest::today();
    let mut rows = Vec::new();
    let mut checks: Vec<&crate::manifest::Check> = manifest.checks.iter().collect();
    while let Some(check) = checks.pop() {
        if let crate::manifest::CheckKind::AllOf(items) | crate::manifest::CheckKind::AnyOf(items) =
            &check.kind
        {
            checks.extend(items.iter());
        }
        if args
            .check
            .as_deref()
            .is_some_and(|c| c != check.id.as_str())
        {
            continue;
        }
        for entry in &check.quarantine {
            let row = |t: Option<&TestHealth>| QuarantinedTest {
                check: check.id.as_str().to_owned(),
                entry: entry.test.clone(),
                until: entry.until.to_string(),
                expired: entry.expired(today),
                test: t.map(|t| crate::results::test_label(&t.suite, &t.name)),
                runs: t.map_or(0, |t| t.runs),
                failed: t.map_or(0, |t| t.failed),
                flaky: t.map_or(0, |t| t.flaky),
                passed_in_a_row: t.map_or(0, |t| t.passed_in_a_row),
                ready_to_leave: t.is_some_and(|t| t.passed_in_a_row >= args.ready_after),
            };
            let before = rows.len();
            rows.extend(
                tests
                    .iter()
                    .filter(|t| {
                        t.check == check.id.as_str()
                            && entry.matches(&crate::results::test_label(&t.suite, &t.name))
                    })
                    .map(|t| row(Some(t))),
            );
            if rows.len() == before {
                rows.push(row(None));
            }
        }
    }
    rows.sort_by(|a, b| (&a.check, &a.entry, &a.test).cmp(&(&b.check, &b.entry, &b.test)));
    rows
}

fn quarantined_table(rows: &[QuarantinedTest], quoter: &Quoter) -> String {
    if rows.is_empty() {
        return "no check of the manifest has a `quarantine:`\n".to_owned();
    }
    let mut builder = Builder::default();
    builder.push_record([
        "Check",
        "Entry",
        "Test",
        "Until",
        "Failed",
        "Passed in a row",
        "State",
    ]);
    for r in rows {
        let state = if r.expired {
            "ended: it fails its pair".to_owned()
        } else if r.test.is_none() {
            "no test matched in the window".to_owned()
        } else if r.ready_to_leave {
            "ready to leave quarantine".to_owned()
        } else {
            "held".to_owned()
        };
        builder.push_record([
            quoter.quote(&r.check),
            quoter.quote(&r.entry),
            r.test
                .as_deref()
                .map_or_else(|| "–".to_owned(), |t| quoter.quote(t)),
            r.until.clone(),
            of(r.failed, r.runs),
            r.passed_in_a_row.to_string(),
            state,
        ]);
    }
    let mut table = builder.build();
    table.with(Style::rounded());
    format!("{table}\n")
}

fn quarantined_csv(rows: &[QuarantinedTest]) -> Result<String, Error> {
    csv_text(
        &[
            "check",
            "entry",
            "test",
            "until",
            "expired",
            "runs",
            "failed",
            "flaky",
            "passed_in_a_row",
            "ready_to_leave",
        ],
        rows.iter().map(|r| {
            vec![
                r.check.clone(),
                r.entry.clone(),
                r.test.clone().unwrap_or_default(),
                r.until.clone(),
                r.expired.to_string(),
                r.runs.to_string(),
                r.failed.to_string(),
                r.flaky.to_string(),
                r.passed_in_a_row.to_string(),
                r.ready_to_leave.to_string(),
            ]
        }),
    )
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
            t.passed_in_a_row.to_string(),
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
            "passed_in_a_row",
        ],
        rows,
    )
}

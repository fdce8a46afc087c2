//! `tests`: what runner reports say, read exactly as a check's `reports:` are (the same
//! formats, bounds and refusals) — to try a report before wiring it into the manifest.

use std::fmt::Write as _;
use std::time::SystemTime;

use crate::cli::args::{TestsArgs, TestsFormat};
use crate::cli::settings::quoter;
use crate::cli::{Error, print_stdout};
use crate::exit_code;
use crate::manifest::ReportPattern;
use crate::render::tests_view;
use crate::run::reports::{self, Context, Problem};
use crate::untrusted::Quoter;

/// Reads the reports: exit 0 when no test failed, 1 when some did, 4 when a report is
/// missing or cannot be read.
pub(super) fn run(args: &TestsArgs) -> Result<i32, Error> {
    for pattern in &args.reports {
        reports::check_pattern(pattern)
            .map_err(|reason| Error::Usage(format!("report pattern `{pattern}`: {reason}")))?;
    }
    // One quoter for everything printed: the reports are foreign text.
    let quoter = quoter(None);
    let context = Context {
        cwd: args.cwd.clone(),
        root: args.cwd.clone(),
        // No check started: any report, however old, is read.
        started: reports::Started::at(SystemTime::UNIX_EPOCH),
        redactor: quoter.shared_redactor(),
    };
    let patterns: Vec<ReportPattern> = args
        .reports
        .iter()
        .map(|path| ReportPattern {
            path: path.clone(),
            format: args.report_format,
        })
        .collect();
    let reading = reports::read(&patterns, &context).map_err(|problem| match problem {
        Problem::Missing(reason) | Problem::Unreadable(reason) => Error::InvalidInput(reason),
    })?;
    let code = if reading.counts.failed > 0 {
        exit_code::FAILED
    } else {
        exit_code::OK
    };
    match args.format {
        TestsFormat::Json => {
            let mut report = reading.report.clone();
            sanitise(&mut report, &quoter);
            let mut out = serde_json::to_string(&serde_json::json!({
                "test_counts": reading.counts,
                "tests": report,
            }))
            .unwrap_or_default();
            out.push('\n');
            print_stdout(&out)?;
        }
        TestsFormat::Table => print_stdout(&table(&reading, &quoter))?,
    }
    Ok(code)
}

/// Every string of `report` cleaned of escapes and control characters, its secrets
/// masked (JSON is data: nothing is neutralised).
fn sanitise(report: &mut crate::results::TestReport, quoter: &Quoter) {
    for file in &mut report.files {
        *file = quoter.sanitise(file).into();
    }
    for case in &mut report.cases {
        case.suite = quoter.sanitise(&case.suite).into();
        case.name = quoter.sanitise(&case.name).into();
        for text in [&mut case.message, &mut case.file].into_iter().flatten() {
            *text = quoter.sanitise(text).into();
        }
        if let Some(output) = &mut case.output {
            *output = quoter.sanitise(output);
        }
    }
}

/// The counts, then each failing and flaky test with its place and message.
fn table(reading: &reports::Reading, quoter: &Quoter) -> String {
    let report = &reading.report;
    let mut out = String::new();
    let files = match report.files.as_slice() {
        [one] => quoter.quote(one),
        [first, .., last] if report.files.len() > 3 => format!(
            "{} files: {} … {}",
            report.files.len(),
            quoter.quote(first),
            quoter.quote(last)
        ),
        some => some
            .iter()
            .map(|f| quoter.quote(f))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let _ = writeln!(
        out,
        "{} ({files}): {}",
        report.format,
        tests_view::describe(&reading.counts)
    );
    for case in report.cases.iter().filter(|c| c.outcome.is_failure()) {
        let mut line = format!("  ✗ {}", quoter.quote(&tests_view::test_name(case)));
        if let Some((place, _)) = tests_view::place(case, None) {
            let _ = write!(line, " at {}", quoter.quote(&place));
        }
        let message = tests_view::message_line(case);
        if !message.is_empty() {
            let _ = write!(line, ": {}", quoter.quote(&message));
        }
        let _ = writeln!(out, "{line}");
    }
    for case in report
        .cases
        .iter()
        .filter(|c| c.outcome == crate::results::TestOutcome::Flaky)
    {
        let _ = writeln!(
            out,
            "  ~ {} (flaky: failed, then passed)",
            quoter.quote(&tests_view::test_name(case))
        );
    }
    if report.left_out > 0 {
        let _ = writeln!(
            out,
            "  ({} more tests counted, not listed)",
            report.left_out
        );
    }
    out
}

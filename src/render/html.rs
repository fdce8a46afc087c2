//! One self-contained HTML page (no scripts, no external assets): the verdict, the grid
//! with green, red and amber cells, every executed pair, and each failure's output in
//! an expandable block. Every string from a result is escaped.

use std::fmt::Write as _;

use rustc_hash::FxHashMap;

use super::cell::{self, Cell};
use super::tests_view;
use super::text::escape_html as esc;
use super::view::Tails;
use super::{Quoted, RenderOptions};
use crate::results::{Report, Row, RowResult, TestOutcome, TestResult, Verdict};

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem;color:#1f2328;max-width:80rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0}
th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}
th{background:#f6f8fa}
td.pass{background:#dafbe1;color:#116329}
td.fail{background:#ffebe9;color:#a40e26;font-weight:600}
td.missing{background:#fff8c5;color:#7d4e00}
td.na{color:#8c959f}
td.advisory{background:#ddf4ff;color:#0550ae}
th .name{font-weight:400;color:#59636e}
.summary{font-size:1.05rem}
.verdict{padding:.6rem 1rem;border-radius:6px;font-weight:600;display:inline-block}
.verified{background:#dafbe1;color:#116329}
.not-verified{background:#ffebe9;color:#a40e26}
.skipped{background:#fff8c5;color:#7d4e00}
details{margin:.4rem 0;border:1px solid #d0d7de;border-radius:6px;padding:.4rem .8rem}
summary{cursor:pointer;font-weight:600}
details.check-pass{border-left:6px solid #1a7f37}
details.check-fail{border-left:6px solid #cf222e}
.folded{background:#ddf4ff;padding:.6rem 1rem;border-radius:6px}
details.outcome{border:none;padding:.1rem .4rem}
ul.tests{margin:.3rem 0;padding-left:1.2rem}
li.test-failed,li.test-error{color:#cf222e}
li.test-flaky{color:#7d4e00}
li.test-skipped{color:#59636e}
.ms{color:#59636e;font-size:.85em}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;white-space:pre-wrap}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
";

/// Reports with more pairs than this get the folded page ([`folded`]).
pub const FOLD_ABOVE_PAIRS: usize = 2_000;

/// The folded page is kept under this many bytes.
pub const FOLDED_PAGE_LIMIT: usize = 16 * 1024 * 1024;

/// Renders the report as one HTML page: the whole grid and every executed pair, or for a
/// report of more than [`FOLD_ABOVE_PAIRS`] pairs the folded page.
pub fn render(report: &Quoted, options: &RenderOptions) -> String {
    if report.rows.len() + report.missing.len() > FOLD_ABOVE_PAIRS {
        folded(report, options, FOLDED_PAGE_LIMIT)
    } else {
        let blob = super::provenance::blob_base(report, options);
        full(
            report,
            options,
            &Tails::load(report, options, Tails::LONG),
            blob.as_deref(),
        )
    }
}

/// The page of a small report, answer first as the comment is: the verdict and what
/// failed (each failure with its first failing test), the counts, the grid, each
/// failure's block (its failing tests with their traces folded, its log), then what the
/// verdict rests on (the baseline, what was not run, where each environment ran, the
/// manifest), every pair folded, and the tests of every pair with a runner report.
fn full(report: &Quoted, options: &RenderOptions, tails: &Tails, blob: Option<&str>) -> String {
    let mut out = String::new();
    head(report, options, &mut out, usize::MAX);
    grid(report, &mut out);
    failures(report, tails, blob, &mut out);
    baseline(report, &mut out);
    blocked_and_manual(report, &mut out);
    context(report, &mut out, usize::MAX);
    pairs(report, &mut out);
    tests(report, blob, &mut out);
    out.push_str("</body>\n</html>\n");
    out
}

/// The verdict and what it rests on; at most `reasons` of the reasons.
fn head(report: &Quoted, options: &RenderOptions, out: &mut String, reasons: usize) {
    let (class, verdict) = match (report.verdict, report.partial) {
        (_, Some(_)) => ("skipped", "PARTIAL RUN, not a verdict"),
        (Verdict::Verified, None) => ("verified", "VERIFIED"),
        (Verdict::NotVerified, None) => ("not-verified", "NOT VERIFIED"),
        (Verdict::Skipped, None) => ("skipped", "SKIPPED"),
    };
    let claim = match report.partial {
        Some(partial) => partial.line(),
        None => format!("All Required Environments: {verdict}"),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Environment Verification Matrix: {verdict}</title>\n<style>\n{STYLE}</style>\n\
         </head>\n<body>\n<h1>Environment Verification Matrix</h1>\n\
         <p class=\"verdict {class}\">{claim}</p>\n"
    );
    answer(report, out, reasons);
    if let Some(line) = super::cell::summary_line(report) {
        let _ = writeln!(out, "<p class=\"summary\">{}</p>", esc(&line));
    }
    // What was verified, by which run, and when.
    if let Some(line) = super::provenance::provenance_html(report, options) {
        let _ = writeln!(out, "<p class=\"provenance\">{line}</p>");
    }
    for place in super::places::mismatched(report) {
        let _ = writeln!(
            out,
            "<p class=\"verdict not-verified\">⚠️ {}: its results were not taken: {}</p>",
            esc(&place.environment),
            esc(place.mismatch.as_deref().unwrap_or_default())
        );
    }
}

/// What failed, first: each of the verdict's reasons (at most `reasons`), a failure
/// with its first failing test, its place and message.
fn answer(report: &Quoted, out: &mut String, reasons: usize) {
    if report.reasons.is_empty() || report.verdict == Verdict::Verified {
        return;
    }
    out.push_str("<h2>What failed</h2>\n<ul class=\"answer\">\n");
    for reason in report.reasons.iter().take(reasons) {
        let _ = write!(out, "<li><strong>{}</strong>", esc(reason));
        let row = report.rows.iter().find(|r| {
            r.required
                && r.result == RowResult::Fail
                && super::answer::is_about(reason, &r.check, &r.environment)
        });
        if let Some(case) = row.and_then(|r| tests_view::failing(&r.detail).next()) {
            let _ = write!(out, ": <code>{}</code>", esc(&tests_view::test_name(case)));
            let _ = write!(out, "{}", esc(&tests_view::history_note(case)));
            if let Some((label, _)) = tests_view::place(case, None) {
                let _ = write!(out, " at {}", esc(&label));
            }
            let message = tests_view::message_line(case);
            if !message.is_empty() {
                let _ = write!(out, " — {}", esc(&message));
            }
        }
        out.push_str("</li>\n");
    }
    if report.reasons.len() > reasons {
        let _ = writeln!(out, "<li>{}</li>", more(report.reasons.len() - reasons));
    }
    out.push_str("</ul>\n");
}

/// What the verdict rests on: the manifest, where each environment ran (folded, listed
/// while the page is under `until` bytes), re-runs, where the manifest came from and
/// how it differs from the trusted one.
fn context(report: &Quoted, out: &mut String, until: usize) {
    let digest = &report.manifest.digest;
    let short = digest.get(..digest.len().min(19)).unwrap_or(digest);
    let _ = writeln!(
        out,
        "<h2>What was verified</h2>\n<p>Manifest <code>{}</code> (<span title=\"{}\">{}</span>). Tested in {}.</p>",
        esc(&report.manifest.path),
        esc(digest),
        esc(short),
        esc(&report.tested_list())
    );
    let taken: Vec<&crate::results::Place> = report
        .places
        .iter()
        .filter(|p| p.mismatch.is_none())
        .collect();
    if !taken.is_empty() {
        out.push_str("<details><summary>Where each environment ran</summary>\n<ul>\n");
        let mut shown = 0;
        for place in &taken {
            if out.len() >= until {
                break;
            }
            let _ = writeln!(out, "<li>{}</li>", esc(&super::places::line(place)));
            shown += 1;
        }
        if shown < taken.len() {
            let _ = writeln!(out, "<li>{}</li>", more(taken.len() - shown));
        }
        out.push_str("</ul>\n</details>\n");
    }
    for (env, attempt) in report.reruns() {
        let _ = writeln!(
            out,
            "<p>Re-run: the results of {} come from attempt {attempt}.</p>",
            esc(env)
        );
    }
    if let Some(origin) = report.manifest.origin {
        let _ = writeln!(
            out,
            "<p>The manifest was {}{}.</p>",
            esc(origin.describe()),
            if report.manifest.results_digest.is_some() {
                "; the results were produced from another one"
            } else {
                ""
            }
        );
    }
    if !report.manifest_changes.is_empty() {
        out.push_str("<p>Changes against the trusted manifest:</p>\n<ul>\n");
        for change in &report.manifest_changes {
            let _ = writeln!(
                out,
                "<li>{}{}</li>",
                if change.weakens {
                    "⚠️ weakens: "
                } else {
                    ""
                },
                esc(&change.change)
            );
        }
        out.push_str("</ul>\n");
    }
}

fn grid(report: &Report, out: &mut String) {
    let checks = report.checks_in_order();
    if checks.is_empty() {
        out.push_str("<p>No checks to run.</p>\n");
        return;
    }
    out.push_str("<h2>Matrix</h2>\n<table>\n<thead><tr><th>Check</th>");
    for env in &report.environments {
        let _ = write!(out, "<th>{}</th>", esc(env));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    let index = report.index();
    for check in checks {
        let optional = cell::is_optional(report, &index, check);
        let _ = write!(
            out,
            "<tr><th>{}{}{}</th>",
            esc(check),
            report
                .check_names
                .get(check)
                .map_or_else(String::new, |name| format!(
                    " <span class=\"name\">{}</span>",
                    esc(name)
                )),
            if optional { " (optional)" } else { "" }
        );
        for env in &report.environments {
            let (class, text) = Cell::of(report, &index, check, env).html();
            let title = match (index.row(check, env), index.missing(check, env)) {
                (Some(r), _) => r.detail.why(),
                (None, Some(m)) => m.reason.as_str(),
                (None, None) => "not required in this environment",
            };
            let _ = write!(
                out,
                "<td class=\"{class}\" title=\"{}\">{text}</td>",
                esc(title)
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

fn pairs(report: &Report, out: &mut String) {
    if report.rows.is_empty() {
        return;
    }
    out.push_str(
        "<details><summary>Every executed pair</summary>\n<table>\n<thead><tr><th>Check</th><th>Environment</th>\
         <th>Exit Code</th><th>Result</th><th>Duration</th><th>Summary</th></tr></thead>\n<tbody>\n",
    );
    for row in &report.rows {
        // The grid's class: an optional failure is advisory here too.
        let (class, _) = Cell::of_row(row).html();
        let _ = writeln!(
            out,
            "<tr><td>{}{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&row.check),
            if row.required { "" } else { " (optional)" },
            esc(&row.environment),
            row.exit_code,
            row.result.as_str(),
            // The same form as the summaries beside it (`70ms`, `1.2s`, `1m 12s`).
            crate::results::format_duration(std::time::Duration::from_millis(
                row.detail.duration_ms
            )),
            esc(&row.detail.summary)
        );
    }
    out.push_str("</tbody>\n</table>\n</details>\n");
}

fn blocked_and_manual(report: &Report, out: &mut String) {
    let partial = report.missing_beside_results();
    if !partial.is_empty() {
        out.push_str("<h2>Missing</h2>\n<ul>\n");
        for m in partial {
            let _ = writeln!(
                out,
                "<li>{} in {}: {}</li>",
                esc(&m.check),
                esc(&m.environment),
                esc(&m.reason)
            );
        }
        out.push_str("</ul>\n");
    }
    for blocked in &report.infra_blocked {
        let _ = writeln!(
            out,
            "<h2>INFRA_BLOCKED: environment '{}' unavailable</h2>\n<p>Cannot complete verification - environment required for:</p>\n<ul>",
            esc(&blocked.environment)
        );
        for check in &blocked.checks {
            let _ = writeln!(out, "<li>{}</li>", esc(check));
        }
        out.push_str("</ul>\n");
    }
    manual(report, out);
}

/// The items awaiting a person's review.
fn manual(report: &Report, out: &mut String) {
    if !report.manual.is_empty() {
        out.push_str("<h2>Awaiting review (not run, not counted)</h2>\n<ul>\n");
        for item in &report.manual {
            let _ = writeln!(
                out,
                "<li><strong>{}</strong> ({}): {}</li>",
                esc(&item.id),
                esc(&item.kind),
                esc(&item.text)
            );
        }
        out.push_str("</ul>\n");
    }
}

/// What changed against the baseline, when the report was compared with one.
fn baseline(report: &Report, out: &mut String) {
    let Some(b) = &report.baseline else {
        return;
    };
    let _ = writeln!(
        out,
        "<h2>Baseline</h2>\n<p>{}</p>",
        esc(&super::baseline_view::heading(report, b))
    );
    let lines = super::baseline_view::lines(report);
    if !lines.is_empty() {
        out.push_str("<ul>\n");
        for (what, list) in lines {
            let _ = writeln!(out, "<li>{what}: {}</li>", esc(&list));
        }
        out.push_str("</ul>\n");
    }
}

fn failures(report: &Quoted, tails: &Tails, blob: Option<&str>, out: &mut String) {
    let failed: Vec<_> = report
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.result == RowResult::Fail)
        .collect();
    if failed.is_empty() {
        return;
    }
    out.push_str("<h2>Failures</h2>\n");
    for (index, row) in failed {
        failure(row, tails.of(index), blob, out);
    }
}

/// One failed pair's block: its summary, exit code, test counts, failing tests and log
/// tail.
fn failure(row: &Row, log: Option<&str>, blob: Option<&str>, out: &mut String) {
    let d = &row.detail;
    let (symbol, optional) = Cell::failure_mark(row);
    let _ = writeln!(
        out,
        "<details>\n<summary>{symbol} {}{optional} in {}: {}</summary>\n<p>Exit code {}, {}, {} {}.</p>",
        esc(&row.check),
        esc(&row.environment),
        esc(&d.summary),
        row.exit_code,
        crate::results::format_duration(std::time::Duration::from_millis(d.duration_ms)),
        d.attempts,
        if d.attempts == 1 {
            "attempt"
        } else {
            "attempts"
        }
    );
    if let Some(cause) = &d.cause {
        let _ = writeln!(out, "<p>Cause: {}</p>", esc(cause));
    }
    if let Some(command) = super::text::reproduce(row) {
        let _ = writeln!(out, "<p>Reproduce: <code>{}</code></p>", esc(&command));
    }
    if let Some(line) = tests_view::counts_line(d) {
        let _ = writeln!(out, "<p>Tests: {}.</p>", esc(&line));
    }
    let failing: Vec<_> = tests_view::failing(d).take(FAILING_SHOWN).collect();
    if !failing.is_empty() {
        out.push_str("<ul class=\"tests\">\n");
        for case in failing {
            test_item(case, blob, true, out);
        }
        let rest = tests_view::failing_count(d).saturating_sub(FAILING_SHOWN as u64);
        if rest > 0 {
            let _ = writeln!(out, "<li>… and {rest} more failing tests (see below)</li>");
        }
        out.push_str("</ul>\n");
    }
    match log {
        Some(log) => {
            let _ = writeln!(out, "<pre><code>{}</code></pre>", esc(log));
        }
        None => out.push_str("<p>No log output available.</p>\n"),
    }
    out.push_str("</details>\n");
}

/// Failing tests shown, with their output, in a failure's block.
const FAILING_SHOWN: usize = 20;
/// Tests listed per outcome of a pair.
const LISTED_PER_OUTCOME: usize = 1_000;
/// Tests listed on the whole page; past it, pairs show their counts only.
const LISTED_ON_PAGE: usize = 20_000;

/// One test as a list item: its outcome, name, place (linked under `blob`), message,
/// and with `output` what it printed.
fn test_item(case: &TestResult, blob: Option<&str>, output: bool, out: &mut String) {
    let _ = write!(
        out,
        "<li class=\"test-{}\"><code>{}</code>",
        case.outcome.as_str(),
        esc(&tests_view::test_name(case))
    );
    if case.outcome == TestOutcome::Error {
        out.push_str(" (error)");
    }
    if case.quarantined {
        out.push_str(" (🧪 quarantined)");
    }
    out.push_str(&esc(&tests_view::history_note(case)));
    match tests_view::place(case, blob) {
        Some((label, Some(url))) => {
            let _ = write!(out, " at <a href=\"{}\">{}</a>", esc(&url), esc(&label));
        }
        Some((label, None)) => {
            let _ = write!(out, " at {}", esc(&label));
        }
        None => {}
    }
    if let Some(ms) = case.duration_ms {
        let _ = write!(out, " <span class=\"ms\">{ms} ms</span>");
    }
    let message = tests_view::message_line(case);
    if !message.is_empty() {
        let _ = write!(out, ": {}", esc(&message));
    }
    // The trace folded under the test, as a reviewer opens it.
    if output && let Some(text) = tests_view::output(case) {
        let _ = write!(
            out,
            "<details class=\"outcome\"><summary>trace</summary><pre><code>{}</code></pre></details>",
            esc(&text)
        );
    }
    out.push_str("</li>\n");
}

/// Every pair with a runner report: its tests by outcome, failures first and open,
/// the rest folded (`<details>`, no script), within the page's bounds.
fn tests(report: &Quoted, blob: Option<&str>, out: &mut String) {
    let with_tests: Vec<&Row> = report
        .rows
        .iter()
        .filter(|r| r.detail.tests.is_some())
        .collect();
    if with_tests.is_empty() {
        return;
    }
    out.push_str("<h2>Tests</h2>\n");
    let mut room = LISTED_ON_PAGE;
    for row in with_tests {
        let d = &row.detail;
        let Some(report_tests) = &d.tests else {
            continue;
        };
        let counts = tests_view::counts_line(d).unwrap_or_default();
        let class = if row.result == RowResult::Pass {
            "check-pass"
        } else {
            "check-fail"
        };
        // A pair with failing tests opens on them.
        let open = if tests_view::failing_count(d) > 0 {
            " open"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "<details class=\"{class}\"{open}><summary>{} in {}: {}</summary>",
            esc(&row.check),
            esc(&row.environment),
            esc(&counts)
        );
        for (outcomes, title, open) in [
            (
                &[TestOutcome::Failed, TestOutcome::Error][..],
                "Failed",
                true,
            ),
            (&[TestOutcome::Flaky][..], "Flaky", false),
            (&[TestOutcome::Skipped][..], "Skipped", false),
            (&[TestOutcome::Passed][..], "Passed", false),
        ] {
            let cases: Vec<&TestResult> = report_tests
                .cases
                .iter()
                .filter(|c| outcomes.contains(&c.outcome))
                .collect();
            if cases.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "<details class=\"outcome\"{}><summary>{title} ({})</summary>\n<ul class=\"tests\">",
                if open { " open" } else { "" },
                cases.len()
            );
            let shown = cases.len().min(LISTED_PER_OUTCOME).min(room);
            for case in &cases[..shown] {
                test_item(case, blob, false, out);
            }
            room -= shown;
            if shown < cases.len() {
                let _ = writeln!(
                    out,
                    "<li>… and {} more: the JSON report lists every test</li>",
                    cases.len() - shown
                );
            }
            out.push_str("</ul>\n</details>\n");
        }
        if report_tests.left_out > 0 {
            let _ = writeln!(
                out,
                "<p>{} more tests were counted but not listed in the result.</p>",
                report_tests.left_out
            );
        }
        out.push_str("</details>\n");
    }
}

/// The page of a report too large to show whole (GitHub's largest matrix has 256,000
/// pairs): the failures first, each with its log while the page has room and then one
/// line each; the pairs without a result; then one folded block per check, which names
/// the environments it failed in and folds those it passed in. No grid and no table of
/// every pair. The page stops adding items before it reaches `limit` bytes and says how
/// many it left out; the JSON report has them all.
pub fn folded(report: &Quoted, options: &RenderOptions, limit: usize) -> String {
    // Where each section stops adding items: no single item is larger than the room
    // left after the last section (a log tail is at most `Tails::LONG` read, and its
    // escaping at most sextuples it).
    let eighth = limit / 8;
    let logs_until = eighth * 3;
    let lines_until = eighth * 4;
    let missing_until = eighth * 5;
    let checks_until = eighth * 7;
    let mut out = String::new();
    head(report, options, &mut out, 100);
    let _ = writeln!(
        out,
        "<p class=\"folded\">This matrix has {} pairs, too many to show whole: the failures come first, \
         then each check with the environments it passed in folded. The page is kept under {} MiB; \
         the JSON report has every pair.</p>",
        report.rows.len() + report.missing.len(),
        limit / (1024 * 1024)
    );
    let blob = super::provenance::blob_base(report, options);
    // Required failures first, then the optional ones.
    let failed: Vec<usize> = (0..report.rows.len())
        .filter(|&i| report.rows[i].result == RowResult::Fail && report.rows[i].required)
        .chain(
            (0..report.rows.len())
                .filter(|&i| report.rows[i].result == RowResult::Fail && !report.rows[i].required),
        )
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "<h2>Failures ({})</h2>", failed.len());
        let mut shown = 0;
        for &index in &failed {
            if out.len() >= logs_until {
                break;
            }
            let row = &report.rows[index];
            let tail = report.log_tail(options, &row.detail, Tails::LONG);
            failure(row, tail.as_deref(), blob.as_deref(), &mut out);
            shown += 1;
        }
        if shown < failed.len() {
            out.push_str("<ul>\n");
            for &index in &failed[shown..] {
                if out.len() >= lines_until {
                    break;
                }
                let row = &report.rows[index];
                let (symbol, optional) = Cell::failure_mark(row);
                let _ = writeln!(
                    out,
                    "<li>{symbol} {}{optional} in {}: {}</li>",
                    esc(&row.check),
                    esc(&row.environment),
                    esc(&row.detail.summary)
                );
                shown += 1;
            }
            if shown < failed.len() {
                let _ = writeln!(out, "<li>{}</li>", more(failed.len() - shown));
            }
            out.push_str("</ul>\n");
        }
    }
    for (n, blocked) in report.infra_blocked.iter().enumerate() {
        if out.len() >= missing_until {
            let _ = writeln!(out, "<p>{}</p>", more(report.infra_blocked.len() - n));
            break;
        }
        let _ = writeln!(
            out,
            "<h2>INFRA_BLOCKED: environment '{}' unavailable</h2>\n<p>Cannot complete verification: {} required checks have no result there.</p>",
            esc(&blocked.environment),
            blocked.checks.len()
        );
    }
    if !report.missing.is_empty() {
        let _ = writeln!(
            out,
            "<h2>Without a result ({})</h2>\n<ul>",
            report.missing.len()
        );
        let mut shown = 0;
        for m in &report.missing {
            if out.len() >= missing_until {
                break;
            }
            let _ = writeln!(
                out,
                "<li>{} {} in {}: {}</li>",
                Cell::of_missing(report, m).html().1,
                esc(&m.check),
                esc(&m.environment),
                esc(&m.reason)
            );
            shown += 1;
        }
        if shown < report.missing.len() {
            let _ = writeln!(out, "<li>{}</li>", more(report.missing.len() - shown));
        }
        out.push_str("</ul>\n");
    }
    manual(report, &mut out);
    checks_folded(report, checks_until, &mut out);
    context(report, &mut out, limit - limit / 16);
    out.push_str("</body>\n</html>\n");
    out
}

/// One block per check: how many environments it passed in, failed in and has no
/// result from, the environments of each state but passing named, the passing ones
/// folded.
fn checks_folded(report: &Report, until: usize, out: &mut String) {
    let checks = report.checks_in_order();
    if checks.is_empty() {
        out.push_str("<p>No checks to run.</p>\n");
        return;
    }
    let place: FxHashMap<&str, usize> = checks.iter().enumerate().map(|(i, c)| (*c, i)).collect();
    let mut cells: Vec<Vec<(&str, Cell)>> = vec![Vec::new(); checks.len()];
    for row in &report.rows {
        if let Some(&i) = place.get(row.check.as_str()) {
            cells[i].push((row.environment.as_str(), Cell::of_row(row)));
        }
    }
    for m in &report.missing {
        if let Some(&i) = place.get(m.check.as_str()) {
            cells[i].push((m.environment.as_str(), Cell::of_missing(report, m)));
        }
    }
    // Each check's environments in the report's order.
    let order: FxHashMap<&str, usize> = report
        .environments
        .iter()
        .enumerate()
        .map(|(i, e)| (e.as_str(), i))
        .collect();
    let _ = writeln!(out, "<h2>Checks ({})</h2>", checks.len());
    let mut shown = 0;
    for (check, mut cells) in checks.iter().zip(cells) {
        if out.len() >= until {
            break;
        }
        cells.sort_by_key(|(env, _)| order.get(env).copied().unwrap_or(usize::MAX));
        let mut states: Vec<(&'static str, String, Vec<&str>)> = Vec::new();
        for (env, cell) in &cells {
            let (class, text) = match cell {
                // One group for every pass, whatever its test count.
                Cell::Pass { .. } => ("pass", "✅ PASS".to_owned()),
                other => other.html(),
            };
            match states.iter_mut().find(|(_, t, _)| *t == text) {
                Some((_, _, envs)) => envs.push(env),
                None => states.push((class, text, vec![env])),
            }
        }
        // Failures and errors first, then pairs without a result, advisory failures,
        // and passes last.
        states.sort_by_key(|(class, _, _)| match *class {
            "fail" => 0,
            "missing" => 1,
            "advisory" => 2,
            "pass" => 4,
            _ => 3,
        });
        let counts: Vec<String> = states
            .iter()
            .map(|(_, text, envs)| format!("{text} in {}", envs.len()))
            .collect();
        let clean = states.iter().all(|(class, _, _)| *class == "pass");
        let _ = writeln!(
            out,
            "<details class=\"{}\">\n<summary>{}{}: {} of {} environments</summary>",
            if clean {
                "check-pass"
            } else {
                "check-fail\" open=\""
            },
            esc(check),
            report
                .check_names
                .get(*check)
                .map_or_else(String::new, |name| format!(
                    " <span class=\"name\">{}</span>",
                    esc(name)
                )),
            esc(&counts.join(", ")),
            cells.len()
        );
        for (class, text, envs) in &states {
            // At most 1,000 names per state, so that no block outgrows the page's
            // last share.
            let mut list = envs
                .iter()
                .take(1_000)
                .map(|e| esc(e))
                .collect::<Vec<_>>()
                .join(", ");
            if envs.len() > 1_000 {
                let _ = write!(list, " {}", more(envs.len() - 1_000));
            }
            if *class == "pass" && !clean {
                // Folded inside the open block: only the other states show at once.
                let _ = writeln!(
                    out,
                    "<details><summary>{text} in {} environment{}</summary><p>{list}</p></details>",
                    envs.len(),
                    if envs.len() == 1 { "" } else { "s" }
                );
            } else {
                let _ = writeln!(out, "<p><strong>{text}</strong>: {list}</p>");
            }
        }
        out.push_str("</details>\n");
        shown += 1;
    }
    if shown < checks.len() {
        let _ = writeln!(out, "<p>{}</p>", more(checks.len() - shown));
    }
}

/// What a folded page says for the items it left out.
fn more(left_out: usize) -> String {
    format!(
        "… and {left_out} more, not shown to keep the page small (the JSON report has them all)"
    )
}

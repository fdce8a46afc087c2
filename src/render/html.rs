//! One self-contained HTML page (no scripts, no external assets): the verdict, the grid
//! with green, red and amber cells, every executed pair, and each failure's output in
//! an expandable block. Every string from a result is escaped.

use std::fmt::Write as _;

use super::Quoted;
use super::cell::{self, Cell};
use super::text::escape_html as esc;
use super::view::Tails;
use crate::results::{Report, RowResult, Verdict};

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
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;white-space:pre-wrap}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
";

/// Renders the report as one HTML page.
pub fn render(report: &Quoted, tails: &Tails) -> String {
    let mut out = String::new();
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
    if let Some(line) = super::cell::summary_line(report) {
        let _ = writeln!(out, "<p class=\"summary\">{}</p>", esc(&line));
    }
    let _ = writeln!(
        out,
        "<p>Manifest <code>{}</code> ({}). Environments tested: {}.</p>",
        esc(&report.manifest.path),
        esc(&report.manifest.digest),
        esc(&report.tested_list())
    );
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
    if !report.reasons.is_empty() && report.verdict != Verdict::Verified {
        out.push_str("<ul>\n");
        for reason in &report.reasons {
            let _ = writeln!(out, "<li>{}</li>", esc(reason));
        }
        out.push_str("</ul>\n");
    }
    grid(report, &mut out);
    pairs(report, &mut out);
    blocked_and_manual(report, &mut out);
    failures(report, tails, &mut out);
    out.push_str("</body>\n</html>\n");
    out
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
                (Some(r), _) => r.detail.summary.as_str(),
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
        "<h2>Executed pairs</h2>\n<table>\n<thead><tr><th>Check</th><th>Environment</th>\
         <th>Exit Code</th><th>Result</th><th>Duration</th><th>Summary</th></tr></thead>\n<tbody>\n",
    );
    for row in &report.rows {
        // The grid's class: an optional failure is advisory here too.
        let (class, _) = Cell::of_row(row).html();
        let _ = writeln!(
            out,
            "<tr><td>{}{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td><td>{:.1} s</td><td>{}</td></tr>",
            esc(&row.check),
            if row.required { "" } else { " (optional)" },
            esc(&row.environment),
            row.exit_code,
            row.result.as_str(),
            row.detail.duration_ms as f64 / 1000.0,
            esc(&row.detail.summary)
        );
    }
    out.push_str("</tbody>\n</table>\n");
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

fn failures(report: &Quoted, tails: &Tails, out: &mut String) {
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
        let d = &row.detail;
        let (symbol, optional) = Cell::failure_mark(row);
        let _ = writeln!(
            out,
            "<details>\n<summary>{symbol} {}{optional} in {}: {}</summary>\n<p>Exit code {}, {} ms, {} attempt(s).</p>",
            esc(&row.check),
            esc(&row.environment),
            esc(&d.summary),
            row.exit_code,
            d.duration_ms,
            d.attempts
        );
        if let Some(counts) = &d.test_counts {
            let _ = writeln!(
                out,
                "<p>Tests: {} passed, {} failed, {} skipped ({}).</p>",
                counts.passed,
                counts.failed,
                counts.skipped,
                esc(&counts.runner)
            );
        }
        match tails.of(index) {
            Some(log) => {
                let _ = writeln!(out, "<pre><code>{}</code></pre>", esc(log));
            }
            None => out.push_str("<p>No log output available.</p>\n"),
        }
        out.push_str("</details>\n");
    }
}

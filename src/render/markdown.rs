//! The Environment Verification Matrix as markdown (docs/formats.md §5): marker, verdict
//! heading, the grid for people, the strict table and lines, then failure details.
//!
//! Under a size budget the document degrades in a fixed order until it fits: log tails
//! shortened, then dropped, then failure details dropped, then passing rows folded into a
//! count (grid first, then the strict table), then only a link to the full report. The
//! verdict lines are in every shape.

use std::fmt::Write as _;

use super::cell::{self, Cell};
use super::details::details;
pub use super::provenance::provenance;
use super::tests_view;
use super::text::{escape_markdown, plural};
use super::view::Tails;
use super::{Quoted, RenderError, RenderOptions};
use crate::results::{Report, Row, RowResult, Verdict};

/// The fewest log lines shown before tails are dropped altogether.
const MIN_TAIL_LINES: usize = 5;

/// The hidden marker line that identifies our comment for `key`. The key is kept to
/// one line that cannot end the HTML comment early (`--`, `<`, `>` are left out).
pub fn marker(key: &str) -> String {
    let mut safe: String = key
        .chars()
        .filter(|c| !matches!(c, '<' | '>'))
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    while safe.contains("--") {
        safe = safe.replace("--", "-");
    }
    format!("<!-- cargo-verify-matrix:{} -->", safe.trim_matches('-'))
}

/// How much of the matrix one rendering shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    /// Log lines per failure; 0 drops the tails.
    pub(super) tail_lines: usize,
    /// A `<details>` block per failure.
    pub(super) details: bool,
    /// Grid rows that pass everywhere folded into a count.
    fold_grid: bool,
    /// Passing strict-table rows folded into a count.
    fold_rows: bool,
    /// Only the heading, a link and the verdict lines.
    link_only: bool,
    /// At most this many reasons and missing pairs listed.
    max_listed: usize,
}

impl Shape {
    fn full(tail_lines: usize) -> Shape {
        Shape {
            tail_lines,
            details: true,
            fold_grid: false,
            fold_rows: false,
            link_only: false,
            max_listed: usize::MAX,
        }
    }

    fn is_full(&self, tail_lines: usize) -> bool {
        *self == Shape::full(tail_lines)
    }
}

/// Every shape, from the whole document down to the verdict lines, in the documented
/// order of degradation.
pub(super) fn shapes(tail_lines: usize) -> Vec<Shape> {
    let mut all = vec![Shape::full(tail_lines)];
    let mut lines = tail_lines / 2;
    while lines >= MIN_TAIL_LINES {
        all.push(Shape {
            tail_lines: lines,
            ..Shape::full(tail_lines)
        });
        lines /= 2;
    }
    let no_tails = Shape {
        tail_lines: 0,
        ..Shape::full(tail_lines)
    };
    let no_details = Shape {
        details: false,
        ..no_tails
    };
    let fold_grid = Shape {
        fold_grid: true,
        ..no_details
    };
    let fold_rows = Shape {
        fold_rows: true,
        max_listed: 20,
        ..fold_grid
    };
    all.extend([no_tails, no_details, fold_grid, fold_rows]);
    for max_listed in [20, 5, 0] {
        all.push(Shape {
            link_only: true,
            max_listed,
            ..fold_rows
        });
    }
    all
}

/// The failure details alone (a check run's text), within `max_bytes`, with the log
/// tails read from `options`' log folder; [`super::details::failure_details`] takes them
/// already read.
pub fn failure_details(report: &Quoted, options: &RenderOptions, max_bytes: usize) -> String {
    let tails = Tails::load(report, options, Tails::SHORT);
    super::details::failure_details(report, &tails, options, max_bytes)
}

/// Renders the whole markdown document, with the log tails `tails` (read at
/// [`Tails::SHORT`]), cut down to `options.budget`.
pub fn render(
    report: &Quoted,
    tails: &Tails,
    options: &RenderOptions,
) -> Result<String, RenderError> {
    let mut smallest = 0;
    for shape in shapes(options.tail_lines) {
        let text = super::own::sealed(report, render_shape(report, options, tails, shape));
        if options.budget.fits(&text) {
            return Ok(text);
        }
        smallest = text.chars().count();
    }
    Err(RenderError::OverBudget(format!(
        "the markdown matrix cannot fit in {}: even the verdict lines alone take {smallest} characters",
        options.budget.describe()
    )))
}

fn render_shape(report: &Report, options: &RenderOptions, tails: &Tails, shape: Shape) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", marker(&options.key));
    let heading = match (report.verdict, report.partial) {
        (_, Some(_)) => "⚠️ Environment Verification Matrix: PARTIAL RUN, not a verdict",
        (Verdict::Verified, None) => "✅ Environment Verification Matrix: VERIFIED",
        (Verdict::NotVerified, None) => "❌ Environment Verification Matrix: NOT VERIFIED",
        (Verdict::Skipped, None) => "⏭️ Environment Verification Matrix: SKIPPED",
    };
    let _ = writeln!(out, "## {heading}\n");
    if report.verdict == Verdict::Skipped {
        let _ = writeln!(
            out,
            "**SKIPPED**: the manifest says `skip: true`; nothing was run or verified.\n"
        );
    }
    // Results that claim a machine they did not come from: said before anything else.
    for place in super::places::mismatched(report) {
        let _ = writeln!(
            out,
            "> ⚠️ **{}**: its results were not taken: {}\n",
            place.environment,
            escape_markdown(place.mismatch.as_deref().unwrap_or_default())
        );
    }
    if !shape.is_full(options.tail_lines) {
        cut_note(options, shape, &mut out);
    }
    if shape.link_only {
        let mut text = String::new();
        verdict_lines(report, shape, &mut text, one_line);
        fenced(text.trim_end(), &mut out);
        out.push('\n');
        return out;
    }
    // The answer: what failed, since when, and the way forward.
    let blob = super::provenance::blob_base(report, options);
    let run_url = super::provenance::run_url(report, options);
    let bullets = super::answer::bullets(
        report,
        blob.as_deref(),
        run_url.as_deref(),
        shape.max_listed.min(20),
    );
    for bullet in &bullets {
        let _ = writeln!(out, "- {bullet}");
    }
    if !bullets.is_empty() {
        out.push('\n');
    }
    // The counts at a glance, then the commit and run verified: lines that stand alone
    // in both of GitHub's modes (a backslash before the newline breaks the line).
    let lines: Vec<String> = cell::summary_line(report)
        .into_iter()
        .chain(provenance(report, options))
        .collect();
    if !lines.is_empty() {
        let _ = writeln!(out, "{}\n", lines.join("\\\n"));
    }
    grid(report, shape, &mut out);
    reruns(report, &mut out);
    manual(report, &mut out);
    if shape.details && options.details {
        flaky_tests(report, &mut out);
        quarantined_tests(report, &mut out);
        details(report, tails, shape, blob.as_deref(), &mut out);
    }
    baseline_section(report, &mut out);
    where_ran(report, shape, &mut out);
    manifest_section(report, shape, &mut out);
    strict(report, shape, options.strict_open, &mut out);
    out
}

/// Where each environment ran, one line each (at most `shape.max_listed`).
fn where_ran(report: &Report, shape: Shape, out: &mut String) {
    let taken: Vec<&crate::results::Place> = report
        .places
        .iter()
        .filter(|p| p.mismatch.is_none())
        .collect();
    if taken.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<details><summary>Where each environment ran</summary>\n"
    );
    for place in taken.iter().take(shape.max_listed) {
        let _ = writeln!(out, "- {}", escape_markdown(&super::places::line(place)));
    }
    more(taken.len(), shape.max_listed, "environments", out);
    out.push_str("\n</details>\n\n");
}

/// Says what was left out to fit the budget, and where the whole report is.
fn cut_note(options: &RenderOptions, shape: Shape, out: &mut String) {
    let what = if shape.link_only {
        "only the verdict is shown"
    } else if shape.fold_rows {
        "passing rows are folded into counts and failure details left out"
    } else if shape.fold_grid {
        "passing checks are folded in the grid and failure details left out"
    } else if !shape.details {
        "failure details are left out"
    } else if shape.tail_lines == 0 {
        "log tails are left out"
    } else {
        "log tails are shortened"
    };
    let link = match &options.link {
        Some(link) => escape_markdown(link),
        None => "the report in this run's artifacts".to_owned(),
    };
    let _ = writeln!(
        out,
        "> Cut to fit {}: {what}. Full report: {link}\n",
        options.budget.describe()
    );
}

/// The grid for people: checks as rows, environments as columns.
fn grid(report: &Report, shape: Shape, out: &mut String) {
    let checks = report.checks_in_order();
    if checks.is_empty() {
        if report.environments.is_empty() && report.verdict == Verdict::NotVerified {
            let _ = writeln!(
                out,
                "_No results could be judged: see the reasons below._\n"
            );
        } else {
            let _ = writeln!(out, "_No checks to run: no checks defined._\n");
        }
        return;
    }
    let _ = write!(out, "| Check |");
    for env in &report.environments {
        let _ = write!(out, " {env} |");
    }
    let _ = write!(out, "\n|-------|");
    for _ in &report.environments {
        let _ = write!(out, ":---:|");
    }
    out.push('\n');
    let index = report.index();
    let mut folded = 0;
    let mut seen = Vec::new();
    for check in checks {
        let cells: Vec<Cell> = report
            .environments
            .iter()
            .map(|env| Cell::of(report, &index, check, env))
            .collect();
        // An environment with no results at all has its own INFRA_BLOCKED block.
        let passing = cells
            .iter()
            .zip(&report.environments)
            .all(|(c, env)| c.is_clean() || report.is_infra_blocked(env));
        if shape.fold_grid && passing {
            folded += 1;
            continue;
        }
        let optional = cell::is_optional(report, &index, check);
        let _ = write!(
            out,
            "| {check}{}{} |",
            report
                .check_names
                .get(check)
                .map_or_else(String::new, |name| format!(" · {}", escape_markdown(name))),
            if optional { " (optional)" } else { "" }
        );
        for cell in cells {
            let _ = write!(out, " {} |", cell.markdown());
            seen.push(cell);
        }
        out.push('\n');
    }
    if folded > 0 {
        let _ = writeln!(
            out,
            "\n_{folded} {} passed in every environment that reported (folded)._",
            plural(folded, "check", "checks")
        );
    }
    let legend = cell::legend(&seen);
    if !legend.is_empty() {
        let _ = writeln!(out, "\n<sub>{legend}</sub>");
    }
    out.push('\n');
}

/// Which environments' results come from a re-run of the workflow ("re-run: attempt 2").
fn reruns(report: &Report, out: &mut String) {
    let reruns = report.reruns();
    if reruns.is_empty() {
        return;
    }
    let list: Vec<String> = reruns
        .iter()
        .map(|(env, attempt)| format!("{env} (attempt {attempt})"))
        .collect();
    let _ = writeln!(
        out,
        "Re-run: the results of {} come from a re-run.\n",
        list.join(", ")
    );
}

/// What changed against the baseline, when the report was compared with one.
fn baseline_section(report: &Report, out: &mut String) {
    let Some(b) = &report.baseline else {
        return;
    };
    let heading =
        super::text::escape_html(&super::baseline_view::heading(report, b)).replace('@', "&#64;");
    let lines = super::baseline_view::lines(report);
    if lines.is_empty() {
        let _ = writeln!(out, "{heading}\n");
        return;
    }
    let _ = writeln!(out, "<details><summary>{heading}</summary>\n");
    for (what, list) in &lines {
        let _ = writeln!(out, "- {what}: {}", escape_markdown(list));
    }
    out.push_str("\n</details>\n\n");
}

/// The pairs that passed with flaky tests (failed, then passed on a rerun), named.
fn flaky_tests(report: &Report, out: &mut String) {
    const LISTED: usize = 5;
    let mut lines = Vec::new();
    for row in &report.rows {
        let names: Vec<String> = tests_view::flaky(&row.detail)
            .map(|c| escape_markdown(&tests_view::test_name(c)))
            .collect();
        if names.is_empty() {
            continue;
        }
        let more = names.len().saturating_sub(LISTED);
        let mut line = format!(
            "- {} in {}: {}",
            row.check,
            row.environment,
            names[..names.len().min(LISTED)].join(", ")
        );
        if more > 0 {
            let _ = write!(line, " and {more} more");
        }
        lines.push(line);
    }
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Flaky tests (failed, then passed on a rerun):\n\n{}\n",
        lines.join("\n")
    );
}

/// Each pair's quarantine: the failures held back, by name, then each entry that did
/// something (held failures back, ended and failed the pair, matched no test and can
/// go); an entry whose tests passed is left out.
fn quarantined_tests(report: &Report, out: &mut String) {
    const LISTED: usize = 5;
    let mut lines = Vec::new();
    for row in &report.rows {
        let entries = tests_view::quarantine(&row.detail);
        if entries.is_empty() {
            continue;
        }
        let pair = format!(
            "{} {} in {}",
            cell::QUARANTINED,
            escape_markdown(&row.check),
            escape_markdown(&row.environment)
        );
        let held: Vec<String> = tests_view::failing(&row.detail)
            .filter(|c| c.quarantined)
            .map(|c| escape_markdown(&tests_view::test_name(c)))
            .collect();
        if !held.is_empty() {
            let mut line = format!(
                "- {pair}: failed, held back: {}",
                held[..held.len().min(LISTED)].join(", ")
            );
            if held.len() > LISTED {
                let _ = write!(line, " and {} more", held.len() - LISTED);
            }
            lines.push(line);
        }
        for entry in entries {
            // An entry whose tests all passed has nothing to say in a verdict (`history
            // tests --quarantined` says when it can go).
            if !entry.expired && entry.matched > 0 && entry.held == 0 {
                continue;
            }
            let state = if entry.expired {
                format!(
                    "**ended {}**: it fails the pair until it is renewed or removed",
                    entry.until
                )
            } else if entry.matched == 0 {
                "matched no test: a renamed or deleted test, the entry can go".to_owned()
            } else {
                format!(
                    "held back {} {}",
                    entry.held,
                    if entry.held == 1 {
                        "failure"
                    } else {
                        "failures"
                    }
                )
            };
            let mut about = Vec::new();
            if !entry.expired {
                about.push(format!("until {}", entry.until));
            }
            if let Some(owner) = &entry.owner {
                about.push(format!("owner {}", escape_markdown(owner)));
            }
            let mut line = format!(
                "- {pair}: the quarantine of “{}” {state} — {}",
                escape_markdown(&entry.test),
                escape_markdown(&entry.reason)
            );
            if !about.is_empty() {
                let _ = write!(line, " ({})", about.join(", "));
            }
            lines.push(line);
        }
    }
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Quarantined tests (they run and are shown; a failure held back does not fail its pair):\n\n{}\n",
        lines.join("\n")
    );
}

/// The strict table and the lines below it, exactly as docs/formats.md §5 gives them,
/// in a collapsed block (`open` shows it) as plain text: what coordinators' regexes
/// read, with every line standing alone in both of GitHub's modes.
fn strict(report: &Report, shape: Shape, open: bool, out: &mut String) {
    let mut text = String::new();
    text.push_str("| Check | Environment | Exit Code | Result |\n");
    text.push_str("|-------|-------------|-----------|--------|\n");
    let mut folded = 0;
    for row in &report.rows {
        if shape.fold_rows && row.result == RowResult::Pass {
            folded += 1;
            continue;
        }
        strict_row(row, &mut text);
    }
    text.push('\n');
    if folded > 0 {
        let _ = writeln!(
            text,
            "{folded} passing {} folded; the full report lists every row.\n",
            plural(folded, "row", "rows")
        );
    }
    // Environments with no result at all get their own INFRA_BLOCKED block instead.
    let partial = report.missing_beside_results();
    if !partial.is_empty() {
        for m in partial.iter().take(shape.max_listed) {
            let _ = writeln!(
                text,
                "Missing: {} in {} ({})",
                m.check,
                m.environment,
                one_line(&m.reason)
            );
        }
        more(partial.len(), shape.max_listed, "missing pairs", &mut text);
        text.push('\n');
    }
    for blocked in &report.infra_blocked {
        let _ = writeln!(
            text,
            "{}",
            infra_blocked_block(&run_label(report), blocked, shape.max_listed)
        );
    }
    verdict_lines(report, shape, &mut text, one_line);
    let _ = writeln!(
        out,
        "<details{}><summary>Strict matrix: one row per pair, for programs that check the verdict</summary>\n",
        if open { " open" } else { "" }
    );
    fenced(text.trim_end(), out);
    out.push_str("\n</details>\n\n");
}

/// `text` in a code fence longer than any backtick run inside it.
fn fenced(text: &str, out: &mut String) {
    let fence = super::text::fence_for(text);
    let _ = writeln!(out, "{fence}text\n{text}\n{fence}");
}

/// Text from the results on one line, as a code block shows it (no markdown escapes).
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// One row of the strict table.
pub(super) fn strict_row(row: &Row, out: &mut String) {
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} |",
        row.check,
        row.environment,
        row.exit_code,
        row.result.as_str()
    );
}

/// "…and N more" under a list cut at `shown`.
fn more(total: usize, shown: usize, what: &str, out: &mut String) {
    if total > shown {
        let _ = writeln!(out, "- …and {} more {what}", total - shown);
    }
}

/// `Environments Tested:`, `All Required Environments:` (or, for a partial run, what
/// it covered) and the reasons.
fn verdict_lines(report: &Report, shape: Shape, out: &mut String, quote: fn(&str) -> String) {
    let _ = writeln!(out, "Environments Tested: {}", report.tested_list());
    match report.partial {
        Some(partial) => {
            let _ = writeln!(out, "{}", partial.line());
        }
        None => {
            let verdict = if report.claims_verified() {
                "VERIFIED"
            } else {
                "NOT VERIFIED"
            };
            let _ = writeln!(out, "All Required Environments: {verdict}");
        }
    }
    if report.verdict != Verdict::Verified && !report.reasons.is_empty() {
        out.push('\n');
        for reason in report.reasons.iter().take(shape.max_listed) {
            let _ = writeln!(out, "- {}", quote(reason));
        }
        more(report.reasons.len(), shape.max_listed, "reasons", out);
    }
    out.push('\n');
}

/// The INFRA_BLOCKED block for one environment (docs/formats.md §5), listing at most `max`
/// checks; it ends in a newline.
pub(super) fn infra_blocked_block(
    label: &str,
    blocked: &crate::results::InfraBlocked,
    max: usize,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "INFRA_BLOCKED: {label}\n");
    let _ = writeln!(
        out,
        "Issue: Environment '{}' unavailable",
        blocked.environment
    );
    let _ = writeln!(
        out,
        "Cannot complete verification - environment required for:"
    );
    for check in blocked.checks.iter().take(max) {
        let _ = writeln!(out, "- {check}");
    }
    more(blocked.checks.len(), max, "checks", &mut out);
    out
}

/// What identifies the run in an INFRA_BLOCKED block.
pub(super) fn run_label(report: &Report) -> String {
    report
        .source
        .run_id
        .clone()
        .or_else(|| {
            report
                .source
                .commit
                .as_ref()
                .map(|c| c.chars().take(12).collect())
        })
        .unwrap_or_else(|| report.manifest.path.clone())
}

/// Where the manifest came from, and what the results' manifest changed against a
/// trusted one (weakenings marked).
fn manifest_section(report: &Report, shape: Shape, out: &mut String) {
    let manifest = &report.manifest;
    let Some(origin) = manifest.origin else {
        return;
    };
    let _ = writeln!(
        out,
        "Manifest: `{}` {} ({})",
        escape_markdown(&manifest.path),
        origin.describe(),
        short_digest(&manifest.digest)
    );
    if let Some(results) = &manifest.results_digest {
        let _ = writeln!(
            out,
            "\nThe results were produced from another manifest ({}); they are judged against this one.",
            short_digest(results)
        );
    }
    if let Some(trusted) = &manifest.compared_with
        && !report.manifest_changes.is_empty()
    {
        let _ = writeln!(
            out,
            "\nChanges against the trusted manifest ({}):",
            short_digest(trusted)
        );
        let in_effect = manifest.results_digest.is_none();
        for change in report.manifest_changes.iter().take(shape.max_listed) {
            let mark = match (change.weakens, in_effect, report.weakening_allowed) {
                (false, ..) => String::new(),
                (true, false, _) => " (weakens; the trusted manifest was used)".to_owned(),
                (true, true, true) => " (weakens; allowed)".to_owned(),
                (true, true, false) => " (weakens; not allowed)".to_owned(),
            };
            let _ = writeln!(
                out,
                "- {}{}{mark}",
                if change.weakens { "⚠️ " } else { "" },
                escape_markdown(&change.change)
            );
        }
        more(
            report.manifest_changes.len(),
            shape.max_listed,
            "changes",
            out,
        );
    }
    out.push('\n');
}

/// `sha256:` and the first 12 hex digits.
fn short_digest(digest: &str) -> String {
    digest.chars().take("sha256:".len() + 12).collect()
}

fn manual(report: &Report, out: &mut String) {
    if report.manual.is_empty() {
        return;
    }
    let _ = writeln!(out, "Awaiting review (not run, not counted):");
    for item in &report.manual {
        let _ = writeln!(
            out,
            "- {} ({}): {}",
            item.id,
            item.kind,
            escape_markdown(&item.text)
        );
    }
    out.push('\n');
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;

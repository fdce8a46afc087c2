//! The answer a reviewer reads first, right under the verdict: what failed (the check,
//! the environment, its first failing test and message), since when (new,
//! pre-existing, against the base), and the way forward where there is one (a missing
//! leg, a shrunk suite). One bullet per reason of the verdict, in the verdict's order,
//! so nothing the verdict says is left out and nothing is said twice.

use super::cell::{self, Cell, Trouble};
use super::tests_view;
use super::text::escape_markdown;
use crate::results::baseline::{Baseline, PairRef, TestDrop};
use crate::results::report::Pair;
use crate::results::{Report, Row, RowResult};

/// The label a maintainer puts on a pull request to accept a weaker manifest or a
/// smaller suite (the Action's `allow-weakening` input, as the shipped workflow wires it).
pub const ALLOW_WEAKENING_LABEL: &str = "verify-matrix:allow-weakening";

/// How the verdict's reason for a weakened manifest starts.
const WEAKER: &str = "the manifest is weaker than the trusted one";

/// The answer's bullets (markdown, each one line), at most `max` of the verdict's
/// reasons, then the advisories and what the base says was fixed. `run_url` links the
/// workflow run whose legs a missing environment belongs to.
pub fn bullets(
    report: &Report,
    blob: Option<&str>,
    run_url: Option<&str>,
    max: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    let failing: Vec<&Row> = report
        .rows
        .iter()
        .filter(|r| r.result == RowResult::Fail && r.required)
        .collect();
    let mut drops = false;
    let mut weaker = false;
    for reason in report.reasons.iter() {
        if out.len() == max {
            out.push(format!(
                "…and {} more: see the strict matrix below",
                report.reasons.len() - max
            ));
            break;
        }
        let drop = report.baseline.as_ref().and_then(|b| {
            b.test_drops
                .iter()
                .find(|d| is_drop(reason, d))
                .map(|d| (b, d))
        });
        if let Some((b, d)) = drop {
            drops = true;
            out.push(dropped(d, b));
        } else if let Some(row) = failing
            .iter()
            .find(|r| is_about(reason, &r.check, &r.environment))
        {
            out.push(failure(reason, row, report.baseline.as_ref(), blob));
        } else if let Some(env) = report
            .infra_blocked
            .iter()
            .map(|b| b.environment.as_str())
            .find(|env| reason == &format!("{env}: no results"))
        {
            out.push(no_leg(report, env, run_url));
        } else {
            weaker |= reason.starts_with(WEAKER);
            out.push(format!("❌ {}", escape_markdown(reason)));
        }
    }
    // The way forward, once: what a maintainer does to accept it.
    let accept = match (drops, weaker) {
        (true, true) => Some("a weaker manifest and the smaller suite"),
        (true, false) => Some("the smaller suite"),
        (false, true) => Some("a weaker manifest"),
        (false, false) => None,
    };
    if let Some(what) = accept {
        let mut line = format!(
            "To accept {what}: a maintainer adds the `{ALLOW_WEAKENING_LABEL}` label to the \
             pull request (the Action's `allow-weakening` input, `--allow-weakening`)"
        );
        if drops {
            line.push_str(
                "; raising `tests-may-drop` in the pull request's own manifest is itself a \
                 weakening and needs the same label",
            );
        }
        out.push(line);
    }
    if let Some(b) = report.baseline.as_ref().filter(|b| b.accepted) {
        out.push(format!(
            "✔️ `fail-on: new`: every failure fails on {} too: accepted (exit 0, a neutral \
             check run); the verdict stays NOT VERIFIED",
            escape_markdown(&b.label())
        ));
    }
    if let Some(line) = advisories(report) {
        out.push(line);
    }
    if let Some(b) = &report.baseline
        && !b.fixed.is_empty()
    {
        out.push(format!(
            "✔️ Fixed since {}: {}",
            escape_markdown(&b.label()),
            pairs(&b.fixed)
        ));
    }
    out
}

/// Whether `reason` speaks of `check` in `environment`: it starts with the check's id and
/// names the environment as a whole word after ` in `.
pub(super) fn is_about(reason: &str, check: &str, environment: &str) -> bool {
    let Some(rest) = reason.strip_prefix(check) else {
        return false;
    };
    if !rest.starts_with(' ') {
        return false;
    }
    let needle = format!(" in {environment}");
    rest.match_indices(&needle).any(|(at, _)| {
        rest[at + needle.len()..]
            .chars()
            .next()
            .is_none_or(|c| matches!(c, ' ' | ':' | ',' | ';' | ')'))
    })
}

/// A required pair's failure: the reason, its first failing test with place and
/// message, and its standing against the base.
fn failure(reason: &str, row: &Row, baseline: Option<&Baseline>, blob: Option<&str>) -> String {
    let mut line = format!("❌ **{}**", escape_markdown(reason));
    let d = &row.detail;
    if let Some(case) = tests_view::failing(d).next() {
        line.push_str(&format!(": {}", code_span(&tests_view::test_name(case))));
        line.push_str(&escape_markdown(&tests_view::history_note(case)));
        match tests_view::place(case, blob) {
            Some((label, Some(url))) => {
                line.push_str(&format!(" at [{}]({url})", escape_markdown(&label)));
            }
            Some((label, None)) => line.push_str(&format!(" at {}", escape_markdown(&label))),
            None => {}
        }
        let message = tests_view::message_line(case);
        if !message.is_empty() {
            line.push_str(&format!(" — {}", escape_markdown(&message)));
        }
        let more = tests_view::failing_count(d).saturating_sub(1);
        if more > 0 {
            line.push_str(&format!(
                " (and {more} more failing {})",
                if more == 1 { "test" } else { "tests" }
            ));
        }
    }
    if let Some(b) = baseline {
        line.push_str(&standing(b, &row.check, &row.environment));
    }
    line
}

/// ` · **new** (…)`, ` · pre-existing (…)`, or nothing for a pair the base lacks.
fn standing(b: &Baseline, check: &str, environment: &str) -> String {
    let is = |p: &&PairRef| p.check == check && p.environment == environment;
    let base = escape_markdown(&b.label());
    if let Some(p) = b.new_failures.iter().find(is) {
        match &p.why {
            Some(why) => format!(" · **new** against {base}: {}", escape_markdown(why)),
            None => format!(" · **new**: it passed on {base}"),
        }
    } else if b.pre_existing.iter().any(|p| is(&p)) {
        format!(" · pre-existing: it fails on {base} too")
    } else {
        String::new()
    }
}

/// An environment with no result at all: the leg failed or was cancelled before it
/// uploaded its results (what usually happens), with the checks it owed and the run.
fn no_leg(report: &Report, env: &str, run_url: Option<&str>) -> String {
    let blocked = report.infra_blocked.iter().find(|b| b.environment == env);
    let checks: Vec<&str> = blocked
        .map(|b| b.checks.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let job_url = blocked
        .and_then(|b| b.job_url.as_deref())
        .filter(|url| super::provenance::is_link_safe(url));
    let mut line = format!(
        "⚠️ **No result from the {env} leg**: it failed or was cancelled before it uploaded \
         its results, or it never ran ({} {} no result)",
        checks.len(),
        if checks.len() == 1 {
            "check has"
        } else {
            "checks have"
        }
    );
    match (job_url, run_url) {
        (Some(url), _) => line.push_str(&format!("; see [the {env} job]({url})")),
        (None, Some(url)) => line.push_str(&format!("; see the {env} job in [the run]({url})")),
        (None, None) => line.push_str(&format!("; see the {env} job's log")),
    }
    if let Some(b) = &report.baseline
        && b.newly_missing.iter().any(|p| p.environment == env)
    {
        line.push_str(&format!(
            " · **new**: {} has its results",
            escape_markdown(&b.label())
        ));
    }
    line
}

/// Whether `reason` is the verdict's reason for the test drop `d` (`CHECK in ENV ran
/// … (tests-may-drop: N%)`).
fn is_drop(reason: &str, d: &TestDrop) -> bool {
    reason.ends_with("%)")
        && reason.contains("(tests-may-drop: ")
        && is_about(reason, &d.check, &d.environment)
}

/// A test gate that ran fewer tests than the base allows, with the tests that vanished.
fn dropped(d: &TestDrop, b: &Baseline) -> String {
    let mut line = format!(
        "↓ **{} in {} ran {} {}; {} ran {}**",
        d.check,
        d.environment,
        d.head,
        if d.head == 1 { "test" } else { "tests" },
        escape_markdown(&b.label()),
        d.base
    );
    let vanished = b
        .vanished
        .iter()
        .find(|v| v.check == d.check && v.environment == d.environment);
    if let Some(v) = vanished.filter(|v| v.count > 0) {
        let names: Vec<String> = v.tests.iter().take(5).map(|t| code_span(t)).collect();
        let more = v.count.saturating_sub(names.len() as u64);
        line.push_str(&format!(": {} vanished", names.join(", ")));
        if more > 0 {
            line.push_str(&format!(" and {more} more"));
        }
    }
    line.push_str(&format!(" (tests-may-drop: {}%)", d.allowed_percent));
    line
}

/// Optional checks that failed (or errored, or have no result), which never block: one
/// line naming them, each with its environments, in manifest order, then environment
/// order.
fn advisories(report: &Report) -> Option<String> {
    let mut troubled: Vec<(&str, Trouble, Vec<&str>)> = Vec::new();
    for pair in report.pairs_in_order() {
        let (check, env, cell) = match pair {
            Pair::Row(r) => (r.check.as_str(), r.environment.as_str(), Cell::of_row(r)),
            Pair::Missing(m) => (
                m.check.as_str(),
                m.environment.as_str(),
                Cell::of_missing(report, m),
            ),
        };
        let Cell::Advisory(trouble) = cell else {
            continue;
        };
        match troubled
            .iter_mut()
            .find(|(c, t, _)| *c == check && *t == trouble)
        {
            Some((_, _, envs)) => envs.push(env),
            None => troubled.push((check, trouble, vec![env])),
        }
    }
    (!troubled.is_empty()).then(|| {
        let listed: Vec<String> = troubled
            .iter()
            .map(|(check, trouble, envs)| {
                format!("{check} in {} {}", envs.join(", "), trouble.verb())
            })
            .collect();
        format!(
            "{} Optional, does not block: {}",
            cell::ADVISORY,
            listed.join("; ")
        )
    })
}

/// `text` as an inline code span on one line: its backticks and line breaks cannot end
/// the span or the bullet early.
fn code_span(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| match c {
            '`' => '\'',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    format!("`{}`", one_line.trim())
}

fn pairs(list: &[PairRef]) -> String {
    let shown: Vec<String> = list
        .iter()
        .take(5)
        .map(|p| format!("{} in {}", p.check, p.environment))
        .collect();
    let more = list.len().saturating_sub(5);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::{bullets, is_about};
    use crate::results::Report;
    use crate::results::report::InfraBlocked;

    #[test]
    fn a_missing_leg_is_no_result_from_it_linked_to_its_job_not_infrastructure() {
        let mut report = Report::unjudged("verify-matrix.yml", "windows: no results");
        report.infra_blocked.push(InfraBlocked {
            environment: "windows".into(),
            checks: vec!["unit".into(), "lint".into()],
            job_url: Some("https://github.com/o/r/actions/runs/7/job/9".into()),
        });
        let lines = bullets(
            &report,
            None,
            Some("https://github.com/o/r/actions/runs/7"),
            20,
        );
        assert_eq!(
            lines,
            [
                "⚠️ **No result from the windows leg**: it failed or was cancelled before it uploaded \
              its results, or it never ran (2 checks have no result); see [the windows \
              job](https://github.com/o/r/actions/runs/7/job/9)"
            ]
        );
        assert!(!lines[0].contains("nfrastructure") && !lines[0].contains("unavailable"));
        // Without the job, the run.
        report.infra_blocked[0].job_url = None;
        let lines = bullets(
            &report,
            None,
            Some("https://github.com/o/r/actions/runs/7"),
            20,
        );
        assert!(
            lines[0].ends_with(
                "; see the windows job in [the run](https://github.com/o/r/actions/runs/7)"
            ),
            "{lines:?}"
        );
    }

    #[test]
    fn a_test_name_stays_one_code_span_on_one_line() {
        assert_eq!(
            super::code_span("a `b`\n| x | y | 0 | PASS |"),
            "`a 'b' | x | y | 0 | PASS |`"
        );
    }

    #[test]
    fn a_reason_is_about_a_pair_when_it_names_both_as_whole_words() {
        assert!(is_about("unit failed in macos (exit 1)", "unit", "macos"));
        assert!(is_about("unit in linux ran 5 tests", "unit", "linux"));
        assert!(is_about("unit timed out in macos", "unit", "macos"));
        assert!(!is_about(
            "unit failed in macos-arm (exit 1)",
            "unit",
            "macos"
        ));
        assert!(!is_about("units failed in macos (exit 1)", "unit", "macos"));
        assert!(!is_about("lint failed in macos (exit 1)", "unit", "macos"));
    }
}

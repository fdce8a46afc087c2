//! `--format aot`: the answer the AoT loop's verifier gives for a base case (see
//! [`crate::manifest::aot`]), from the report of its run.
//!
//! ```json
//! {"passed": false, "evaluation_type": "checklist", "evidence": "1/2 items passed",
//!  "failures": ["Build: `npm run build`: exit 1 (wanted 0) in 2.1s"],
//!  "requires_user_confirmation": false, "output_summary": "✓ Tests\n✗ Build",
//!  "checklist": [{"item": "Tests", "passed": true, "type": "command", "value": "npm test",
//!                 "evidence": "…"}, …],
//!  "skipped": []}
//! ```
//!
//! The older single check (an and-list too, run as one shell command) answers without
//! `evaluation_type`, `checklist` and `skipped`. `quality` and
//! `assertion` items are never judged here: they are `passed: null, skipped: true`,
//! listed in `skipped`, and an assertion sets `requires_user_confirmation`. `passed` is
//! true only when every judged item passed, at least one was judged, and the report is
//! VERIFIED over every required pair (not a partial run).

use serde::Serialize;

use super::view::Tails;
use super::{Quoted, RenderOptions};
use crate::manifest::aot::{BaseCase, Body, Item, Leaf, Shape};
use crate::results::schema::ItemResult;
use crate::results::{CheckResult, Status};

/// The verifier's answer.
#[derive(Serialize)]
struct Answer {
    passed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    evaluation_type: Option<&'static str>,
    evidence: String,
    failures: Vec<String>,
    requires_user_confirmation: bool,
    output_summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    checklist: Option<Vec<ItemAnswer>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<Vec<String>>,
}

/// One item of the checklist tree.
#[derive(Serialize)]
struct ItemAnswer {
    item: String,
    /// `None` for an item left to a person or a judge.
    passed: Option<bool>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    skipped: bool,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    evidence: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    criteria: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pass_threshold: Option<serde_json::Number>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    group: Option<Vec<ItemAnswer>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    any_of: Option<Vec<ItemAnswer>>,
}

/// What the run recorded for one item.
enum Got<'a> {
    /// A top-level check's result, or a group item's.
    Ran {
        status: Status,
        summary: &'a str,
        log_path: Option<&'a str>,
        items: &'a [ItemResult],
    },
    /// No result: why.
    Absent(String),
}

impl<'a> Got<'a> {
    fn of_check(d: &'a CheckResult) -> Got<'a> {
        Got::Ran {
            status: d.status,
            summary: &d.summary,
            log_path: d.log_path.as_deref(),
            items: &d.items,
        }
    }

    fn of_item(i: &'a ItemResult) -> Got<'a> {
        Got::Ran {
            status: i.status,
            summary: &i.summary,
            log_path: i.log_path.as_deref(),
            items: &i.items,
        }
    }
}

/// An item judged, with what its parents collect from it.
struct Judged {
    answer: ItemAnswer,
    /// `path: evidence` of each failed check under it that made it fail.
    failures: Vec<String>,
    /// `item (type: quality)` of each item under it left to a person or a judge.
    skipped: Vec<String>,
    /// An assertion is under it.
    confirm: bool,
    /// Lines of the output summary (`✓ item`, nested items indented).
    lines: Vec<String>,
}

/// The answer for `case` from `report`, pretty-printed, with a final newline.
pub fn render(report: &Quoted, options: &RenderOptions, case: &BaseCase) -> String {
    let index = report.index();
    let mut judged = Vec::new();
    let mut single_tail = None;
    for item in &case.items {
        let pairs: Vec<(&str, Got)> = report
            .environments
            .iter()
            .filter_map(|env| {
                if let Some(row) = index.row(&item.id, env) {
                    if case.shape == Shape::Single {
                        single_tail = report.log_tail(options, &row.detail, Tails::SHORT);
                    }
                    Some((env.as_str(), Got::of_check(&row.detail)))
                } else {
                    index
                        .missing(&item.id, env)
                        .map(|m| (env.as_str(), Got::Absent(format!("not run: {}", m.reason))))
                }
            })
            .collect();
        let several = pairs.len() > 1;
        if pairs.is_empty() {
            // A manual check has no pair: it is listed for review.
            let none = Got::Absent("no result: the check applies to no environment".to_owned());
            judged.push(judge(report, item, none, &item.item));
        }
        for (env, got) in pairs {
            let name = if several {
                format!("{} ({env})", item.item)
            } else {
                item.item.clone()
            };
            judged.push(judge(report, item, got, &name));
        }
    }
    let counted: Vec<&Judged> = judged.iter().filter(|j| !j.answer.skipped).collect();
    let passed_count = counted
        .iter()
        .filter(|j| j.answer.passed == Some(true))
        .count();
    let tree_passed = !counted.is_empty() && passed_count == counted.len();
    let verified = report.claims_verified();
    let mut failures: Vec<String> = judged.iter().flat_map(|j| j.failures.clone()).collect();
    let skipped: Vec<String> = judged.iter().flat_map(|j| j.skipped.clone()).collect();
    let noun = match case.shape {
        Shape::Checklist => "items",
        _ => "checks",
    };
    let mut evidence = match case.shape {
        Shape::Single => judged
            .first()
            .map(|j| j.answer.evidence.clone())
            .unwrap_or_default(),
        _ => format!("{passed_count}/{} {noun} passed", counted.len()),
    };
    if !skipped.is_empty() && case.shape != Shape::Single {
        evidence.push_str(&format!(", {} left to a person or a judge", skipped.len()));
    }
    if counted.is_empty() {
        evidence = match case.shape {
            Shape::Single => format!("{evidence}; nothing automated was verified"),
            _ => format!(
                "nothing automated was verified: {} left to a person or a judge",
                skipped.len()
            ),
        };
    } else if tree_passed && !verified {
        // Every item passed, yet the report is not VERIFIED (a contradiction, a partial
        // run, an untrusted manifest): the report's word stands.
        let reasons = if report.reasons.is_empty() {
            "not every required pair passed".to_owned()
        } else {
            report.reasons.join("; ")
        };
        failures.push(if report.partial.is_some() {
            "a partial run (a subset of the checks): not a verdict".to_owned()
        } else {
            format!("the report is {}: {reasons}", report.verdict.as_str())
        });
    }
    let output_summary = match (case.shape, single_tail) {
        (Shape::Single, Some(tail)) => tail,
        _ => judged
            .iter()
            .flat_map(|j| j.lines.clone())
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let checklist = case.shape == Shape::Checklist;
    let answer = Answer {
        passed: tree_passed && verified,
        evaluation_type: checklist.then_some("checklist"),
        evidence,
        failures,
        requires_user_confirmation: judged.iter().any(|j| j.confirm),
        output_summary,
        skipped: checklist.then_some(skipped),
        checklist: checklist.then(|| judged.into_iter().map(|j| j.answer).collect()),
    };
    let mut text = serde_json::to_string_pretty(&answer).unwrap_or_default();
    text.push('\n');
    text
}

/// Judges `item` by what the run recorded for it, named `name`.
fn judge(report: &Quoted, item: &Item, got: Got, name: &str) -> Judged {
    let name = report.quote(name);
    match &item.body {
        Body::Check(leaf) => judge_leaf(report, leaf, got, name),
        Body::Group { any, items } => judge_group(report, *any, items, got, name),
    }
}

fn judge_leaf(report: &Quoted, leaf: &Leaf, got: Got, name: String) -> Judged {
    let value = leaf.value.as_deref().map(|v| report.quote(v));
    let mut answer = ItemAnswer {
        item: name.clone(),
        passed: None,
        skipped: false,
        kind: Some(leaf.kind.clone()),
        value: value.clone(),
        evidence: String::new(),
        criteria: leaf.criteria.as_deref().map(|c| report.quote(c)),
        pass_threshold: leaf.pass_threshold.and_then(threshold),
        scope: leaf.scope.as_deref().map(|s| report.quote(s)),
        log_path: None,
        group: None,
        any_of: None,
    };
    if leaf.is_manual() {
        answer.skipped = true;
        answer.evidence = if leaf.kind == "assertion" {
            "needs a person's confirmation; never judged by verify-matrix".to_owned()
        } else {
            let threshold = leaf
                .pass_threshold
                .map(|t| format!(" (pass threshold {t})"))
                .unwrap_or_default();
            format!("needs a judge's scoring{threshold}; never judged by verify-matrix")
        };
        return Judged {
            answer,
            failures: Vec::new(),
            skipped: vec![format!("{name} (type: {})", leaf.kind)],
            confirm: leaf.kind == "assertion",
            lines: vec![format!("– {name} ({}: left for review)", leaf.kind)],
        };
    }
    let mut got_summary = None;
    let passed = match got {
        Got::Ran {
            status,
            summary,
            log_path,
            ..
        } => {
            got_summary = Some(summary.to_owned());
            answer.log_path = log_path.map(str::to_owned);
            answer.evidence = match (&value, leaf.kind.as_str()) {
                (Some(cmd), "command" | "not_command") => format!("`{cmd}`: {summary}"),
                _ => summary.to_owned(),
            };
            status == Status::Pass
        }
        Got::Absent(why) => {
            answer.evidence = why;
            false
        }
    };
    answer.passed = Some(passed);
    let mark = if passed { "✓" } else { "✗" };
    // `npm run lint failed: …`, as the loop's verifier says it; named when the item
    // has a name of its own.
    let failure = match (&value, &got_summary) {
        (Some(cmd), Some(summary)) if matches!(leaf.kind.as_str(), "command" | "not_command") => {
            if *cmd == name {
                format!("`{cmd}` failed: {summary}")
            } else {
                format!("{name}: `{cmd}` failed: {summary}")
            }
        }
        _ => format!("{name}: {}", answer.evidence),
    };
    Judged {
        failures: if passed { Vec::new() } else { vec![failure] },
        lines: vec![format!("{mark} {name}")],
        answer,
        skipped: Vec::new(),
        confirm: false,
    }
}

/// A threshold as it was written: `3` stays `3`, `3.5` stays `3.5`.
fn threshold(t: f64) -> Option<serde_json::Number> {
    if t.fract() == 0.0 && t.abs() < 9.0e15 {
        // Whole and well inside i64: exact.
        #[allow(clippy::cast_possible_truncation)]
        Some(serde_json::Number::from(t as i64))
    } else {
        serde_json::Number::from_f64(t)
    }
}

fn judge_group(report: &Quoted, any: bool, items: &[Item], got: Got, name: String) -> Judged {
    let (status, recorded, log_path, why) = match got {
        Got::Ran {
            status,
            items,
            log_path,
            ..
        } => (Some(status), items, log_path, None),
        Got::Absent(why) => (None, &[][..], None, Some(why)),
    };
    let children: Vec<Judged> = items
        .iter()
        .map(|child| {
            let got = match (&why, recorded.iter().find(|r| r.item == child.id.as_str())) {
                (Some(why), _) => Got::Absent(why.clone()),
                (None, Some(r)) => Got::of_item(r),
                (None, None) => Got::Absent("no result recorded for this item".to_owned()),
            };
            judge(report, child, got, &child.item)
        })
        .collect();
    let counted: Vec<&Judged> = children.iter().filter(|c| !c.answer.skipped).collect();
    let passed_count = counted
        .iter()
        .filter(|c| c.answer.passed == Some(true))
        .count();
    let by_items = if any {
        passed_count > 0
    } else {
        !counted.is_empty() && passed_count == counted.len()
    };
    if counted.is_empty() {
        // Only items left to a person or a judge: nothing ran, nothing counts.
        let evidence = "only items left to a person or a judge; nothing run".to_owned();
        return group(name, any, children, None, evidence, None);
    }
    // The group's own result and its items must agree: neither alone makes a pass.
    let passed = by_items && status == Some(Status::Pass);
    let mut evidence = if any {
        format!("OR group: {passed_count}/{} passed (need 1)", counted.len())
    } else {
        format!("AND group: {passed_count}/{} passed", counted.len())
    };
    if let Some(why) = &why {
        evidence = format!("{why}; {evidence}");
    } else if by_items != (status == Some(Status::Pass)) {
        evidence.push_str(&format!(
            "; the group's own result is {}",
            status.map_or("missing", Status::as_str)
        ));
    }
    group(name, any, children, Some(passed), evidence, log_path)
}

/// A group judged `passed` (`None`: left for review) from its `children`: its line
/// above theirs, their failures under its name when it failed (its own evidence when
/// none of them says why), what they leave for review.
fn group(
    name: String,
    any: bool,
    children: Vec<Judged>,
    passed: Option<bool>,
    evidence: String,
    log_path: Option<&str>,
) -> Judged {
    let mark = match passed {
        None => "–",
        Some(true) => "✓",
        Some(false) => "✗",
    };
    let mut lines = vec![format!("{mark} {name}")];
    let (mut failures, mut skipped, mut confirm, mut answers) =
        (Vec::new(), Vec::new(), false, Vec::new());
    for child in children {
        lines.extend(child.lines.iter().map(|l| format!("  {l}")));
        if passed == Some(false) {
            failures.extend(child.failures.iter().map(|f| format!("{name} › {f}")));
        }
        skipped.extend(child.skipped);
        confirm |= child.confirm;
        answers.push(child.answer);
    }
    if passed == Some(false) && failures.is_empty() {
        failures.push(format!("{name}: {evidence}"));
    }
    let (group, any_of) = if any {
        (None, Some(answers))
    } else {
        (Some(answers), None)
    };
    Judged {
        answer: ItemAnswer {
            item: name,
            passed,
            skipped: passed.is_none(),
            kind: None,
            value: None,
            evidence,
            criteria: None,
            pass_threshold: None,
            scope: None,
            log_path: log_path.map(str::to_owned),
            group,
            any_of,
        },
        failures,
        skipped,
        confirm,
        lines,
    }
}

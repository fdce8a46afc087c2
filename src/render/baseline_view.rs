//! The comparison with the baseline as renderers show it: one line of counts, then one
//! line per kind of difference, each listing its first pairs.

use std::collections::HashSet;

use crate::manifest::FailOn;
use crate::results::baseline::{Baseline, PairRef};
use crate::results::{Report, Verdict};

/// The most pairs (or tests) named per line.
const LISTED: usize = 10;

/// The heading line: `Compared with the baseline (abc1234): …`, each count of pairs
/// saying how many of them are optional checks' (which never block).
pub fn heading(report: &Report, b: &Baseline) -> String {
    let optional: HashSet<(&str, &str)> = report
        .rows
        .iter()
        .filter(|r| !r.required)
        .map(|r| (r.check.as_str(), r.environment.as_str()))
        .collect();
    let count = |pairs: &[PairRef]| {
        let n = pairs.len();
        let of_optional = pairs
            .iter()
            .filter(|p| optional.contains(&(p.check.as_str(), p.environment.as_str())))
            .count();
        if of_optional == 0 {
            n.to_string()
        } else {
            format!("{n} ({of_optional} optional)")
        }
    };
    format!(
        "Compared with {}: {} new failure{}, {} pre-existing, {} fixed, {} newly missing, {} with fewer tests",
        b.label(),
        count(&b.new_failures),
        if b.new_failures.len() == 1 { "" } else { "s" },
        count(&b.pre_existing),
        count(&b.fixed),
        b.newly_missing.len(),
        b.test_drops.len()
    )
}

/// The lines under the heading, as (what, list) pairs, only those with something.
pub fn lines(report: &Report) -> Vec<(&'static str, String)> {
    let Some(b) = &report.baseline else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if b.fail_on == FailOn::New && report.verdict == Verdict::NotVerified {
        out.push((
            "fail-on: new",
            if b.accepted {
                format!(
                    "every failure fails on {} too: accepted (exit 0, a neutral check run); the verdict stays NOT VERIFIED",
                    b.label()
                )
            } else {
                "not accepted: something other than failures the base has too is wrong"
                    .to_owned()
            },
        ));
    }
    for (what, pairs) in [
        ("new failures", &b.new_failures),
        ("pre-existing failures", &b.pre_existing),
        ("fixed", &b.fixed),
        ("newly missing", &b.newly_missing),
        ("not on the baseline", &b.not_compared),
    ] {
        if !pairs.is_empty() {
            out.push((what, listed(pairs.iter().map(pair), pairs.len())));
        }
    }
    if !b.test_drops.is_empty() {
        let drops = b.test_drops.iter().map(|d| {
            if d.gone {
                return format!(
                    "{} in {}: no pair of this matrix (baseline {})",
                    d.check, d.environment, d.base
                );
            }
            let vanished = if d.vanished > 0 {
                format!(
                    ", {} of {} distinct tests vanished",
                    d.vanished, d.base_distinct
                )
            } else {
                String::new()
            };
            format!(
                "{} in {} ran {} (baseline {}{vanished}, tests-may-drop {}%)",
                d.check, d.environment, d.head, d.base, d.allowed_percent
            )
        });
        let what = if report.weakening_allowed {
            "fewer tests (allowed: --allow-weakening)"
        } else {
            "fewer tests"
        };
        out.push((what, listed(drops, b.test_drops.len())));
    }
    if !b.vanished.is_empty() {
        let vanished = b.vanished.iter().map(|v| {
            format!(
                "{} in {}: {} ({})",
                v.check,
                v.environment,
                v.count,
                v.tests
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        });
        out.push(("vanished tests", listed(vanished, b.vanished.len())));
    }
    out
}

fn pair(p: &PairRef) -> String {
    match &p.why {
        Some(why) => format!("{} in {} ({why})", p.check, p.environment),
        None => format!("{} in {}", p.check, p.environment),
    }
}

/// The first [`LISTED`] of `items`, and how many more.
fn listed(items: impl Iterator<Item = String>, total: usize) -> String {
    let mut text: Vec<String> = items.take(LISTED).collect();
    if total > LISTED {
        text.push(format!("and {} more", total - LISTED));
    }
    text.join("; ")
}

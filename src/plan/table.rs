//! `plan --format table`: the matrix for people, checks as rows and environments as
//! columns.

use std::collections::HashMap;
use std::fmt::Write as _;

use tabled::builder::Builder;
use tabled::settings::Style;

use super::{Pair, Plan};

/// Above this many environments the grid is wider than any terminal: the plan is shown
/// as one line per check instead.
pub const MAX_GRID_ENVIRONMENTS: usize = 12;

/// Renders the plan as a terminal table (or, for a wide matrix, one line per check)
/// followed by a one-line count. Linear in the number of pairs.
pub fn render(plan: &Plan) -> String {
    // Each check's pairs, in manifest order, found once.
    let mut checks: Vec<(&Pair, Vec<&Pair>)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for pair in &plan.pairs {
        match index.get(pair.check.as_str()) {
            Some(&i) => checks[i].1.push(pair),
            None => {
                index.insert(&pair.check, checks.len());
                checks.push((pair, vec![pair]));
            }
        }
    }
    let body = if plan.environments.len() > MAX_GRID_ENVIRONMENTS {
        lines(&checks, plan.environments.len())
    } else {
        grid(plan, &checks)
    };
    let runnable = plan.pairs.iter().filter(|p| !p.manual).count();
    let manual = plan.pairs.len() - runnable;
    let mut out = format!(
        "{body}\n{} check{} × {} environment{} = {runnable} pair{} to run",
        checks.len(),
        plural(checks.len()),
        plan.environments.len(),
        plural(plan.environments.len()),
        plural(runnable),
    );
    if manual > 0 {
        out.push_str(&format!(", {manual} manual"));
    }
    let sharded: Vec<String> = plan
        .environments
        .iter()
        .filter(|e| e.shards > 1)
        .map(|e| format!("{} in {} shards", e.name, e.shards))
        .collect();
    if !sharded.is_empty() {
        out.push_str(&format!(" ({})", sharded.join(", ")));
    }
    if plan.skip {
        out.push_str(" (SKIPPED: the manifest says `skip: true`)");
    }
    out.push('\n');
    out
}

/// Checks as rows, environments as columns.
fn grid(plan: &Plan, checks: &[(&Pair, Vec<&Pair>)]) -> String {
    let mut builder = Builder::default();
    let mut header = vec!["Check".to_owned(), "Kind".to_owned(), "Command".to_owned()];
    header.extend(plan.environments.iter().map(|e| e.name.clone()));
    builder.push_record(header);
    for (first, pairs) in checks {
        let mut row = vec![
            first.check.clone(),
            first.kind.clone(),
            shorten(&first.command, 48),
        ];
        let by_env: HashMap<&str, &Pair> =
            pairs.iter().map(|p| (p.environment.as_str(), *p)).collect();
        for env in &plan.environments {
            let cell = by_env.get(env.name.as_str()).map_or_else(
                || "–".to_owned(),
                |p| match p.shards {
                    n if n > 1 => format!("{} ×{n}", role(p)),
                    _ => role(p).to_owned(),
                },
            );
            row.push(cell);
        }
        builder.push_record(row);
    }
    let mut table = builder.build();
    table.with(Style::sharp());
    table.to_string()
}

/// One line per check (its kind and command), then the environments of each role.
fn lines(checks: &[(&Pair, Vec<&Pair>)], environments: usize) -> String {
    let mut out = String::new();
    for (first, pairs) in checks {
        let _ = write!(
            out,
            "{} ({}): {}",
            first.check,
            first.kind,
            shorten(&first.command, 48)
        );
        for wanted in ["required", "optional", "manual"] {
            let envs: Vec<&str> = pairs
                .iter()
                .filter(|p| role(p) == wanted)
                .map(|p| p.environment.as_str())
                .collect();
            if envs.len() == environments {
                let _ = write!(out, "\n    {wanted} in all {environments} environments");
            } else if !envs.is_empty() {
                let _ = write!(out, "\n    {wanted} in {}: {}", envs.len(), envs.join(", "));
            }
        }
        out.push('\n');
    }
    out.pop();
    out
}

fn role(pair: &Pair) -> &'static str {
    match (pair.manual, pair.required) {
        (true, _) => "manual",
        (false, true) => "required",
        (false, false) => "optional",
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn shorten(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() <= max && !text.contains('\n') {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::manifest::from_yaml_text;

    fn plan_of(environments: usize) -> Plan {
        let envs: String = (0..environments)
            .map(|i| format!("  - name: e{i}\n"))
            .collect();
        let text = format!(
            "version: 1\nenvironments:\n{envs}checks:\n  - {{ id: unit, run: cargo test }}\n  \
             - {{ id: smoke, run: ./smoke, environment: [e0, e1], required: false }}\n  \
             - {{ id: review, assert: it reads well }}\n"
        );
        let manifest = from_yaml_text(Path::new("verify-matrix.yml"), &text).unwrap();
        super::super::plan(&manifest, None)
    }

    #[test]
    fn a_narrow_plan_is_a_grid() {
        assert_eq!(
            render(&plan_of(2)),
            "┌────────┬────────┬───────────────┬──────────┬──────────┐\n\
             │ Check  │ Kind   │ Command       │ e0       │ e1       │\n\
             ├────────┼────────┼───────────────┼──────────┼──────────┤\n\
             │ unit   │ run    │ cargo test    │ required │ required │\n\
             │ smoke  │ run    │ ./smoke       │ optional │ optional │\n\
             │ review │ assert │ it reads well │ manual   │ manual   │\n\
             └────────┴────────┴───────────────┴──────────┴──────────┘\n\
             3 checks × 2 environments = 4 pairs to run, 2 manual\n"
        );
    }

    #[test]
    fn a_wide_plan_is_one_line_per_check() {
        assert_eq!(
            render(&plan_of(MAX_GRID_ENVIRONMENTS + 1)),
            "unit (run): cargo test\n    required in all 13 environments\n\
             smoke (run): ./smoke\n    optional in 2: e0, e1\n\
             review (assert): it reads well\n    manual in all 13 environments\n\
             3 checks × 13 environments = 15 pairs to run, 13 manual\n"
        );
    }
}

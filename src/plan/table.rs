//! `plan --format table`: the matrix for people, checks as rows and environments as
//! columns.

use tabled::builder::Builder;
use tabled::settings::Style;

use super::Plan;

/// Renders the plan as a terminal table followed by a one-line count.
pub fn render(plan: &Plan) -> String {
    let mut builder = Builder::default();
    let mut header = vec!["Check".to_owned(), "Kind".to_owned(), "Command".to_owned()];
    header.extend(plan.environments.iter().map(|e| e.name.clone()));
    builder.push_record(header);
    let mut seen: Vec<&str> = Vec::new();
    for pair in &plan.pairs {
        if seen.contains(&pair.check.as_str()) {
            continue;
        }
        seen.push(&pair.check);
        let mut row = vec![
            pair.check.clone(),
            pair.kind.clone(),
            shorten(&pair.command, 48),
        ];
        for env in &plan.environments {
            let cell = plan
                .pairs
                .iter()
                .find(|p| p.check == pair.check && p.environment == env.name)
                .map_or("–", |p| match (p.manual, p.required) {
                    (true, _) => "manual",
                    (false, true) => "required",
                    (false, false) => "optional",
                });
            row.push(cell.to_owned());
        }
        builder.push_record(row);
    }
    let mut table = builder.build();
    table.with(Style::sharp());
    let runnable = plan.pairs.iter().filter(|p| !p.manual).count();
    let manual = plan.pairs.len() - runnable;
    let mut out = format!(
        "{table}\n{} check{} × {} environment{} = {runnable} pair{} to run",
        seen.len(),
        plural(seen.len()),
        plan.environments.len(),
        plural(plan.environments.len()),
        plural(runnable),
    );
    if manual > 0 {
        out.push_str(&format!(", {manual} manual"));
    }
    if plan.skip {
        out.push_str(" (SKIPPED: the manifest says `skip: true`)");
    }
    out.push('\n');
    out
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

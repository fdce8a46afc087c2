//! The check run (DESIGN.md §6): on the head commit, completed, with the verdict as its
//! conclusion, the matrix as its summary, the failure details as its text and one
//! annotation per failed or missing pair at the manifest line that defines the check.
//! GitHub takes at most 50 annotations per request: the create carries the first 50,
//! and each update (PATCH) the next 50, which GitHub adds to the ones it has.
//!
//! At the start of a workflow run `publish --pending` creates the check run
//! `in_progress`, so a run that is cancelled or crashes leaves a check that blocks, never
//! a green one. The report completes that check run (found by its external id, which
//! names the manifest and the workflow run) instead of creating a second one.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::client::{ApiError, GitHub};
use crate::render::tests_view;
use crate::render::text::plural;
use crate::results::{Report, RowResult, Verdict};
use crate::untrusted::cut;

/// The check run's name unless `--check-name` says otherwise.
pub const DEFAULT_NAME: &str = "Environment Verification Matrix";
/// GitHub's limit on the summary and on the text, in bytes.
pub const OUTPUT_LIMIT: usize = 65_535;
/// GitHub's limit on annotations per request.
pub const ANNOTATIONS_PER_REQUEST: usize = 50;
/// GitHub's limit on an annotation's title.
const TITLE_LIMIT: usize = 255;
/// GitHub's limit on an annotation's message, in bytes.
const MESSAGE_LIMIT: usize = 64 * 1024;

/// What the manifest says about a check, for its annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckSite {
    /// The line that defines the check.
    pub line: usize,
    pub required: bool,
}

/// A check run to publish.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckRunPlan {
    /// `owner/name`.
    pub repository: String,
    pub name: String,
    pub head_sha: String,
    /// Names this publication's check run, so a create whose answer was lost is found
    /// instead of made twice.
    pub external_id: String,
    pub details_url: Option<String>,
    /// The conclusion of a completed check run; `None` for one in progress.
    pub conclusion: Option<&'static str>,
    /// The external-id prefix of this workflow run's check runs (any attempt): an open
    /// one (the pending mark) is completed instead of creating another.
    pub adopt: Option<String>,
    pub title: String,
    pub summary: String,
    pub text: String,
    pub annotations: Vec<Value>,
}

/// One request of the check run: the create, then one update per further 50
/// annotations. `{id}` stands for the created check run's id in an update's path.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub method: &'static str,
    pub path: String,
    pub body: Value,
}

impl CheckRunPlan {
    /// Every request, in order.
    pub fn requests(&self) -> Vec<Request> {
        let mut chunks = self.annotations.chunks(ANNOTATIONS_PER_REQUEST);
        let output = |annotations: &[Value]| {
            let mut output = json!({ "title": self.title, "summary": self.summary });
            if !self.text.is_empty() {
                output["text"] = json!(self.text);
            }
            if !annotations.is_empty() {
                output["annotations"] = json!(annotations);
            }
            output
        };
        let mut create = json!({
            "name": self.name,
            "head_sha": self.head_sha,
            "external_id": self.external_id,
            "output": output(chunks.next().unwrap_or_default()),
        });
        match self.conclusion {
            Some(conclusion) => {
                create["status"] = json!("completed");
                create["conclusion"] = json!(conclusion);
            }
            None => create["status"] = json!("in_progress"),
        }
        if let Some(url) = &self.details_url {
            create["details_url"] = json!(url);
        }
        let mut requests = vec![Request {
            method: "POST",
            path: format!("/repos/{}/check-runs", self.repository),
            body: create,
        }];
        requests.extend(chunks.map(|chunk| Request {
            method: "PATCH",
            path: format!("/repos/{}/check-runs/{{id}}", self.repository),
            body: json!({ "output": output(chunk) }),
        }));
        requests
    }
}

/// The conclusion for a report: its verdict's, or `cancelled` for a report made after
/// the workflow run was cancelled.
pub fn conclusion(report: &Report) -> &'static str {
    if report.cancelled {
        return "cancelled";
    }
    match report.verdict {
        Verdict::Verified => "success",
        // Neutral does not block a merge: `fail-on: new` accepted pre-existing failures.
        Verdict::NotVerified if report.failures_accepted() => "neutral",
        Verdict::NotVerified => "failure",
        Verdict::Skipped => "neutral",
    }
}

/// The one-line verdict used as the check run's title.
pub fn title(report: &Report) -> String {
    match report.verdict {
        Verdict::Verified => {
            // What passed, counted as passed; an optional check's trouble said apart.
            let passed = report
                .rows
                .iter()
                .filter(|r| r.result == RowResult::Pass)
                .count();
            let optional = report
                .rows
                .iter()
                .filter(|r| !r.required && r.result != RowResult::Pass)
                .count()
                + report.missing.iter().filter(|m| !m.required).count();
            let mut title = format!(
                "VERIFIED: {passed} {} passed in {}",
                plural(passed, "check", "checks"),
                report.tested_list()
            );
            if optional > 0 {
                title.push_str(&format!(
                    "; {optional} optional {} did not pass (does not block)",
                    plural(optional, "check", "checks")
                ));
            }
            title
        }
        Verdict::Skipped => "SKIPPED: the manifest says skip: true".to_owned(),
        Verdict::NotVerified => {
            let first = report.reasons.first().map_or("", String::as_str);
            let more = report.reasons.len().saturating_sub(1);
            let mut title = if report.failures_accepted() {
                format!("NOT VERIFIED (only failures the base has too; fail-on: new): {first}")
            } else {
                format!("NOT VERIFIED: {first}")
            };
            if more > 0 {
                title.push_str(&format!(" (and {more} more)"));
            }
            cut(&title, 1000)
        }
    }
}

/// One annotation per failed or missing pair, at the check's manifest line (line 1 when
/// the manifest is not at hand). A failure of an optional check is a warning.
pub fn annotations(report: &Report, sites: &HashMap<String, CheckSite>) -> Vec<Value> {
    let path = &report.manifest.path;
    let site = |check: &str| sites.get(check).copied();
    let annotation = |check: &str, level: &str, title: String, message: String| {
        let line = site(check).map_or(1, |s| s.line);
        json!({
            "path": path,
            "start_line": line,
            "end_line": line,
            "annotation_level": level,
            "title": cut(&title, TITLE_LIMIT),
            "message": cut(&message, MESSAGE_LIMIT),
        })
    };
    let folder = tests_view::manifest_folder(path);
    let mut out = Vec::new();
    for row in report.rows.iter().filter(|r| r.result == RowResult::Fail) {
        let level = if row.required { "failure" } else { "warning" };
        // The summary usually gives the exit code already: say it once.
        let summary = &row.detail.summary;
        let message = if summary.contains(&format!("exit {}", row.exit_code)) {
            summary.to_string()
        } else {
            let expected = row
                .required_exit_code
                .map_or_else(String::new, |code| format!(" (required {code})"));
            format!("exit {}{expected}: {summary}", row.exit_code)
        };
        let title = if row.required {
            format!("{} failed in {}", row.check, row.environment)
        } else {
            format!("{} (optional) failed in {}", row.check, row.environment)
        };
        out.push(annotation(&row.check, level, title, message));
        test_annotations(row, level, &folder, &mut out, &annotation);
    }
    for missing in &report.missing {
        let level = match site(&missing.check) {
            Some(CheckSite {
                required: false, ..
            }) => "warning",
            _ => "failure",
        };
        out.push(annotation(
            &missing.check,
            level,
            format!("{}: no result in {}", missing.check, missing.environment),
            missing.reason.clone(),
        ));
    }
    out
}

/// The most failing tests of one pair annotated.
const TESTS_ANNOTATED: usize = 50;

/// One annotation per failing test of a failed pair, at the test's file and line
/// (relative to the manifest's `folder`), or at the check's manifest line when the
/// report gave no place.
fn test_annotations(
    row: &crate::results::Row,
    level: &str,
    folder: &str,
    out: &mut Vec<Value>,
    at_manifest: &impl Fn(&str, &str, String, String) -> Value,
) {
    for case in tests_view::failing(&row.detail).take(TESTS_ANNOTATED) {
        // Its record on the base branch, and whether the quarantine holds it back.
        let title = format!(
            "{} failed in {} ({}){}{}",
            tests_view::test_name(case),
            row.environment,
            row.check,
            tests_view::history_note(case),
            if case.quarantined {
                " (quarantined)"
            } else {
                ""
            }
        );
        let mut message = case.message.as_deref().unwrap_or("failed").to_owned();
        if let Some(output) = &case.output {
            message.push_str("\n\n");
            message.push_str(output);
        }
        match (&case.file, case.line) {
            (Some(file), line) if tests_view::is_safe_path(file) => {
                let line = line.unwrap_or(1).max(1);
                out.push(json!({
                    "path": format!("{folder}{file}"),
                    "start_line": line,
                    "end_line": line,
                    "annotation_level": level,
                    "title": cut(&title, TITLE_LIMIT),
                    "message": cut(&message, MESSAGE_LIMIT),
                }));
            }
            _ => out.push(at_manifest(&row.check, level, title, message)),
        }
    }
}

/// What publishing the check run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRunOutcome {
    pub url: String,
    pub requests: usize,
    /// The run's pending check run was completed (rather than a new one created).
    pub completed_pending: bool,
}

/// Publishes `plan`: the create (or the completion of this workflow run's pending check
/// run), then the updates carrying the other annotations.
pub async fn publish(gh: &GitHub, plan: &CheckRunPlan) -> Result<CheckRunOutcome, ApiError> {
    let requests = plan.requests();
    let (create, updates) = requests.split_first().expect("a plan has its create");
    let pending = match (&plan.adopt, plan.conclusion) {
        // A token that cannot list check runs finds no pending one; the create says
        // whether it may write.
        (Some(prefix), Some(_)) => match listed(gh, plan).await {
            Ok(runs) => runs
                .into_iter()
                .find(|run| is_open(run) && has_prefix(run, prefix)),
            Err(ApiError::Denied { .. }) => None,
            Err(e) => return Err(e),
        },
        _ => None,
    };
    let created = match pending.as_ref().and_then(|run| run.get("id")?.as_u64()) {
        Some(id) => {
            let mut body = create.body.clone();
            if let Some(fields) = body.as_object_mut() {
                fields.remove("name");
                fields.remove("head_sha");
            }
            gh.patch(
                &format!("/repos/{}/check-runs/{id}", plan.repository),
                &body,
                "completing the pending check run",
            )
            .await?
        }
        None => {
            gh.create(&create.path, &create.body, "creating the check run", || {
                find(gh, plan)
            })
            .await?
        }
    };
    let id = created
        .get("id")
        .and_then(Value::as_u64)
        .ok_or_else(|| ApiError::Failed {
            what: "creating the check run".to_owned(),
            message: "GitHub's answer has no check run id".to_owned(),
        })?;
    for (i, update) in updates.iter().enumerate() {
        gh.patch(
            &update.path.replace("{id}", &id.to_string()),
            &update.body,
            &format!(
                "adding annotations to the check run ({}/{})",
                i + 1,
                updates.len()
            ),
        )
        .await?;
    }
    Ok(CheckRunOutcome {
        url: created
            .get("html_url")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        requests: requests.len(),
        completed_pending: pending.is_some(),
    })
}

/// This publication's check run, if a create whose answer was lost made it.
async fn find(gh: &GitHub, plan: &CheckRunPlan) -> Result<Option<Value>, ApiError> {
    Ok(listed(gh, plan)
        .await?
        .into_iter()
        .find(|run| run.get("external_id").and_then(Value::as_str) == Some(&plan.external_id)))
}

fn is_open(run: &Value) -> bool {
    matches!(
        run.get("status").and_then(Value::as_str),
        Some("queued" | "in_progress" | "waiting" | "requested" | "pending")
    )
}

fn has_prefix(run: &Value, prefix: &str) -> bool {
    run.get("external_id")
        .and_then(Value::as_str)
        .is_some_and(|id| id.starts_with(prefix))
}

/// The check runs of the plan's name on its commit (the first 100).
async fn listed(gh: &GitHub, plan: &CheckRunPlan) -> Result<Vec<Value>, ApiError> {
    let name = super::client::query_value(&plan.name);
    let listed = gh
        .get(
            &format!(
                "/repos/{}/commits/{}/check-runs?check_name={name}&filter=all&per_page=100",
                plan.repository, plan.head_sha
            ),
            "listing the commit's check runs",
        )
        .await?;
    Ok(listed
        .get("check_runs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

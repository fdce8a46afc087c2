//! The jobs of a workflow run, as GitHub lists them (`GET /repos/{owner}/{repo}/actions/
//! runs/{run_id}/attempts/{attempt}/jobs`): what the report checks each leg's results
//! against, since the pull request's code wrote the results but not this list.

use serde_json::Value;

use super::client::{ApiError, GitHub};
use crate::results::jobs::RunJob;

/// The most pages of 100 jobs read per attempt (GitHub's matrix allows 256 jobs).
const MAX_PAGES: u32 = 10;

/// Every job of `attempts` of run `run_id` of `repo`.
pub async fn run_jobs(
    github: &GitHub,
    repo: &str,
    run_id: &str,
    attempts: &[u32],
) -> Result<Vec<RunJob>, ApiError> {
    let mut jobs = Vec::new();
    for &attempt in attempts {
        for page in 1..=MAX_PAGES {
            let path = format!(
                "/repos/{repo}/actions/runs/{run_id}/attempts/{attempt}/jobs?per_page=100&page={page}"
            );
            let listed = github
                .get(
                    &path,
                    &format!("the jobs of run {run_id} (attempt {attempt})"),
                )
                .await?;
            let page_jobs = listed
                .get("jobs")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            jobs.extend(page_jobs.iter().filter_map(|j| job_of(j, attempt)));
            let total = listed
                .get("total_count")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            if page_jobs.len() < 100 || u64::from(page) * 100 >= total {
                break;
            }
        }
    }
    Ok(jobs)
}

fn job_of(v: &Value, attempt: u32) -> Option<RunJob> {
    let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(RunJob {
        name: text("name")?,
        labels: v
            .get("labels")
            .and_then(Value::as_array)
            .map(|labels| {
                labels
                    .iter()
                    .filter_map(|l| l.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        runner_name: text("runner_name"),
        runner_group_name: text("runner_group_name"),
        status: text("status").unwrap_or_default(),
        conclusion: text("conclusion"),
        run_attempt: v
            .get("run_attempt")
            .and_then(Value::as_u64)
            .and_then(|a| u32::try_from(a).ok())
            .unwrap_or(attempt),
        html_url: text("html_url"),
    })
}

//! The jobs of a workflow run, as GitHub lists them (`GET /repos/{owner}/{repo}/actions/
//! runs/{run_id}/attempts/{attempt}/jobs`): what the report checks each leg's results
//! against, since the pull request's code wrote the results but not this list.

use serde_json::Value;

use super::client::{ApiError, GitHub};
use crate::results::jobs::RunJob;

/// The most pages of 100 jobs read per attempt (GitHub's matrix allows 256 jobs per
/// matrix; a run may have several).
const MAX_PAGES: u32 = 50;

/// Every job of `attempts` of run `run_id` of `repo`. The listing is read whole or not
/// at all: pages are read until one is not full (never trusting `total_count`), and a
/// page that is not a list of jobs, an entry that is no job, or more than 5,000 jobs
/// (50 pages) is an error — a leg left out of the list is a leg not expected.
pub async fn run_jobs(
    github: &GitHub,
    repo: &str,
    run_id: &str,
    attempts: &[u32],
) -> Result<Vec<RunJob>, ApiError> {
    let mut jobs = Vec::new();
    for &attempt in attempts {
        let what = format!("the jobs of run {run_id} (attempt {attempt})");
        let malformed = |message: String| ApiError::Failed {
            what: what.clone(),
            message,
        };
        let mut page = 1;
        loop {
            let path = format!(
                "/repos/{repo}/actions/runs/{run_id}/attempts/{attempt}/jobs?per_page=100&page={page}"
            );
            let listed = github.get(&path, &what).await?;
            let page_jobs = listed
                .get("jobs")
                .and_then(Value::as_array)
                .ok_or_else(|| malformed(format!("page {page} has no list of `jobs`")))?;
            for (index, job) in page_jobs.iter().enumerate() {
                jobs.push(job_of(job, attempt).ok_or_else(|| {
                    malformed(format!(
                        "page {page}, job {index}: not a job (no `name` that is text)"
                    ))
                })?);
            }
            if page_jobs.len() < 100 {
                break;
            }
            if page == MAX_PAGES {
                return Err(malformed(format!(
                    "more than {} jobs: not all could be read",
                    MAX_PAGES * 100
                )));
            }
            page += 1;
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
            .unwrap_or(u64::from(attempt)),
        html_url: text("html_url"),
    })
}

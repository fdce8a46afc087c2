//! Running one environment's share: scheduling up to `--jobs` checks at once, keeping
//! manifest order in every output, and rewriting the result file after every check.

use std::path::{Path, PathBuf};
use std::time::Instant;

use tokio::task::JoinSet;

use crate::manifest::{CheckId, Environment, Manifest};
use crate::results::source::{detect_runner, now_rfc3339};
use crate::results::{
    CheckResult, FORMAT_VERSION, ManifestRef, Outcome, PartialResult, ResultFileError, Source,
    Status, Tool, write_json_atomic,
};

use super::check::CheckJob;

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Where `verify-matrix-<env>.json` and `logs/` go.
    pub out_dir: PathBuf,
    /// Checks run at once (at least 1).
    pub jobs: usize,
    /// Stop starting checks after the first required failure.
    pub fail_fast: bool,
    /// Run only these checks (all when empty).
    pub only: Vec<CheckId>,
}

/// What the run reports as it goes.
#[derive(Debug)]
pub enum RunEvent<'a> {
    Started {
        check: &'a str,
        environment: &'a str,
    },
    Finished {
        result: &'a CheckResult,
    },
}

/// Why a run could not complete its bookkeeping (checks failing is not an error).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    ResultFile(#[from] ResultFileError),
    #[error("failed to write the log of `{check}`: {source}")]
    Log {
        check: String,
        source: std::io::Error,
    },
    #[error("a check task failed: {0}")]
    Task(String),
}

/// The path of the result file for `env` under `out_dir`.
pub fn result_path(out_dir: &Path, env: &str) -> PathBuf {
    out_dir.join(format!("verify-matrix-{env}.json"))
}

/// Runs the checks of `env` (the manifest's automated checks that apply to it, or
/// `options.only`), writing the partial result file as it goes.
pub async fn run_environment(
    manifest: &Manifest,
    env: &Environment,
    source: &Source,
    options: &RunOptions,
    on_event: &(dyn Fn(RunEvent<'_>) + Sync),
) -> Result<PartialResult, RunError> {
    let started = Instant::now();
    let jobs: Vec<CheckJob> = manifest
        .checks_for(&env.name)
        .filter(|c| !c.kind.is_manual())
        .filter(|c| options.only.is_empty() || options.only.contains(&c.id))
        .map(|c| CheckJob::new(manifest, c, env, &options.out_dir))
        .collect();
    let path = result_path(&options.out_dir, env.name.as_str());
    let mut partial = PartialResult {
        format_version: FORMAT_VERSION,
        tool: Tool::current(),
        manifest: ManifestRef {
            path: manifest.path.display().to_string(),
            digest: manifest.digest.clone(),
            content: manifest.content.clone(),
        },
        environment: env.name.to_string(),
        source: source.clone(),
        runner: detect_runner(),
        started_at: now_rfc3339(),
        finished_at: None,
        duration_ms: 0,
        // Until the last check is recorded the file must not claim completeness.
        outcome: Outcome::Interrupted,
        checks: jobs
            .iter()
            .map(|j| j.blank_result(Status::NotRun, "not run: the run did not finish"))
            .collect(),
    };
    write_json_atomic(&path, &partial)?;

    let mut running = JoinSet::new();
    let mut next = 0;
    let mut stop_reason: Option<String> = None;
    let limit = options.jobs.max(1);
    loop {
        while stop_reason.is_none() && next < jobs.len() && running.len() < limit {
            let job = jobs[next].clone();
            on_event(RunEvent::Started {
                check: job.check.id.as_str(),
                environment: env.name.as_str(),
            });
            let index = next;
            running.spawn(async move { (index, job.run().await) });
            next += 1;
        }
        let Some(joined) = running.join_next().await else {
            break;
        };
        let (index, result) = joined.map_err(|e| RunError::Task(e.to_string()))?;
        let result = result.map_err(|source| RunError::Log {
            check: jobs[index].check.id.to_string(),
            source,
        })?;
        on_event(RunEvent::Finished { result: &result });
        let failed = result.required && matches!(result.status, Status::Fail | Status::Error);
        if options.fail_fast && failed && stop_reason.is_none() {
            stop_reason = Some(format!(
                "not run: --fail-fast after `{}` failed",
                result.command_id
            ));
        }
        partial.checks[index] = result;
        partial.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        write_json_atomic(&path, &partial)?;
    }
    if let Some(reason) = &stop_reason {
        for (slot, job) in partial.checks.iter_mut().zip(&jobs).skip(next) {
            *slot = job.blank_result(Status::NotRun, reason);
            on_event(RunEvent::Finished { result: slot });
        }
    }
    partial.outcome = Outcome::Complete;
    partial.finished_at = Some(now_rfc3339());
    partial.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    write_json_atomic(&path, &partial)?;
    Ok(partial)
}

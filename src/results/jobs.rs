//! The run's jobs, as GitHub lists them: what the pull request's code cannot write.
//! Each environment's leg must be one of them — a job whose labels fit the
//! environment's `runs-on` (and, where the result names its runner, that runner) — or
//! its results are not taken.

use serde::{Deserialize, Serialize};

use crate::manifest::{Manifest, runs_on};

/// One job of a workflow run (`GET …/actions/runs/{id}/attempts/{n}/jobs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunJob {
    pub name: String,
    pub labels: Vec<String>,
    pub runner_name: Option<String>,
    pub runner_group_name: Option<String>,
    /// `queued`, `in_progress`, `completed`, …
    pub status: String,
    pub run_attempt: u32,
    /// The job's page, where its log is (not kept in reports).
    #[serde(skip)]
    pub html_url: Option<String>,
}

/// The page of the job that was `environment`'s leg, found by the leg's name as the
/// workflow names it (`run (windows)`, `run (windows, 2)`, or `windows`), when the run's
/// jobs were read: where a leg that left no result shows why.
pub fn leg_job_url(jobs: &Jobs, environment: &str) -> Option<String> {
    let Jobs::Listed { jobs, .. } = jobs else {
        return None;
    };
    let is_leg = |name: &str| {
        name == environment
            || name.contains(&format!("({environment})"))
            || name.contains(&format!("({environment},"))
    };
    jobs.iter()
        .rev()
        .find(|j| is_leg(&j.name))
        .and_then(|j| j.html_url.clone())
        .filter(|url| {
            url.starts_with("https://")
                && url.len() <= 500
                && !url
                    .chars()
                    .any(|c| c.is_whitespace() || matches!(c, '(' | ')' | '<' | '>' | '"'))
        })
}

/// What the cross-check with the run's jobs has to work with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Jobs {
    /// Not under GitHub Actions (a local merge): nothing to check against.
    NotChecked,
    /// The run whose jobs these are, and its jobs.
    Listed { run_id: String, jobs: Vec<RunJob> },
    /// Under Actions, but the jobs could not be read: why.
    Unavailable(String),
}

/// For each of `legs` (environment, its result's run and attempt, the runner name the
/// result records), the job that ran it, or why none did: a leg of another run than
/// the one listed is none of its jobs. Legs of environments without a
/// `runs-on` of literal labels are not checked (`Ok(None)`). Each job is one leg's at
/// most.
pub fn match_legs(
    manifest: &Manifest,
    legs: &[Leg<'_>],
    jobs: &Jobs,
) -> Vec<Result<Option<String>, String>> {
    let mut used = vec![
        false;
        match jobs {
            Jobs::Listed { jobs, .. } => jobs.len(),
            _ => 0,
        }
    ];
    // A leg whose results are in several files is still one leg: one job.
    let mut seen: Vec<(Leg<'_>, Result<Option<String>, String>)> = Vec::new();
    legs.iter()
        .map(|&leg| {
            if let Some((_, done)) = seen.iter().find(|(l, _)| *l == leg) {
                return done.clone();
            }
            let Leg {
                environment: env,
                run_id: leg_run,
                attempt,
                runner,
            } = leg;
            let matched = (|| {
            let Some(runs_on) = manifest.environment(env).and_then(|e| e.runs_on.as_ref()) else {
                return Ok(None);
            };
            let wanted = runs_on::labels(runs_on);
            if wanted.is_empty() || wanted.iter().any(|l| l.contains("${{")) {
                return Ok(None);
            }
            let group = runs_on.get("group").and_then(|g| g.as_str());
            let (run_id, listed) = match jobs {
                Jobs::NotChecked => return Ok(None),
                Jobs::Unavailable(why) => {
                    return Err(format!(
                        "the run's jobs could not be read from GitHub, so where its leg ran cannot be checked: {why}"
                    ));
                }
                Jobs::Listed { run_id, jobs } => (run_id, jobs),
            };
            if let Some(leg_run) = leg_run
                && leg_run != run_id
            {
                return Err(format!(
                    "its results say they are of run {leg_run}, not of run {run_id}, whose jobs were read"
                ));
            }
            let fits = |job: &RunJob| {
                job.status == "completed"
                    && attempt.is_none_or(|a| a == job.run_attempt)
                    && wanted
                        .iter()
                        .all(|w| job.labels.iter().any(|l| l.eq_ignore_ascii_case(w)))
                    && group.is_none_or(|g| job.runner_group_name.as_deref() == Some(g))
                    && runner.is_none_or(|r| job.runner_name.as_deref() == Some(r))
            };
            match listed.iter().enumerate().find(|(i, job)| !used[*i] && fits(job)) {
                Some((i, job)) => {
                    used[i] = true;
                    Ok(Some(job.name.clone()))
                }
                None => Err(format!(
                    "no job of run {run_id}{} that GitHub lists ran it: none labelled {}{} is left ({})",
                    attempt.map(|a| format!(" (attempt {a})")).unwrap_or_default(),
                    wanted.join(", "),
                    runner.map(|r| format!(" on runner `{r}`")).unwrap_or_default(),
                    describe(listed)
                )),
            }
            })();
            seen.push((leg, matched.clone()));
            matched
        })
        .collect()
}

/// One leg as its results describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leg<'a> {
    pub environment: &'a str,
    pub run_id: Option<&'a str>,
    pub attempt: Option<u32>,
    /// The runner's name (`RUNNER_NAME`), when the result records it.
    pub runner: Option<&'a str>,
}

/// The jobs as a short list: `verify (linux) [ubuntu-latest]`.
fn describe(jobs: &[RunJob]) -> String {
    if jobs.is_empty() {
        return "the run lists no jobs".to_owned();
    }
    let listed: Vec<String> = jobs
        .iter()
        .take(8)
        .map(|j| format!("{} [{}]", j.name, j.labels.join(", ")))
        .collect();
    let more = jobs.len().saturating_sub(8);
    if more > 0 {
        format!("jobs: {} and {more} more", listed.join("; "))
    } else {
        format!("jobs: {}", listed.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn job(name: &str, labels: &[&str], runner: &str) -> RunJob {
        RunJob {
            name: name.into(),
            labels: labels.iter().map(|l| l.to_string()).collect(),
            runner_name: Some(runner.into()),
            runner_group_name: Some("GitHub Actions".into()),
            status: "completed".into(),
            run_attempt: 1,
            html_url: Some(format!(
                "https://github.com/o/r/actions/runs/7/job/{}",
                name.len()
            )),
        }
    }

    #[test]
    fn a_missing_legs_job_is_found_by_its_name() {
        let jobs = Jobs::Listed {
            run_id: "7".into(),
            jobs: vec![
                job("plan", &["ubuntu-latest"], "r1"),
                job("run (linux)", &["ubuntu-latest"], "r2"),
                job("run (windows-arm, 2)", &["windows-latest"], "r3"),
                job("run (windows)", &["windows-latest"], "r3"),
            ],
        };
        assert_eq!(
            leg_job_url(&jobs, "windows").as_deref(),
            Some("https://github.com/o/r/actions/runs/7/job/13")
        );
        assert_eq!(
            leg_job_url(&jobs, "windows-arm").as_deref(),
            Some("https://github.com/o/r/actions/runs/7/job/20")
        );
        assert_eq!(leg_job_url(&jobs, "macos"), None);
        assert_eq!(leg_job_url(&Jobs::NotChecked, "windows"), None);
    }

    #[test]
    fn each_leg_is_one_job_whose_labels_fit() {
        let m = crate::manifest::from_yaml_text(
            Path::new("m.yml"),
            "version: 1\nenvironments:\n  - { name: linux, runs-on: ubuntu-latest }\n  - { name: windows, runs-on: windows-latest }\n  - { name: v }\n",
        )
        .unwrap();
        let jobs = Jobs::Listed {
            run_id: "7".into(),
            jobs: vec![
                job("plan", &["ubuntu-latest"], "GitHub Actions 1"),
                job("run (linux)", &["ubuntu-latest"], "GitHub Actions 2"),
            ],
        };
        let leg = |environment, runner| Leg {
            environment,
            run_id: Some("7"),
            attempt: Some(1),
            runner,
        };
        let matched = match_legs(
            &m,
            &[
                leg("linux", Some("GitHub Actions 2")),
                leg("windows", None),
                leg("v", None),
            ],
            &jobs,
        );
        assert_eq!(matched[0], Ok(Some("run (linux)".into())));
        let why = matched[1].clone().unwrap_err();
        assert!(why.starts_with("no job of run 7 (attempt 1) that GitHub lists ran it: none labelled windows-latest is left"), "{why}");
        assert_eq!(matched[2], Ok(None));
        // The same job is one leg's only; a leg in several files is one leg.
        let legs = [
            leg("linux", Some("GitHub Actions 1")),
            leg("linux", Some("GitHub Actions 2")),
            leg("linux", Some("GitHub Actions 2")),
            leg("linux", Some("GitHub Actions 3")),
        ];
        let matched = match_legs(&m, &legs, &jobs);
        assert_eq!(matched[0], Ok(Some("plan".into())));
        assert_eq!(matched[1], Ok(Some("run (linux)".into())));
        assert_eq!(matched[2], matched[1]);
        assert!(matched[3].is_err());
        let other_run = Leg {
            run_id: Some("8"),
            ..leg("linux", None)
        };
        let why = match_legs(&m, &[other_run], &jobs)[0].clone().unwrap_err();
        assert!(why.contains("of run 8, not of run 7"), "{why}");
        let unavailable = match_legs(
            &m,
            &[Leg {
                run_id: None,
                attempt: None,
                ..leg("linux", None)
            }],
            &Jobs::Unavailable("401".into()),
        );
        assert!(
            unavailable[0]
                .clone()
                .unwrap_err()
                .contains("could not be read from GitHub")
        );
    }
}

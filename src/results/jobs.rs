//! The run's jobs, as GitHub lists them: what the pull request's code cannot write.
//! Under Actions each leg of an environment must be one job that ran it, or its results
//! are not taken: a job that **ran** (completed with `success` or
//! `failure`: not skipped, not cancelled, not neutral), under the leg's **name** (the
//! plan's matrix names it: `run (linux)`, `run (linux, 2/3)`), on the **runner** the
//! result records (a result that records none is refused), in the run and **attempt**
//! the result records (a result that records neither is refused), and whose labels fit
//! the environment's `runs-on`. Each job is one leg's at most, so the `plan` and
//! `report` jobs, named otherwise, are never legs.

use serde::{Deserialize, Serialize};

use crate::manifest::{Manifest, Shard, runs_on};

/// One job of a workflow run (`GET …/actions/runs/{id}/attempts/{n}/jobs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunJob {
    pub name: String,
    pub labels: Vec<String>,
    pub runner_name: Option<String>,
    pub runner_group_name: Option<String>,
    /// `queued`, `in_progress`, `completed`, …
    pub status: String,
    /// Once completed: `success`, `failure`, `cancelled`, `skipped`, `neutral`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<String>,
    /// The run's attempt; under GitLab, the job's own id (each retry is a job of its
    /// own).
    pub run_attempt: u64,
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
    jobs.iter()
        .rev()
        .find(|j| names_environment(&j.name, environment))
        .and_then(|j| j.html_url.clone())
        .filter(|url| {
            url.starts_with("https://")
                && url.len() <= 500
                && !url
                    .chars()
                    .any(|c| c.is_whitespace() || matches!(c, '(' | ')' | '<' | '>' | '"'))
        })
}

/// The values a job's name gives in its parentheses (`run (linux, 2/3)` → `linux`,
/// `2/3`), as GitHub names a matrix job, or its brackets (`verify-matrix:run: [linux,
/// 2/3]`) as GitLab does; the whole name when it has none.
fn name_parts(name: &str) -> Vec<&str> {
    if let Some(inside) = name
        .strip_suffix(']')
        .and_then(|n| n.rfind(": [").map(|at| &n[at + 3..]))
    {
        // GitLab's matrix job: `verify-matrix:run: [linux, 1/2]`.
        return inside.split(',').map(str::trim).collect();
    }
    match name
        .strip_suffix(')')
        .and_then(|n| n.rfind(" (").map(|at| &n[at + 2..]))
    {
        Some(inside) => inside.split(", ").collect(),
        None => vec![name],
    }
}

/// Whether a job's name is one of `environment`'s legs: the environment is its name, or
/// the first of its matrix values.
fn names_environment(name: &str, environment: &str) -> bool {
    name_parts(name).first() == Some(&environment)
}

/// Whether a job's name is the leg `shard` of `environment` (the whole environment when
/// `None`): the environment first, then for a shard `K/N` (as the plan's workflow names
/// it) or `K` and `N` one after the other (GitHub's own names of the matrix values).
pub fn names_leg(name: &str, environment: &str, shard: Option<Shard>) -> bool {
    let parts = name_parts(name);
    if parts.first() != Some(&environment) {
        return false;
    }
    let rest = &parts[1..];
    match shard {
        // The whole environment: no shard's leg.
        None => !rest.iter().any(|p| {
            p.split_once('/').is_some_and(|(k, n)| {
                !k.is_empty()
                    && !n.is_empty()
                    && k.bytes().all(|b| b.is_ascii_digit())
                    && n.bytes().all(|b| b.is_ascii_digit())
            })
        }),
        Some(shard) => {
            let (k, n) = (shard.index.to_string(), shard.count.to_string());
            rest.iter().any(|p| *p == format!("{k}/{n}"))
                || rest.windows(2).any(|w| w[0] == k && w[1] == n)
        }
    }
}

/// What the cross-check with the run's jobs has to work with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Jobs {
    /// Not under GitHub Actions (a local merge): nothing to check against.
    NotChecked,
    /// The run whose jobs these are, and its jobs; `gitlab`: a GitLab pipeline's, whose
    /// jobs' tags are not the manifest's `runs-on` labels.
    Listed {
        run_id: String,
        jobs: Vec<RunJob>,
        gitlab: bool,
    },
    /// Under Actions, but the jobs could not be read: why.
    Unavailable(String),
}

/// For each of `legs` (environment, shard, its result's run and attempt, the runner
/// name the result records), the job that ran it, or why none did. Nothing is checked
/// when the run's jobs are not at hand (`Jobs::NotChecked`, a merge outside Actions),
/// nor a result of an environment the manifest does not declare (never judged). Each job is one
/// leg's at most; a leg whose results are in several files is one leg.
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
    let mut seen: Vec<(Leg<'_>, Result<Option<String>, String>)> = Vec::new();
    legs.iter()
        .map(|&leg| {
            // One leg whatever its files say of their checks: two files of one job are
            // taken or refused together (and, taken, their differences are a conflict).
            let same = |l: &Leg<'_>| {
                Leg {
                    all_passed: false,
                    ..*l
                } == Leg {
                    all_passed: false,
                    ..leg
                }
            };
            if let Some((_, done)) = seen.iter().find(|(l, _)| same(l)) {
                return done.clone();
            }
            let matched = match_leg(manifest, leg, jobs, &mut used);
            seen.push((leg, matched.clone()));
            matched
        })
        .collect()
}

/// The job that ran `leg`, among those not `used` yet (marked used when found).
fn match_leg(
    manifest: &Manifest,
    leg: Leg<'_>,
    jobs: &Jobs,
    used: &mut [bool],
) -> Result<Option<String>, String> {
    let Leg {
        environment: env,
        shard,
        run_id: leg_run,
        attempt,
        runner,
        all_passed,
    } = leg;
    let Some(declared) = manifest.environment(env) else {
        return Ok(None);
    };
    let (run_id, listed, gitlab) = match jobs {
        Jobs::NotChecked => return Ok(None),
        Jobs::Unavailable(why) => {
            return Err(format!(
                "the run's jobs could not be read, so where its leg ran cannot be checked: {why}"
            ));
        }
        Jobs::Listed {
            run_id,
            jobs,
            gitlab,
        } => (run_id, jobs, *gitlab),
    };
    let (service, run) = if gitlab {
        ("GitLab", "pipeline")
    } else {
        ("GitHub", "run")
    };
    // What the result must record for its job to be found: nothing is taken on trust.
    let mut unrecorded = Vec::new();
    if leg_run.is_none_or(str::is_empty) {
        unrecorded.push(if gitlab {
            "its pipeline (`source.run_id`)"
        } else {
            "its workflow run (`source.run_id`)"
        });
    }
    if attempt.is_none() {
        unrecorded.push(if gitlab {
            "its job (`runner.gitlab.job_id`)"
        } else {
            "its attempt (`source.run_attempt`)"
        });
    }
    if runner.is_none_or(|r| r.trim().is_empty()) {
        unrecorded.push(if gitlab {
            "its runner (`runner.gitlab.runner_description`)"
        } else {
            "its runner's name (`runner.actions.name`)"
        });
    }
    if !unrecorded.is_empty() {
        return Err(format!(
            "its results do not record {}, so no job of {run} {run_id} can be shown to have run it",
            unrecorded.join(", ")
        ));
    }
    let legs = manifest.legs(declared);
    if legs > 1 && shard.is_none() {
        return Err(format!(
            "the plan runs {env} in {legs} shards: a result of the whole environment is no leg of the run"
        ));
    }
    if let Some(leg_run) = leg_run
        && leg_run != run_id
    {
        return Err(format!(
            "its results say they are of {run} {leg_run}, not of {run} {run_id}, whose jobs were read"
        ));
    }
    // Labels with expressions are the workflow's to fill: only literal ones are checked
    // (an environment without `runs-on` runs where the workflow says: its name, runner,
    // run and attempt are still checked).
    let runs_on = declared.runs_on.as_ref();
    let wanted: Vec<String> = runs_on
        .filter(|_| !gitlab)
        .map(runs_on::labels)
        .unwrap_or_default()
        .into_iter()
        .filter(|l| !l.contains("${{"))
        .collect();
    let group = runs_on
        .and_then(|r| r.get("group"))
        .and_then(|g| g.as_str())
        .filter(|_| !gitlab);
    let fits = |job: &RunJob| {
        job.status == "completed"
            && matches!(job.conclusion.as_deref(), Some("success" | "failure"))
            && names_leg(&job.name, env, shard)
            && attempt == Some(job.run_attempt)
            && runner.is_some_and(|r| job.runner_name.as_deref() == Some(r))
            && wanted
                .iter()
                .all(|w| job.labels.iter().any(|l| l.eq_ignore_ascii_case(w)))
            && group.is_none_or(|g| job.runner_group_name.as_deref() == Some(g))
    };
    // A failed GitLab job whose results say every check passed: not that job's run.
    let contradicted =
        |job: &RunJob| gitlab && all_passed && job.conclusion.as_deref() == Some("failure");
    if let Some(job) = listed
        .iter()
        .enumerate()
        .find(|(i, job)| !used[*i] && fits(job) && contradicted(job))
        .map(|(_, job)| job)
    {
        return Err(format!(
            "GitLab says its job `{}` (id {}) failed, but its results say every check passed: they are not what that job's run wrote",
            crate::untrusted::cut(&job.name, 100),
            job.run_attempt
        ));
    }
    match listed
        .iter()
        .enumerate()
        .find(|(i, job)| !used[*i] && fits(job))
    {
        Some((i, job)) => {
            used[i] = true;
            Ok(Some(job.name.clone()))
        }
        None => {
            let leg_name = match shard {
                Some(shard) => format!("{env} (shard {shard})"),
                None => env.to_owned(),
            };
            Err(format!(
                "no job of {run} {run_id}{} that {service} lists ran it: none named for {leg_name}{}{} completed with success or failure on runner `{}` ({})",
                attempt
                    .map(|a| if gitlab {
                        format!(" with id {a}")
                    } else {
                        format!(" (attempt {a})")
                    })
                    .unwrap_or_default(),
                if wanted.is_empty() { "" } else { ", labelled " },
                wanted.join(", "),
                runner.unwrap_or_default(),
                describe(listed)
            ))
        }
    }
}

/// One leg as its results describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leg<'a> {
    pub environment: &'a str,
    /// The shard of the environment the leg ran (`None`: all of it).
    pub shard: Option<Shard>,
    pub run_id: Option<&'a str>,
    /// The run's attempt; under GitLab, the job's id (`CI_JOB_ID`).
    pub attempt: Option<u64>,
    /// The runner's name (`RUNNER_NAME`), when the result records it.
    pub runner: Option<&'a str>,
    /// Every check of the leg's results passed. Under GitLab a job fails exactly when
    /// its `run` does, so a failed job cannot have written such results.
    pub all_passed: bool,
}

/// The jobs as a short list: `verify (linux) [ubuntu-latest]`.
fn describe(jobs: &[RunJob]) -> String {
    if jobs.is_empty() {
        return "the run lists no jobs".to_owned();
    }
    let listed: Vec<String> = jobs
        .iter()
        .take(8)
        .map(|j| {
            format!(
                "{} [{}] {} on {}",
                j.name,
                j.labels.join(", "),
                j.conclusion.as_deref().unwrap_or(&j.status),
                j.runner_name
                    .as_deref()
                    .filter(|r| !r.is_empty())
                    .unwrap_or("no runner")
            )
        })
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
            conclusion: Some("success".into()),
            run_attempt: 1,
            html_url: Some(format!(
                "https://github.com/o/r/actions/runs/7/job/{}",
                name.len()
            )),
        }
    }

    #[test]
    fn gitlabs_matrix_job_names_name_their_leg() {
        let shard = |k, n| Some(Shard { index: k, count: n });
        assert!(names_leg("verify-matrix:run: [linux]", "linux", None));
        assert!(names_leg(
            "verify-matrix:run: [big, 1/2]",
            "big",
            shard(1, 2)
        ));
        // gitlab-ci-local writes the values without the space.
        assert!(names_leg(
            "verify-matrix:run: [big,2/2]",
            "big",
            shard(2, 2)
        ));
        assert!(!names_leg("verify-matrix:run: [big, 1/2]", "big", None));
        assert!(!names_leg(
            "verify-matrix:run: [big, 1/2]",
            "big",
            shard(2, 2)
        ));
        assert!(!names_leg("verify-matrix:run: [linux-arm]", "linux", None));
        assert!(!names_leg("verify-matrix:report", "linux", None));
    }

    #[test]
    fn a_missing_legs_job_is_found_by_its_name() {
        let jobs = Jobs::Listed {
            gitlab: false,
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
    fn a_legs_name_is_its_environment_and_shard() {
        let shard = |index, count| Some(Shard { index, count });
        assert!(names_leg("run (linux)", "linux", None));
        assert!(names_leg("linux", "linux", None));
        assert!(names_leg("run (linux, ubuntu-latest)", "linux", None));
        assert!(names_leg("run (linux, 2/3)", "linux", shard(2, 3)));
        assert!(names_leg(
            "run (linux, ubuntu-latest, 2, 3)",
            "linux",
            shard(2, 3)
        ));
        assert!(!names_leg("run (linux, 1/3)", "linux", shard(2, 3)));
        assert!(!names_leg("run (linux)", "linux", shard(2, 3)));
        assert!(!names_leg("run (windows)", "linux", None));
        assert!(!names_leg("plan", "linux", None));
        assert!(!names_leg("run (linux-arm)", "linux", None));
    }

    #[test]
    fn each_leg_is_one_job_that_ran_it_on_its_runner() {
        let m = crate::manifest::from_yaml_text(
            Path::new("m.yml"),
            "version: 1\nenvironments:\n  - { name: linux, runs-on: ubuntu-latest }\n  - { name: windows, runs-on: windows-latest }\n  - { name: v }\n",
        )
        .unwrap();
        let skipped = RunJob {
            conclusion: Some("skipped".into()),
            runner_name: None,
            ..job("run (windows)", &["windows-latest"], "")
        };
        let jobs = Jobs::Listed {
            gitlab: false,
            run_id: "7".into(),
            jobs: vec![
                job("plan", &["ubuntu-latest"], "GitHub Actions 1"),
                job("run (linux)", &["ubuntu-latest"], "GitHub Actions 2"),
                skipped,
            ],
        };
        let leg = |environment, runner| Leg {
            environment,
            shard: None,
            run_id: Some("7"),
            attempt: Some(1),
            all_passed: false,
            runner,
        };
        let matched = match_legs(
            &m,
            &[
                leg("linux", Some("GitHub Actions 2")),
                leg("windows", Some("GitHub Actions 3")),
                leg("v", None),
            ],
            &jobs,
        );
        assert_eq!(matched[0], Ok(Some("run (linux)".into())));
        let why = matched[1].clone().unwrap_err();
        assert!(why.starts_with("no job of run 7 (attempt 1) that GitHub lists ran it: none named for windows, labelled windows-latest completed with success or failure on runner `GitHub Actions 3`"), "{why}");
        assert!(
            why.contains("run (windows) [windows-latest] skipped on no runner"),
            "{why}"
        );
        // An environment without `runs-on` runs in a job of the run all the same.
        let why = matched[2].clone().unwrap_err();
        assert!(why.contains("do not record its runner's name"), "{why}");
        // The plan job is never a leg; a leg in several files is one leg; one job is
        // one leg's only.
        let legs = [
            leg("linux", Some("GitHub Actions 1")),
            leg("linux", Some("GitHub Actions 2")),
            leg("linux", Some("GitHub Actions 2")),
        ];
        let matched = match_legs(&m, &legs, &jobs);
        assert!(matched[0].is_err());
        assert_eq!(matched[1], Ok(Some("run (linux)".into())));
        assert_eq!(matched[2], matched[1]);
        // What a result must record.
        for (leg, missing) in [
            (leg("linux", None), "its runner's name"),
            (leg("linux", Some(" ")), "its runner's name"),
            (
                Leg {
                    run_id: None,
                    ..leg("linux", Some("GitHub Actions 2"))
                },
                "its workflow run",
            ),
            (
                Leg {
                    attempt: None,
                    all_passed: false,
                    ..leg("linux", Some("GitHub Actions 2"))
                },
                "its attempt",
            ),
        ] {
            let why = match_legs(&m, &[leg], &jobs)[0].clone().unwrap_err();
            assert!(
                why.contains("do not record") && why.contains(missing),
                "{why}"
            );
        }
        let other_run = Leg {
            run_id: Some("8"),
            ..leg("linux", Some("GitHub Actions 2"))
        };
        let why = match_legs(&m, &[other_run], &jobs)[0].clone().unwrap_err();
        assert!(why.contains("of run 8, not of run 7"), "{why}");
        let unavailable = match_legs(
            &m,
            &[leg("linux", Some("GitHub Actions 2"))],
            &Jobs::Unavailable("401".into()),
        );
        assert!(unavailable[0].clone().unwrap_err().contains(
            "the run's jobs could not be read, so where its leg ran cannot be checked: 401"
        ));
    }
}

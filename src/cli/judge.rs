//! Judging results: reading partial results and reports (untrusted: they may come from
//! artifacts) and the manifest they are judged against. Shared by `merge`, `render`,
//! `report`, `publish` and `validate-signal`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::Error;
use super::args::TrustFlags;
use super::settings::{Settings, current_dir};
use crate::manifest::aot::BaseCase;
use crate::manifest::{self, Manifest, compare};
use crate::publish::{GitHub, RetryPolicy, Token};
use crate::render::Format;
use crate::render::steps::StepsInfo;
use crate::results::baseline::{self, Base};
use crate::results::io::{Probe, ResultFileError, read_bounded};
use crate::results::jobs::{Jobs, RunJob};
use crate::results::{ManifestOrigin, ManifestTrust, Outcome, PartialResult, Report, merge};

/// Collects partial results under `paths` and builds the report, with log paths made
/// relative to `report_dir`.
pub(crate) fn merged_report(
    settings: &Settings,
    trust: &TrustFlags,
    paths: &[PathBuf],
    report_dir: &Path,
) -> Result<Report, Error> {
    Ok(merged(settings, trust, paths, report_dir, Format::Json)?.0)
}

/// What the contracts' formats need beyond the report, from the manifest and the result
/// files (only the one of the format asked for).
#[derive(Debug, Default)]
pub(crate) struct Contracts {
    /// `--format steps`.
    pub steps: Option<StepsInfo>,
    /// `--format aot`.
    pub aot: Option<BaseCase>,
}

/// [`merged_report`], and what `format` needs beyond it.
pub(crate) fn merged(
    settings: &Settings,
    trust: &TrustFlags,
    paths: &[PathBuf],
    report_dir: &Path,
    format: Format,
) -> Result<(Report, Contracts), Error> {
    crate::results::io::hand_back_large_buffers();
    let judged = unbaselined(settings, trust, paths, report_dir, format)?;
    let (mut report, manifest) = (judged.report, judged.manifest);
    apply_baseline(settings, &mut report, &manifest, judged.baseline)?;
    Ok((report, judged.contracts))
}

/// The legs' results judged by their manifest, before any comparison with a baseline.
pub(crate) struct Judged {
    pub report: Report,
    pub contracts: Contracts,
    /// The manifest they were judged by.
    pub manifest: Manifest,
    /// The checks of the manifest they were produced from (the same, unless the
    /// results came from another).
    pub results_checks: Vec<String>,
    /// The baseline the flags name, to compare with once the report is whole.
    pub baseline: BaselineSource,
}

/// [`merged`] without the baseline: what `report --files` adds its files to first.
pub(crate) fn unbaselined(
    settings: &Settings,
    trust: &TrustFlags,
    paths: &[PathBuf],
    report_dir: &Path,
    format: Format,
) -> Result<Judged, Error> {
    let collected = merge::collect_in(
        paths,
        report_dir,
        settings
            .actions
            .this_run()
            .map(|(id, attempt)| merge::ThisRun { id, attempt })
            .as_ref(),
    )?;
    if !settings.quiet {
        for note in &collected.notes {
            eprintln!("note: {note}");
        }
    }
    let baseline = BaselineSource::of(trust, settings)?;
    // A checklist's answer and a task's report are about the run's own manifest (the
    // base case or task it ran): without `--manifest`, the one the results embed.
    let own = matches!(format, Format::Aot | Format::Steps) && settings.manifest.is_none();
    let (manifest, trust, ran_by) = judged_manifest(settings, trust, &collected.partials, own)?;
    let partials: Vec<PartialResult> = collected.partials.into_iter().map(|l| l.result).collect();
    let contracts = Contracts {
        steps: (format == Format::Steps)
            .then(|| steps_info(&manifest, &partials, settings.manifest.as_deref())),
        aot: (format == Format::Aot).then(|| manifest::aot::from_manifest(&manifest)),
    };
    let jobs = super::engine::of(settings, None).leg_jobs(settings, &partials);
    let mut report = Report::build_merged(&manifest, partials, &jobs, Some(&ran_by))?;
    for note in std::mem::take(&mut report.read_notes) {
        if !settings.quiet {
            eprintln!("note: {note}");
        }
    }
    report.apply_trust(trust);
    Ok(Judged {
        report,
        contracts,
        manifest,
        results_checks: ran_by.checks.iter().map(|c| c.id.to_string()).collect(),
        baseline,
    })
}

/// Compares `report` with the baseline `trust` names (`--baseline REPORT`, or
/// `--baseline-from history[:BRANCH]`), judged by `manifest`: its new failures,
/// vanished tests and fixed ones. Nothing to do without one.
pub(crate) fn compare_with_baseline(
    settings: &Settings,
    trust: &TrustFlags,
    report: &mut Report,
    manifest: &Manifest,
) -> Result<(), Error> {
    let baseline = BaselineSource::of(trust, settings)?;
    apply_baseline(settings, report, manifest, baseline)
}

/// Compares `report` with `baseline`, judged by `manifest`.
pub(crate) fn apply_baseline(
    settings: &Settings,
    report: &mut Report,
    manifest: &Manifest,
    baseline: BaselineSource,
) -> Result<(), Error> {
    match baseline {
        BaselineSource::None => {}
        BaselineSource::Report(path) => {
            let base = report_file(&path)?;
            if let Err(why) = admissible_base(&base, report, settings) {
                return Err(Error::InvalidInput(format!(
                    "--baseline {}: refused as a baseline: {why}",
                    path.display()
                )));
            }
            let base = Base::of_report(&base);
            report.apply_baseline(baseline::compare(report, &base, manifest));
        }
        BaselineSource::History { path, branch } => match history_base(&path, &branch, report)? {
            Some((history, base)) => {
                report.apply_baseline(baseline::compare(report, &base, manifest));
                // Each failing test with its record on the base branch.
                crate::history::note_failures(&history, &branch, report)?;
            }
            None if !settings.quiet => eprintln!(
                "note: no baseline: the history `{}` has no run of branch `{branch}` for `{}`",
                path.display(),
                report.manifest.path
            ),
            None => {}
        },
    }
    Ok(())
}

/// Under GitHub Actions, the jobs of the run whose legs these results are, as GitHub
/// lists them (the triggering run for a `workflow_run` event); elsewhere nothing to
/// check against. A run whose jobs cannot be read is said so: its legs are then not
/// taken (never taken on trust).
pub(crate) fn actions_run_jobs(settings: &Settings, partials: &[PartialResult]) -> Jobs {
    let actions = &settings.actions;
    if !actions.actions {
        return Jobs::NotChecked;
    }
    let event = actions.event_payload();
    let triggering = event
        .as_ref()
        .filter(|_| actions.event_name.as_deref() == Some("workflow_run"))
        .and_then(|e| e.get("workflow_run"));
    let run_id = match triggering {
        Some(run) => run.get("id").map(|id| match id {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        }),
        None => actions.run_id.clone(),
    };
    let (Some(repo), Some(run_id)) = (actions.repository.clone(), run_id) else {
        return Jobs::Unavailable(
            "the run or its repository is not known (GITHUB_REPOSITORY, GITHUB_RUN_ID)".to_owned(),
        );
    };
    if !crate::results::source::is_repository(&repo) || !run_id.bytes().all(|b| b.is_ascii_digit())
    {
        return Jobs::Unavailable(format!("`{repo}` run `{run_id}` cannot be asked for"));
    }
    // The attempts the legs came from (a re-run's legs are a later attempt).
    let mut attempts: Vec<u32> = partials
        .iter()
        .filter(|p| p.source.run_id.as_deref() == Some(run_id.as_str()))
        .filter_map(|p| p.source.run_attempt)
        .collect();
    attempts.sort_unstable();
    attempts.dedup();
    if attempts.is_empty() {
        let current = triggering
            .and_then(|r| r.get("run_attempt"))
            .and_then(serde_json::Value::as_u64)
            .and_then(|a| u32::try_from(a).ok())
            .or_else(|| actions.run_attempt.as_deref().and_then(|a| a.parse().ok()))
            .unwrap_or(1);
        attempts.push(current);
    }
    match list_jobs(settings, &repo, &run_id, &attempts) {
        Ok(jobs) => Jobs::Listed {
            run_id,
            jobs,
            gitlab: false,
        },
        Err(why) => Jobs::Unavailable(why),
    }
}

/// Under GitLab CI, this pipeline and its jobs as GitLab lists them, read with
/// GITLAB_TOKEN (else the job's own token, which recent GitLab lets read them); why
/// not, when they cannot be read (then no leg is taken).
pub(crate) fn gitlab_pipeline_jobs(
    gitlab: &crate::actions_env::GitLabEnv,
) -> Result<(String, Vec<RunJob>), String> {
    let (Some(project), Some(pipeline)) = (gitlab.project_id.clone(), gitlab.pipeline_id.clone())
    else {
        return Err(
            "the pipeline or its project is not known (CI_PROJECT_ID, CI_PIPELINE_ID)".to_owned(),
        );
    };
    if project.is_empty()
        || pipeline.is_empty()
        || !project.bytes().all(|b| b.is_ascii_digit())
        || !pipeline.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(format!(
            "project `{}` pipeline `{}` cannot be asked for",
            crate::untrusted::cut(&project, 40),
            crate::untrusted::cut(&pipeline, 40)
        ));
    }
    let Some((raw, header)) = gitlab.credentials() else {
        return Err(
            "no token to read them with: give the report job GITLAB_TOKEN (scope `read_api` or `api`)"
                .to_owned(),
        );
    };
    let listed = (|| {
        let token = Token::new(&raw).map_err(|e| e.to_string())?;
        let runtime = super::runtime().map_err(|e| e.to_string())?;
        let api = gitlab
            .api_url
            .clone()
            .unwrap_or_else(|| crate::gitlab_env::DEFAULT_API_URL.to_owned());
        let client = {
            let _entered = runtime.enter();
            GitHub::gitlab(&api, token, header, RetryPolicy::default())
                .map_err(|e| e.to_string())?
        };
        let deadline = std::time::Duration::from_secs(120);
        match runtime.block_on(async {
            tokio::time::timeout(
                deadline,
                crate::publish::gitlab::pipeline_jobs(&client, &project, &pipeline),
            )
            .await
        }) {
            Ok(listed) => listed.map_err(|e| client.redact(&e.to_string())),
            Err(_) => Err(format!(
                "GitLab did not list them within {} s",
                deadline.as_secs()
            )),
        }
    })();
    listed.map(|jobs| (pipeline, jobs))
}

/// The jobs of `attempts` of run `run_id` of `repo`, as GitHub lists them, read with the
/// step's token; why not, when they cannot be read.
pub(crate) fn list_jobs(
    settings: &Settings,
    repo: &str,
    run_id: &str,
    attempts: &[u32],
) -> Result<Vec<RunJob>, String> {
    let actions = &settings.actions;
    let Some(raw) = actions.token.clone() else {
        return Err(
            "no token to read them with: give the step GITHUB_TOKEN (with `actions: read`)"
                .to_owned(),
        );
    };
    let api = actions
        .api_url
        .clone()
        .unwrap_or_else(|| "https://api.github.com".to_owned());
    let token = Token::new(&raw).map_err(|e| e.to_string())?;
    let runtime = super::runtime().map_err(|e| e.to_string())?;
    let github = {
        let _entered = runtime.enter();
        GitHub::new(&api, token, RetryPolicy::default()).map_err(|e| e.to_string())?
    };
    // The listing as a whole has a deadline: a report waits for GitHub, never forever.
    let deadline = std::time::Duration::from_secs(120);
    match runtime.block_on(async {
        tokio::time::timeout(
            deadline,
            crate::publish::jobs::run_jobs(&github, repo, run_id, attempts),
        )
        .await
    }) {
        Ok(listed) => listed.map_err(|e| github.redact(&e.to_string())),
        Err(_) => Err(format!(
            "GitHub did not list them within {} s",
            deadline.as_secs()
        )),
    }
}

/// What the report is compared with.
pub(crate) enum BaselineSource {
    None,
    /// `--baseline REPORT`.
    Report(PathBuf),
    /// `--baseline-from history[:BRANCH]`.
    History {
        path: PathBuf,
        branch: String,
    },
}

impl BaselineSource {
    fn of(trust: &TrustFlags, settings: &Settings) -> Result<BaselineSource, Error> {
        if let Some(path) = &trust.baseline {
            return Ok(BaselineSource::Report(path.clone()));
        }
        let Some(spec) = &trust.baseline_from else {
            return Ok(BaselineSource::None);
        };
        let branch = match spec.split_once(':') {
            None if spec == "history" => None,
            Some(("history", branch)) if !branch.is_empty() => Some(branch.to_owned()),
            _ => {
                return Err(Error::Usage(format!(
                    "--baseline-from `{spec}`: expected `history` or `history:BRANCH`"
                )));
            }
        };
        let branch = match branch.or_else(|| base_branch(settings)) {
            Some(branch) => branch,
            None => {
                return Err(Error::Usage(
                    "--baseline-from history: no base branch is known here (no pull request's base, no default branch in the event); name it: `history:main`".to_owned(),
                ));
            }
        };
        Ok(BaselineSource::History {
            path: trust.history.clone(),
            branch,
        })
    }
}

/// Whether `base` may be what `head` is compared with: a report of the same repository,
/// not of a pull request, not contradicted by its own facts, from a push or schedule
/// run of the base branch (when it was made under Actions). Anyone can bring a file;
/// only such a report says what the base branch really did.
fn admissible_base(base: &Report, head: &Report, settings: &Settings) -> Result<(), String> {
    let source = &base.source;
    if let Some(pr) = source.pr {
        return Err(format!(
            "it is the report of pull request #{pr}, whose code wrote it"
        ));
    }
    if !base.contradictions.is_empty() {
        return Err(format!(
            "{} of its results contradict their own facts",
            base.contradictions.len()
        ));
    }
    let repository = settings
        .actions
        .repository
        .as_ref()
        .or(head.source.repository.as_ref());
    if let Some(repository) = repository
        && !source
            .repository
            .as_ref()
            .is_some_and(|r| r.eq_ignore_ascii_case(repository))
    {
        return Err(match &source.repository {
            Some(other) => format!("it is a report of {other}, not of {repository}"),
            None => format!("it does not say which repository it is of (this is {repository})"),
        });
    }
    if source.run_id.is_some() {
        match source.event.as_deref() {
            Some("push" | "schedule") => {}
            Some(event) => {
                return Err(format!(
                    "its run was started by `{event}`; only a push or schedule run of the base branch is a baseline"
                ));
            }
            None => {
                return Err(
                    "it does not say what started its run (a report written before events were recorded); make a new one on the base branch".to_owned(),
                );
            }
        }
        if let (Some(want), Some(branch)) = (base_branch(settings), &source.branch)
            && *branch != want
        {
            return Err(format!(
                "it is of branch `{branch}`, not of the base branch `{want}`"
            ));
        }
    }
    Ok(())
}

/// The branch a pull request merges into (`GITHUB_BASE_REF`), else the repository's
/// default branch as the event names it.
fn base_branch(settings: &Settings) -> Option<String> {
    std::env::var("GITHUB_BASE_REF")
        .ok()
        .filter(|b| !b.is_empty())
        .or_else(|| {
            let payload = settings.actions.event_payload()?;
            let branch = payload
                .pointer("/repository/default_branch")?
                .as_str()?
                .to_owned();
            Some(branch)
        })
}

/// The latest run of `branch` in the history at `path` that `report` can be compared
/// with, and the history (opened once, for the failing tests' records too); `None` when
/// there is no such file or run.
fn history_base(
    path: &Path,
    branch: &str,
    report: &Report,
) -> Result<Option<(crate::history::History, Base<'static>)>, Error> {
    if !path.exists() {
        return Ok(None);
    }
    let history = crate::history::History::open(path)?;
    let base = history.base(&crate::history::BaseQuery {
        branch,
        head: report,
    })?;
    Ok(base.map(|base| (history, base)))
}

/// The steps of `manifest` and the facts of the runs that produced `partials`; a task
/// file named with --manifest (`task_file`) names its task.
fn steps_info(
    manifest: &Manifest,
    partials: &[PartialResult],
    task_file: Option<&Path>,
) -> StepsInfo {
    let millis = |at: &str| {
        humantime::parse_rfc3339_weak(at)
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .and_then(|d| u64::try_from(d.as_millis()).ok())
    };
    StepsInfo {
        task_id: task_file.and_then(manifest::steps::task_id_in),
        run_number: partials
            .iter()
            .filter_map(|p| p.source.run_attempt)
            .max()
            .unwrap_or(1),
        started_at_ms: partials.iter().filter_map(|p| millis(&p.started_at)).min(),
        duration_ms: partials.iter().map(|p| p.duration_ms).max().unwrap_or(0),
        timeout_ms: manifest
            .run_timeout
            .and_then(|t| u64::try_from(t.as_millis()).ok()),
        timed_out: partials.iter().any(|p| p.outcome == Outcome::RunTimeout),
        skip: manifest.skip,
        steps: StepsInfo::steps_of(manifest),
    }
}

/// A report read from a file, which may come from an artifact: its names must be ones a
/// manifest can declare.
pub(crate) fn checked_report(path: &Path, bytes: &[u8]) -> Result<Report, Error> {
    let probe = Probe::read(path, bytes)?.unwrap_or_default();
    probed_report(path, bytes, &probe)
}

/// [`checked_report`] when the keys of `bytes` are already probed.
pub(crate) fn probed_report(path: &Path, bytes: &[u8], probe: &Probe) -> Result<Report, Error> {
    names_checked(path, Report::read(path, bytes, probe)?)
}

/// A report file, which may come from an artifact. One larger than a partial result may
/// be (a report holds every pair of the matrix) is parsed as it is read, never held
/// whole beside its parsed form.
pub(crate) fn report_file(path: &Path) -> Result<Report, Error> {
    if path.is_dir() {
        return Err(Error::Usage(format!(
            "`{}` is a folder; a report file is expected here: make one from a folder of \
             results with `cargo verify-matrix merge --out report.json {}`",
            path.display(),
            path.display()
        )));
    }
    match read_bounded(path) {
        Ok(bytes) => checked_report(path, &bytes),
        Err(ResultFileError::TooLarge { .. }) => streamed_report(path),
        Err(e) => Err(e.into()),
    }
}

/// A report file known to be larger than a partial result may be, parsed as it is read.
pub(crate) fn streamed_report(path: &Path) -> Result<Report, Error> {
    names_checked(path, Report::read_streamed(path)?)
}

fn names_checked(path: &Path, report: Report) -> Result<Report, Error> {
    if let Some(why) = report.self_contradiction() {
        return Err(Error::InvalidInput(format!(
            "report `{}` contradicts itself: {why}",
            path.display()
        )));
    }
    if let Some(name) = report.invalid_name() {
        return Err(Error::InvalidInput(format!(
            "report `{}` is not valid: `{}` is not a check or environment name",
            path.display(),
            name.escape_debug()
        )));
    }
    Ok(report)
}

/// The manifest the results are judged against, how it relates to the results' own
/// manifest and to a trusted base, and the results' own manifest: `--manifest` when given, else the manifest in
/// the checked-out tree, else the copy embedded in the results. When the one used is
/// not the results' own, it is the trusted one: the results' manifest is compared with
/// it (or with `--base-manifest`), and its changes are listed.
fn judged_manifest(
    settings: &Settings,
    flags: &TrustFlags,
    partials: &[merge::Loaded],
    embedded_first: bool,
) -> Result<(Manifest, ManifestTrust, Manifest), Error> {
    // `merge::collect` has checked that every result names the same digest.
    let loaded = partials
        .first()
        .ok_or_else(|| Error::Usage("no result files given".to_owned()))?;
    let results = loaded.embedded_manifest()?;
    if results.digest != loaded.result.manifest.digest {
        return Err(Error::InvalidInput(format!(
            "`{}` embeds a manifest whose digest ({}) is not the one it records ({})",
            loaded.path.display(),
            results.digest,
            loaded.result.manifest.digest
        )));
    }
    let here = current_dir()?;
    let (used, origin) = match &settings.manifest {
        Some(path) => (
            settings.load_manifest_from(Some(path), &here)?,
            ManifestOrigin::Given,
        ),
        None if embedded_first => {
            if !settings.quiet {
                eprintln!(
                    "note: judged by the manifest the results embed ({}); --manifest names another",
                    results.digest
                );
            }
            (results.clone(), ManifestOrigin::Embedded)
        }
        None => match manifest::discover(&here) {
            Ok(manifest::Found::Yaml(path) | manifest::Found::Cargo(path)) => (
                settings.load_manifest_from(Some(&path), &here)?,
                ManifestOrigin::Tree,
            ),
            Err(manifest::ManifestError::NotFound { .. }) => {
                (results.clone(), ManifestOrigin::Embedded)
            }
            Err(e) => return Err(e.into()),
        },
    };
    let base = match &flags.base_manifest {
        Some(path) => Some(manifest::load(Some(path), &here)?),
        None => None,
    };
    let mut trust = ManifestTrust {
        origin: Some(origin),
        allow_weakening: flags.allow_weakening,
        ..ManifestTrust::default()
    };
    if used.digest != results.digest {
        // A manifest with none of the results' checks is not theirs: judged by it, every
        // result would fall away unseen (a failure read as nothing to judge).
        let ids: HashSet<&str> = results.checks.iter().map(|c| c.id.as_str()).collect();
        if !results.checks.is_empty() && !used.checks.iter().any(|c| ids.contains(c.id.as_str())) {
            let list = |m: &Manifest| -> String {
                let mut ids: Vec<&str> = m.checks.iter().map(|c| c.id.as_str()).take(6).collect();
                if m.checks.len() > 6 {
                    ids.push("…");
                }
                if ids.is_empty() {
                    "none".to_owned()
                } else {
                    ids.join(", ")
                }
            };
            let fix = match origin {
                ManifestOrigin::Given => {
                    "leave out --manifest to judge them by the manifest they embed, or give the \
                     manifest of the repository they came from"
                }
                _ => {
                    "give the manifest of the repository they came from with --manifest, or run \
                     outside this repository to judge them by the manifest they embed"
                }
            };
            return Err(Error::Usage(format!(
                "`{}` ({}) shares no check with the results (its checks: {}; the results': {}): \
                 it is not the manifest they were produced from; {fix}",
                used.path.display(),
                origin.describe(),
                list(&used),
                list(&results)
            )));
        }
        trust.results_digest = Some(results.digest.clone());
        if !settings.quiet {
            eprintln!(
                "note: the results were produced from another manifest ({}); they are judged against `{}` ({}, {})",
                results.digest,
                used.path.display(),
                origin.describe(),
                used.digest
            );
        }
    }
    let reference = base
        .as_ref()
        .or((used.digest != results.digest).then_some(&used));
    if let Some(reference) = reference {
        trust.compared_with = Some(reference.digest.clone());
        trust.changes = compare::changes(reference, &results);
    }
    // Judged by a manifest that is neither the trusted one nor the results' own (the
    // tree's, edited after the legs ran): what it weakens against the trusted one
    // blocks, as the results' own weakenings do — the verdict is its.
    if let Some(base) = &base
        && used.digest != results.digest
        && used.digest != base.digest
    {
        let judging = compare::changes(base, &used);
        if judging.iter().any(|c| c.weakens) {
            trust.results_digest = None;
            let mut changes = judging;
            for change in std::mem::take(&mut trust.changes) {
                if !changes.iter().any(|c| c.change == change.change) {
                    changes.push(change);
                }
            }
            trust.changes = changes;
        }
    }
    Ok((used, trust, results))
}

//! Publishing a report where reviewers look (DESIGN.md §6): the job summary
//! (`$GITHUB_STEP_SUMMARY`) and step outputs (`verdict`, `report`), the sticky PR
//! comment, and the check run.
//!
//! Publishing is planned first, as data, then applied: `--dry-run` prints the plan, so
//! what it shows is exactly what would be written and sent.

pub mod check_run;
pub mod client;
pub mod comment;
pub mod context;
mod deliver;
pub mod gitlab;
pub mod jobs;
pub use deliver::Sent;
pub mod pending;
mod response;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use check_run::{CheckRunPlan, CheckSite};
pub use client::{ApiError, GitHub, Notice, RetryPolicy, SetupError, Token};
pub use comment::{CommentOutcome, CommentPlan};
pub use context::{Context, ContextError, Overrides};

use crate::actions_env::ActionsEnv;
use crate::render::text::{plural, short_commit};
use crate::render::{Budget, Quoted, RenderError, RenderOptions, Tails, details, markdown};

/// GitHub's limit on a comment's body, in characters.
pub const COMMENT_LIMIT: usize = 65_536;

/// GitHub shows at most 1 MiB of a step's summary.
pub const STEP_SUMMARY_LIMIT: usize = 1024 * 1024;

/// When the pull-request comment is written. An existing comment of ours is always kept
/// up to date (a comment left standing would show a stale verdict; an edit notifies no
/// one): the modes decide only when one is *created*.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum CommentMode {
    /// Created and updated on every run.
    #[default]
    Always,
    /// Created only when the result changed against the baseline (a new failure, a
    /// fixed or newly missing pair, fewer tests, vanished tests, or NOT VERIFIED for
    /// anything but failures the base has too), or without a baseline.
    Changes,
    /// Created only when the report is not VERIFIED.
    Failures,
    /// No comment, not even the pending mark.
    Off,
}

impl CommentMode {
    /// Why a new comment is not created for `report` (`None`: it is).
    fn holds_back(self, report: Option<&crate::results::Report>) -> Option<String> {
        use crate::results::Verdict;
        match (self, report) {
            (CommentMode::Always, _) => None,
            // A pending mark only ever marks an existing comment.
            (_, None) => Some(
                "a pending mark creates no comment under --comment changes|failures".to_owned(),
            ),
            (CommentMode::Failures, Some(report)) if report.verdict != Verdict::NotVerified => {
                Some(format!(
                    "--comment failures: {}, and no earlier comment to update",
                    report.verdict.as_str()
                ))
            }
            (CommentMode::Changes, Some(report)) => {
                let b = report.baseline.as_ref()?;
                // A NOT VERIFIED for any reason but the base's own failures is news
                // (a weakened manifest, a missing environment) even when no pair moved.
                let changed = !b.new_failures.is_empty()
                    || !b.fixed.is_empty()
                    || !b.newly_missing.is_empty()
                    || !b.test_drops.is_empty()
                    || !b.vanished.is_empty()
                    || (report.verdict == Verdict::NotVerified
                        && !report.only_pre_existing_failures());
                (!changed).then(|| format!(
                    "--comment changes: nothing changed against {}, and no earlier comment to update",
                    b.label()
                ))
            }
            _ => None,
        }
    }
}

/// Where a report is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// The sticky PR comment (needs `pull-requests: write`)
    Comment,
    /// A check run on the head commit, with annotations (needs `checks: write`)
    CheckRun,
    /// Append the matrix to the job summary ($GITHUB_STEP_SUMMARY)
    Summary,
}

/// Everything one publication writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Publication {
    /// The markdown appended to the job summary, and the file it goes to.
    pub summary: Option<(PathBuf, String)>,
    /// Step outputs, `name=value` lines for `$GITHUB_OUTPUT`.
    pub outputs: Vec<(String, String)>,
    /// The `$GITHUB_OUTPUT` file, when there is one.
    pub output_file: Option<PathBuf>,
    /// The sticky comment.
    pub comment: Option<CommentPlan>,
    /// The check run.
    pub check_run: Option<CheckRunPlan>,
    /// The job summary written when GitHub refuses the token, if the summary was not
    /// asked for.
    pub fallback_summary: Option<(PathBuf, String)>,
    /// Targets asked for that do not apply here, and why.
    pub notes: Vec<String>,
}

/// What a publication is asked to do, beyond the report.
#[derive(Debug, Clone)]
pub struct Settings {
    pub targets: Vec<Target>,
    pub dry_run: bool,
    /// The check run's name.
    pub check_name: String,
    /// The login our comments are written by (asked of GitHub when not given).
    pub comment_author: Option<String>,
    /// When the comment is written.
    pub comment_mode: CommentMode,
    /// Each check's manifest line, for annotations.
    pub sites: HashMap<String, CheckSite>,
}

/// Why a publication cannot be made or written.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error(transparent)]
    Render(#[from] RenderError),
    /// Not under GitHub Actions (and not a dry run).
    #[error(
        "$GITHUB_STEP_SUMMARY is not set, so there is no job summary to write to (outside GitHub Actions, use --dry-run to see what would be written)"
    )]
    NoSummaryFile,
    #[error(transparent)]
    Context(#[from] ContextError),
    /// A comment or check run without a commit to attach it to.
    #[error("{0}")]
    Unplaceable(String),
    #[error("failed to write {what} `{}`: {source}", path.display())]
    Write {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The Actions variables a publication reads.
#[derive(Debug, Clone, Default)]
pub struct ActionsFiles {
    pub step_summary: Option<PathBuf>,
    pub output: Option<PathBuf>,
}

impl ActionsFiles {
    /// `$GITHUB_STEP_SUMMARY` and `$GITHUB_OUTPUT`, when set and not empty.
    pub fn from_env(env: &ActionsEnv) -> ActionsFiles {
        ActionsFiles {
            step_summary: env.step_summary.clone(),
            output: env.output.clone(),
        }
    }
}

/// Plans what publishing `report` (read from `report_path`) does. `context` is needed
/// for a comment or a check run.
pub fn plan(
    report: &Quoted,
    report_path: &Path,
    settings: &Settings,
    options: &RenderOptions,
    files: &ActionsFiles,
    context: Option<&Context>,
) -> Result<Publication, PublishError> {
    let mut publication = Publication {
        summary: None,
        outputs: step_outputs(
            report,
            report_path,
            files
                .step_summary
                .as_deref()
                .filter(|_| settings.targets.contains(&Target::Summary)),
        ),
        output_file: files.output.clone(),
        comment: None,
        check_run: None,
        fallback_summary: None,
        notes: Vec::new(),
    };
    // Every markdown this publication renders shows the same tails: read once.
    let tails = Tails::load(report, options, Tails::SHORT);
    let wants = |target| settings.targets.contains(&target);
    if wants(Target::Summary) {
        let path = match (&files.step_summary, settings.dry_run) {
            (Some(path), _) => path.clone(),
            (None, true) => PathBuf::from("$GITHUB_STEP_SUMMARY"),
            (None, false) => return Err(PublishError::NoSummaryFile),
        };
        publication.summary = Some(summary(report, &tails, options, path)?);
    } else if (wants(Target::Comment) || wants(Target::CheckRun))
        && let Some(path) = files.step_summary.clone()
    {
        publication.fallback_summary = Some(summary(report, &tails, options, path)?);
    }
    let github = |target| wants(target).then_some(context).flatten();
    if let Some(context) = github(Target::Comment) {
        if settings.comment_mode == CommentMode::Off {
            publication
                .notes
                .push("no PR comment: --comment off".to_owned());
        } else {
            let body = || within(report, &tails, options, None, Some(COMMENT_LIMIT));
            publication.comment = comment_plan(context, settings, options, body, false)?;
            if let Some(plan) = &mut publication.comment {
                plan.only_update = settings.comment_mode.holds_back(Some(report));
            } else {
                publication.notes.push(not_a_pr(context));
            }
        }
    }
    if let Some(context) = github(Target::CheckRun) {
        publication.check_run = Some(check_run_plan(report, &tails, settings, options, context)?);
    }
    Ok(publication)
}

/// The step's outputs for later steps: the verdict, the report, what GitHub's check
/// run concludes, the tests' outcomes summed over every pair that has counts (each
/// environment's run counted, as the peers' reporters count them), the pairs, the job
/// summary's file, and the same in one JSON object (docs/github-actions.md, "Outputs").
fn step_outputs(
    report: &crate::results::Report,
    report_path: &Path,
    summary: Option<&Path>,
) -> Vec<(String, String)> {
    let (mut passed, mut failed, mut skipped, mut flaky) = (0u64, 0u64, 0u64, 0u64);
    for counts in report
        .rows
        .iter()
        .filter_map(|r| r.detail.test_counts.as_ref())
    {
        passed += counts.passed;
        failed += counts.failed;
        skipped += counts.skipped;
        flaky += counts.flaky;
    }
    let pairs_passed = report
        .rows
        .iter()
        .filter(|r| r.result == crate::results::RowResult::Pass)
        .count();
    let pairs_failed = report.rows.len() - pairs_passed;
    let conclusion = check_run::conclusion(report);
    let json = serde_json::json!({
        "verdict": report.verdict.as_str(),
        "conclusion": conclusion,
        "tests": { "total": passed + failed + skipped, "passed": passed, "failed": failed,
                   "skipped": skipped, "flaky": flaky },
        "pairs": { "passed": pairs_passed, "failed": pairs_failed,
                   "missing": report.missing.len() },
        "reasons": report.reasons.iter().take(JSON_REASONS).collect::<Vec<_>>(),
        "more_reasons": report.reasons.len().saturating_sub(JSON_REASONS),
        "report": report_path.display().to_string(),
    });
    let mut outputs: Vec<(String, String)> = vec![
        ("verdict".to_owned(), report.verdict.as_str().to_owned()),
        ("report".to_owned(), report_path.display().to_string()),
        ("conclusion".to_owned(), conclusion.to_owned()),
        ("tests".to_owned(), (passed + failed + skipped).to_string()),
        ("passed".to_owned(), passed.to_string()),
        ("failed".to_owned(), failed.to_string()),
        ("skipped".to_owned(), skipped.to_string()),
        ("flaky".to_owned(), flaky.to_string()),
        ("pairs-passed".to_owned(), pairs_passed.to_string()),
        ("pairs-failed".to_owned(), pairs_failed.to_string()),
        ("pairs-missing".to_owned(), report.missing.len().to_string()),
    ];
    if let Some(path) = summary {
        outputs.push(("summary-path".to_owned(), path.display().to_string()));
    }
    outputs.push(("json".to_owned(), json.to_string()));
    outputs
}

/// The verdict's reasons the `json` output lists; the rest are counted.
const JSON_REASONS: usize = 20;

/// The job summary: the markdown within what is left of the 1 MiB.
fn summary(
    report: &Quoted,
    tails: &Tails,
    options: &RenderOptions,
    path: PathBuf,
) -> Result<(PathBuf, String), PublishError> {
    // Earlier steps' summaries share the limit.
    let used = std::fs::metadata(&path).map_or(0, |m| m.len() as usize);
    let markdown = within(
        report,
        tails,
        options,
        Some(STEP_SUMMARY_LIMIT.saturating_sub(used)),
        None,
    )?;
    Ok((path, markdown))
}

/// The markdown matrix cut to GitHub's limit for where it goes.
fn within(
    report: &Quoted,
    tails: &Tails,
    options: &RenderOptions,
    max_bytes: Option<usize>,
    max_chars: Option<usize>,
) -> Result<String, RenderError> {
    let options = RenderOptions {
        budget: Budget {
            max_bytes,
            max_chars,
        },
        ..options.clone()
    };
    markdown::render(report, tails, &options)
}

/// The sticky comment on the context's pull request, with the body `body` makes; none
/// when this is not a pull request.
fn comment_plan<E>(
    context: &Context,
    settings: &Settings,
    options: &RenderOptions,
    body: impl FnOnce() -> Result<String, E>,
    pending: bool,
) -> Result<Option<CommentPlan>, PublishError>
where
    PublishError: From<E>,
{
    let Some((pr, pr_origin)) = context.pr else {
        return Ok(None);
    };
    Ok(Some(CommentPlan {
        repository: context.require_repository()?.to_owned(),
        pr,
        pr_origin,
        head_sha: context.head_sha.clone(),
        marker: markdown::marker(&options.key),
        body: body()?,
        author: settings.comment_author.clone(),
        pending,
        only_update: None,
    }))
}

fn not_a_pr(context: &Context) -> String {
    format!(
        "no PR comment: this is not a pull request ({}); pass --pr N to name one",
        context.event_name.as_deref().unwrap_or("no GitHub event")
    )
}

/// Names this publication's check run: the manifest's key and the workflow run and
/// attempt (outside Actions, the time and process).
fn external_id(context: &Context, key: &str) -> String {
    let id = match (&context.run, run_prefix(context, key)) {
        (Some((_, attempt)), Some(prefix)) => format!("{prefix}{attempt}"),
        _ => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            format!(
                "cargo-verify-matrix:{key}:{}.{}",
                now.as_nanos(),
                std::process::id()
            )
        }
    };
    crate::untrusted::cut(&id, 200)
}

/// What the external ids of this workflow run's check runs (every attempt) begin with.
fn run_prefix(context: &Context, key: &str) -> Option<String> {
    let (id, _) = context.run.as_ref()?;
    Some(format!("cargo-verify-matrix:{key}:{id}."))
}

/// Plans the pending mark (`publish --pending`) of the commit `report.source` names:
/// an `in_progress` check run and the pending comment. `report` carries only where the
/// run happens; the marker is `options.key`'s.
pub fn plan_pending(
    report: &Quoted,
    settings: &Settings,
    options: &RenderOptions,
    context: &Context,
) -> Result<Publication, PublishError> {
    let head = context.head_sha.clone().ok_or_else(|| {
        PublishError::Unplaceable(
            "no commit to mark pending: the event names none (a pull_request payload without \
             pull_request.head.sha, and no GITHUB_SHA); pass --sha"
                .to_owned(),
        )
    })?;
    let provenance = markdown::provenance(report, options);
    let banner = pending::banner(
        &markdown::marker(&options.key),
        &head,
        provenance.as_deref(),
    );
    let mut publication = Publication {
        summary: None,
        outputs: Vec::new(),
        output_file: None,
        comment: None,
        check_run: None,
        fallback_summary: None,
        notes: Vec::new(),
    };
    let wants = |target| settings.targets.contains(&target);
    if wants(Target::Summary) {
        publication
            .notes
            .push("no job summary for a pending mark: the report writes it".to_owned());
    }
    if wants(Target::Comment) && settings.comment_mode != CommentMode::Off {
        let body = || Ok::<_, PublishError>(banner.clone());
        publication.comment = comment_plan(context, settings, options, body, true)?;
        if let Some(plan) = &mut publication.comment {
            plan.only_update = settings.comment_mode.holds_back(None);
        } else {
            publication.notes.push(not_a_pr(context));
        }
    }
    if wants(Target::CheckRun) {
        let short = short_commit(&head);
        publication.check_run = Some(CheckRunPlan {
            repository: context.require_repository()?.to_owned(),
            name: settings.check_name.clone(),
            external_id: external_id(context, &options.key),
            details_url: options.link.clone(),
            conclusion: None,
            adopt: None,
            title: format!("Verifying {short}: no verdict yet"),
            summary: banner,
            text: String::new(),
            annotations: Vec::new(),
            head_sha: head,
        });
    }
    Ok(publication)
}

fn check_run_plan(
    report: &Quoted,
    tails: &Tails,
    settings: &Settings,
    options: &RenderOptions,
    context: &Context,
) -> Result<CheckRunPlan, PublishError> {
    let head_sha = context.head_sha.clone().ok_or_else(|| {
        PublishError::Unplaceable(
            "no commit for the check run: the results record none and this is not a GitHub \
             event with one; pass --sha"
                .to_owned(),
        )
    })?;
    // The summary answers and shows the grid; the failure details are the text, not
    // said twice.
    let summary_options = RenderOptions {
        details: false,
        ..options.clone()
    };
    let summary = within(
        report,
        tails,
        &summary_options,
        Some(check_run::OUTPUT_LIMIT),
        None,
    )?;
    let external_id = external_id(context, &options.key);
    Ok(CheckRunPlan {
        repository: context.require_repository()?.to_owned(),
        name: settings.check_name.clone(),
        head_sha,
        external_id,
        details_url: options.link.clone(),
        conclusion: Some(check_run::conclusion(report)),
        adopt: run_prefix(context, &options.key).map(|prefix| crate::untrusted::cut(&prefix, 200)),
        title: check_run::title(report),
        summary,
        text: details::failure_details(report, tails, options, check_run::OUTPUT_LIMIT),
        annotations: check_run::annotations(report, &settings.sites),
    })
}

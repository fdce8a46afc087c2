//! The groups of flags several commands share: which manifest judges the results
//! (`merge`, `render`, `report`), how a report is rendered (`merge`, `render`) and
//! published (`publish`, `report`), and how the markdown matrix is written (all four).

use std::path::PathBuf;

use clap::Args;

use crate::publish::{CommentMode, Target};

/// Which manifest the results are judged against, and what it may change (`merge`,
/// `render`, `report`). Without `--manifest`, the manifest found in the checked-out tree
/// is used, else the copy embedded in the results.
#[derive(Debug, Args)]
#[command(next_help_heading = "Manifest trust")]
pub(crate) struct TrustFlags {
    /// The trusted manifest (e.g. the base branch's) that the results' manifest is
    /// compared with: its weakenings make the verdict NOT VERIFIED
    #[arg(long, value_name = "PATH")]
    pub base_manifest: Option<PathBuf>,
    /// List weakenings of the manifest (a check removed or made optional, an environment
    /// dropped, an exit code or must-be-effective relaxed) without failing on them
    #[arg(long)]
    pub allow_weakening: bool,
    /// A report to compare with (the base branch's): new and pre-existing failures,
    /// fixed and newly missing pairs, vanished tests; a test gate that ran fewer tests
    /// than `tests-may-drop` allows makes the verdict NOT VERIFIED
    #[arg(long, value_name = "REPORT", conflicts_with = "baseline_from")]
    pub baseline: Option<PathBuf>,
    /// Compare with the latest run of BRANCH in the history database (default: the
    /// pull request's base branch, else the repository's default branch), as
    /// `--baseline` does: `history` or `history:BRANCH`
    #[arg(long, value_name = "history[:BRANCH]")]
    pub baseline_from: Option<String>,
    /// The history database `--baseline-from` reads
    #[arg(long, value_name = "PATH", default_value = crate::history::DEFAULT_PATH)]
    pub history: PathBuf,
}

/// How a report is rendered (`render`, `merge`).
#[derive(Debug, Args)]
#[command(next_help_heading = "Render options")]
pub(crate) struct RenderFlags {
    #[command(flatten)]
    pub matrix: MatrixFlags,
    /// Cut the markdown down to at most N bytes (a check run summary takes 65535)
    #[arg(long, value_name = "N")]
    pub max_bytes: Option<usize>,
    /// Cut the markdown down to at most N characters (a PR comment takes 65536)
    #[arg(long, value_name = "N")]
    pub max_chars: Option<usize>,
    /// The task a signal is about (signal, audit; infra-blocked defaults to the run)
    #[arg(long, value_name = "ID")]
    pub task_id: Option<String>,
    /// Files modified, listed in READY_FOR_REVIEW (repeatable, or comma-separated)
    #[arg(long = "files", value_name = "PATH", value_delimiter = ',')]
    pub modified_files: Vec<String>,
    /// A test written, as "FILE: what it tests", listed in READY_FOR_REVIEW (repeatable)
    #[arg(long = "tests", value_name = "TEST")]
    pub tests_written: Vec<String>,
    /// The signal's closing line (Summary:, or Conclusion: in an audit)
    #[arg(long, value_name = "TEXT")]
    pub summary: Option<String>,
}

/// Where and how a report is published (`publish`, `report`).
#[derive(Debug, Args)]
#[command(next_help_heading = "Publish options")]
pub(crate) struct PublishFlags {
    /// Where to publish (repeatable, or comma-separated; default: summary)
    #[arg(long = "to", value_enum, value_name = "TARGET", value_delimiter = ',')]
    pub to: Vec<Target>,
    /// Print exactly what would be written and sent, and write and send nothing
    #[arg(long)]
    pub dry_run: bool,
    /// The GitHub token (default: $GITHUB_TOKEN, which keeps it out of the process list)
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// The repository (default: $GITHUB_REPOSITORY, then the one the results record)
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// The pull request to comment on (default: from the event, then from the results)
    #[arg(long, value_name = "N")]
    pub pr: Option<u64>,
    /// The commit the check run is on (default: the pull request's head, then the
    /// results' commit)
    #[arg(long, value_name = "SHA")]
    pub sha: Option<String>,
    /// The check run's name
    #[arg(long, value_name = "NAME", default_value = crate::publish::check_run::DEFAULT_NAME)]
    pub check_name: String,
    /// The login our comments are written by (default: the token's user;
    /// `github-actions[bot]` for a workflow token)
    #[arg(long, value_name = "LOGIN")]
    pub comment_author: Option<String>,
    /// Retries of a request that failed for a passing reason (5xx, rate limit)
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub retries: u32,
    /// When the PR comment is created: `always`; `changes` (against the baseline);
    /// `failures` (not VERIFIED); `off` (never, not even the pending mark). An existing
    /// comment is always updated
    #[arg(
        long = "comment",
        value_enum,
        value_name = "WHEN",
        default_value = "always"
    )]
    pub comment_mode: CommentMode,
    /// The CI service to publish to: `github` (a PR comment, a check run, the job
    /// summary) or `gitlab` (a merge-request note, a commit status, the job log).
    /// Default: `gitlab` under GitLab CI (GITLAB_CI=true), else `github`
    #[arg(long, value_enum, value_name = "SERVICE")]
    pub ci: Option<Ci>,
    #[command(flatten)]
    pub matrix: MatrixFlags,
}

/// A CI service: where `init` writes a pipeline for, and `publish` publishes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Ci {
    /// GitHub Actions
    Github,
    /// GitLab CI
    Gitlab,
}

/// How the markdown matrix is written (`render`, `merge`, `publish`, `report`).
#[derive(Debug, Args)]
pub(crate) struct MatrixFlags {
    /// Log lines shown per failure
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub tail_lines: usize,
    /// Where the full report can be read, linked when the markdown is cut (default
    /// under Actions: this workflow run)
    #[arg(long, value_name = "URL")]
    pub link: Option<String>,
    /// The key in the markdown's hidden marker (default: the manifest path)
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// The strict table (one row per pair, the lines other programs' regexes read):
    /// `folded` in a collapsed block under the grid, or `open`
    #[arg(long, value_enum, value_name = "HOW", default_value = "folded")]
    pub strict_table: StrictTable,
}

/// How the markdown shows its strict table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum StrictTable {
    Folded,
    Open,
}

//! Command-line definitions (clap derive), private to the CLI: the stages never see
//! them; [`super::settings`] turns them into what the stages take.
//!
//! Options that apply to several commands (`--manifest`, `--color`, `--quiet`,
//! `--verbose`) are accepted before the command name (`--manifest X plan`, and for the
//! implicit `run`) and after it by each command they apply to, whose help lists them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::render::Format;

pub(crate) use super::flags::{MatrixFlags, PublishFlags, RenderFlags, TrustFlags};

/// Prove a pull request passed every required check in every environment it must pass in.
///
/// With no command, `cargo verify-matrix` means `cargo verify-matrix run`.
#[derive(Debug, Parser)]
#[command(
    name = "cargo-verify-matrix",
    version,
    after_help = "Exit codes: 0 verified, 1 a required check failed, 2 usage error, 3 coverage incomplete, 4 invalid input, 5 publishing failed, 70 internal error, 130 interrupted."
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Arguments of `run`, when no command is given.
    #[command(flatten)]
    pub run: RunArgs,
}

/// The shared options, before the command name.
#[derive(Debug, Args, Default)]
pub(crate) struct GlobalArgs {
    #[command(flatten)]
    pub manifest: ManifestArg,
    #[command(flatten)]
    pub color: ColorArg,
    #[command(flatten)]
    pub quiet: QuietArg,
    #[command(flatten)]
    pub verbose: VerboseArg,
}

impl GlobalArgs {
    /// These options with a command's own over them.
    pub fn with(
        mut self,
        manifest: Option<&ManifestArg>,
        color: Option<&ColorArg>,
        quiet: Option<&QuietArg>,
        verbose: Option<&VerboseArg>,
    ) -> GlobalArgs {
        if let Some(path) = manifest.and_then(|m| m.manifest.clone()) {
            self.manifest.manifest = Some(path);
        }
        if let Some(dialect) = manifest.and_then(|m| m.dialect) {
            self.manifest.dialect = Some(dialect);
        }
        if let Some(choice) = color.and_then(|c| c.color) {
            self.color.color = Some(choice);
        }
        self.quiet.quiet |= quiet.is_some_and(|q| q.quiet);
        self.verbose.verbose = self
            .verbose
            .verbose
            .saturating_add(verbose.map_or(0, |v| v.verbose));
        self
    }
}

/// The ids of the shared options.
const SHARED: [&str; 5] = ["manifest", "dialect", "color", "quiet", "verbose"];

/// The command line, with each shared option a command does not list still accepted
/// after its name (scripts written when every command took every one keep working) but
/// hidden from its help and ignored.
pub(crate) fn command() -> clap::Command {
    let cmd = <Cli as clap::CommandFactory>::command();
    let shared: Vec<clap::Arg> = SHARED
        .iter()
        .filter_map(|id| cmd.get_arguments().find(|a| a.get_id() == id).cloned())
        .collect();
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    names.iter().fold(cmd, |cmd, name| {
        cmd.mut_subcommand(name, |sub| {
            let missing: Vec<clap::Arg> = shared
                .iter()
                .filter(|arg| sub.get_arguments().all(|a| a.get_id() != arg.get_id()))
                .cloned()
                .collect();
            missing
                .into_iter()
                .fold(sub, |sub, arg| sub.arg(arg.hide(true)))
        })
    })
}

/// `--manifest`.
#[derive(Debug, Args, Default)]
pub(crate) struct ManifestArg {
    /// The manifest (default: search from here up to the repository root for
    /// verify-matrix.yml, verify-matrix.yaml, .github/verify-matrix.yml, then Cargo.toml
    /// metadata)
    #[arg(long, value_name = "PATH")]
    pub manifest: Option<PathBuf>,
    /// The format the manifest is written in (default: told from its content): a
    /// verify-matrix manifest, a task with a list of `verification_steps` (`steps`), or
    /// a checklist `base_case` (`aot`); a Markdown file is read by its front matter
    #[arg(long, value_enum, value_name = "DIALECT")]
    pub dialect: Option<crate::manifest::Dialect>,
}

/// `--color`.
#[derive(Debug, Args, Default)]
pub(crate) struct ColorArg {
    /// When to use colours (also honours NO_COLOR and CARGO_TERM_COLOR)
    #[arg(long, value_enum, value_name = "WHEN")]
    pub color: Option<ColorChoice>,
}

/// `--quiet`.
#[derive(Debug, Args, Default)]
pub(crate) struct QuietArg {
    /// Print less: no progress or notes on stderr, only the command's output and errors
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--verbose`.
#[derive(Debug, Args, Default)]
pub(crate) struct VerboseArg {
    /// Print more: each request to GitHub (repeatable)
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Show the (check × environment) execution matrix, or emit it for `strategy.matrix`
    Plan(PlanArgs),
    /// Run this environment's checks and write its partial result
    Run(RunCommand),
    /// Merge the partial results of every environment into one report and judge it
    Merge(MergeArgs),
    /// Render a report or partial result files: markdown, table, JSON, JUnit, HTML or a
    /// signal
    Render(RenderArgs),
    /// Publish a report: job summary, PR comment, check run
    Publish(PublishArgs),
    /// Merge, render and publish in one step (the final job of a workflow)
    Report(ReportArgs),
    /// Check an agent's READY_FOR_REVIEW / AUDIT_PASSED text against the manifest (and
    /// the real results); print one JSON verdict
    ValidateSignal(ValidateSignalArgs),
    /// Run one command as a verification worker; print exactly one JSON result object
    Exec(ExecArgs),
    /// A coding agent's Stop hook: run the checks, and block the agent's stop until they
    /// pass (speaks the client's hook JSON on stdin and stdout)
    Hook(HookArgs),
    /// Write a starter verify-matrix.yml and GitHub workflow detected from the repository
    Init(InitArgs),
    /// Serve the tool to agents over the Model Context Protocol (stdio): plan, run,
    /// verdict and failures as tools, the manifest as a resource
    Mcp(McpArgs),
    /// Print the manifest's JSON Schema (for editors' YAML language servers)
    Schema,
    /// Read runner test reports (JUnit, TRX, NUnit, xUnit.net, CTRF, Jest, Vitest, Mocha,
    /// RSpec or Playwright JSON, `go test -json`, TAP) as `reports:` does, and say which
    /// tests ran, failed and where
    Tests(TestsArgs),
    /// The verification history (SQLite): import reports, show each check's record
    History(HistoryArgs),
}

/// `history`.
#[derive(Debug, Args)]
pub(crate) struct HistoryArgs {
    /// The history database [default: .verify-matrix/history.sqlite]
    #[arg(long, value_name = "PATH", global = true)]
    pub history: Option<PathBuf>,
    #[command(subcommand)]
    pub command: HistoryCommand,
}

/// `history`'s subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum HistoryCommand {
    /// Import reports (the same run attempt imported twice is one run)
    Add(HistoryAddArgs),
    /// Per check × environment: pass rate, flaky rate, duration p50/p95, test count
    /// trend, last failure
    Show(HistoryShowArgs),
    /// Per test: how often it ran, failed and was flaky over the last runs, overall and
    /// on the base branch; its first failure and last green
    Tests(HistoryTestsArgs),
    /// A self-contained dashboard page: verdicts over time, a check × run heat map,
    /// trends, the flakiest and slowest checks
    Html(HistoryHtmlArgs),
    /// Import the report artifacts of a repository's last completed workflow runs
    Sync(HistorySyncArgs),
    /// Remove older runs (with their pairs, tests and shards) and compact the file
    Prune(HistoryPruneArgs),
}

/// What the history keeps (`history prune`, and after each `history add` and `history
/// sync`): a run goes only when no rule keeps it.
#[derive(Debug, Args, Clone)]
pub(crate) struct KeepArgs {
    /// Keep the newest N runs (0: keep everything) [default: 200, or with --keep-days
    /// alone no rule by count]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub keep_runs: Option<u64>,
    /// Keep the runs of the last D days (0: keep everything) [default: 90, or with
    /// --keep-runs alone no rule by age]
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub keep_days: Option<u64>,
}

/// `history prune`.
#[derive(Debug, Args)]
pub(crate) struct HistoryPruneArgs {
    #[command(flatten)]
    pub keep: KeepArgs,
    /// Only runs of this branch are pruned (the others are all kept)
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
}

/// `history sync`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("forge").required(true).args(["from_github", "from_gitlab"])))]
pub(crate) struct HistorySyncArgs {
    /// Fetch through GitHub's REST API (`GITHUB_API_URL`, else api.github.com)
    #[arg(long)]
    pub from_github: bool,
    /// Fetch through GitLab's REST API (`CI_API_V4_URL`, else gitlab.com/api/v4): the
    /// report job's artifacts of the branch's pipelines
    #[arg(long, conflicts_with_all = ["from_github", "artifact"])]
    pub from_gitlab: bool,
    /// The branch whose runs are fetched [default: the repository's default branch]
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// How many of the latest completed runs (1–1000)
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub runs: u16,
    /// The repository, or with --from-gitlab the project (its number or GROUP/NAME)
    /// [default: $GITHUB_REPOSITORY; $CI_PROJECT_PATH]
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// The artifact the report is uploaded as (the Action's `<artifact-prefix>_report`)
    #[arg(long, value_name = "NAME", default_value = "verify-matrix_report")]
    pub artifact: String,
    /// With --from-gitlab, the job whose artifacts hold the report (`init --ci gitlab`'s
    /// report job)
    #[arg(
        long,
        value_name = "NAME",
        default_value = "verify-matrix:report",
        requires = "from_gitlab"
    )]
    pub job: String,
    /// The token (default: $GITHUB_TOKEN; with --from-gitlab $GITLAB_TOKEN, else
    /// $CI_JOB_TOKEN)
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Retries of a request that failed for a passing reason (5xx, rate limit)
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub retries: u32,
    #[command(flatten)]
    pub keep: KeepArgs,
}

/// `history html`.
#[derive(Debug, Args)]
pub(crate) struct HistoryHtmlArgs {
    /// Where to write the page (default: stdout)
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Only runs on this branch
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// How many of the most recent runs
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub last: u32,
    /// Count pull requests' runs too (by default only the runs of pushes and schedules:
    /// a branch's history is its own runs')
    #[arg(long)]
    pub include_prs: bool,
}

/// `history add`.
#[derive(Debug, Args)]
pub(crate) struct HistoryAddArgs {
    /// Report files (`merge --out`)
    #[arg(value_name = "REPORT", required = true)]
    pub reports: Vec<PathBuf>,
    /// The branch the reports' run is recorded on [default: GITHUB_REF_NAME: the
    /// pushed branch, or `N/merge` for a pull request's run]
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    #[command(flatten)]
    pub keep: KeepArgs,
}

/// `history show`.
#[derive(Debug, Args)]
pub(crate) struct HistoryShowArgs {
    /// Only this check
    #[arg(long, value_name = "ID")]
    pub check: Option<String>,
    /// Only this environment
    #[arg(long, value_name = "ENV")]
    pub env: Option<String>,
    /// Only runs on this branch
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// How many of the most recent runs
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub last: u32,
    /// Count pull requests' runs too (by default only the runs of pushes and schedules:
    /// a branch's history is its own runs')
    #[arg(long)]
    pub include_prs: bool,
    /// What to print
    #[arg(long, value_enum, default_value = "table")]
    pub format: ShowFormat,
}

/// `history tests`.
#[derive(Debug, Args)]
pub(crate) struct HistoryTestsArgs {
    /// Only this check's tests
    #[arg(long, value_name = "ID")]
    pub check: Option<String>,
    /// Only the tests run in this environment
    #[arg(long, value_name = "ENV")]
    pub env: Option<String>,
    /// The base branch, whose own counts are given beside the overall ones
    #[arg(long, value_name = "BRANCH", default_value = "main")]
    pub base: String,
    /// How many of the most recent runs (overall, and on the base branch); `--window` is
    /// the same
    #[arg(long, visible_alias = "window", value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub last: u32,
    /// Count pull requests' runs too (by default only the runs of pushes and schedules)
    #[arg(long)]
    pub include_prs: bool,
    /// List every test, not only those that failed or were flaky in the window
    #[arg(long)]
    pub all: bool,
    /// Print `quarantine:` entries to paste into the manifest for the tests that were
    /// flaky on the base branch (never written by itself)
    #[arg(long, conflicts_with = "quarantined")]
    pub suggest_quarantine: bool,
    /// List the manifest's quarantined tests: how many runs in a row each passed, and
    /// which are ready to leave quarantine
    #[arg(long)]
    pub quarantined: bool,
    /// With --quarantined: the runs in a row a quarantined test must pass (no failure,
    /// no flaky pass) to be ready to leave
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub ready_after: u32,
    /// What comes first
    #[arg(long, value_enum, default_value = "flaky")]
    pub sort: TestsSort,
    /// The most tests listed (0: all)
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub limit: usize,
    /// What to print
    #[arg(long, value_enum, default_value = "table")]
    pub format: ShowFormat,
}

/// `history tests --sort`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TestsSort {
    // The highest flaky rate first, then failure rate.
    Flaky,
    // The highest failure rate first, then flaky rate.
    Failures,
}

/// `history show --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ShowFormat {
    // One row per check × environment, for people.
    Table,
    // The same as a JSON array.
    Json,
    // The same as CSV with a header line.
    Csv,
}

/// `tests`.
#[derive(Debug, Args)]
pub(crate) struct TestsArgs {
    /// Report files or globs, relative to --cwd
    #[arg(value_name = "REPORT", required = true)]
    pub reports: Vec<String>,
    /// The folder the patterns and the failures' files are relative to
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub cwd: PathBuf,
    /// What to print
    #[arg(long, value_enum, default_value = "table")]
    pub format: TestsFormat,
    /// Read every report in this format, whatever its content looks like (as
    /// `reports: { path, format }` does); without it, the content tells
    #[arg(long, value_name = "FORMAT", value_parser = report_format, hide_possible_values = true)]
    pub report_format: Option<crate::run::reports::Format>,
}

/// A report format's name, as `tests --report-format` takes it.
fn report_format(name: &str) -> Result<crate::run::reports::Format, String> {
    name.parse()
}

/// `tests --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TestsFormat {
    // The counts and the failing tests, for people.
    Table,
    // The counts and every test, as a result's `test_counts` and `tests` give them.
    Json,
}

/// `hook`.
#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    #[command(subcommand)]
    pub command: HookCommand,
}

/// The coding-agent clients `hook` speaks to, and the person's allowance.
#[derive(Debug, Subcommand)]
pub(crate) enum HookCommand {
    /// Claude Code's Stop hook (`.claude/settings.json`)
    ClaudeCode(GateArgs),
    /// OpenAI Codex's Stop hook (`.codex/hooks.json`)
    Codex(GateArgs),
    /// Gemini CLI's AfterAgent hook (`.gemini/settings.json`)
    Gemini(GateArgs),
    /// Cursor's `stop` hook (`.cursor/hooks.json`)
    Cursor(GateArgs),
    /// For a person: let the gate judge by the working copy's manifest as it is now,
    /// although it weakens the committed one (asks at the terminal)
    Allow(AllowArgs),
    /// For a person: pin the manifest committed at HEAD as what sessions that send no
    /// start event are judged by (asks at the terminal)
    Pin(AllowArgs),
}

/// `hook claude-code` / `hook codex`.
#[derive(Debug, Args)]
pub(crate) struct GateArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Let the stop through after this many blocks in a row in one session (default:
    /// the manifest's hook.max-blocks, else 3)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_blocks: Option<u32>,
    #[command(flatten)]
    pub manifest: ManifestArg,
    #[command(flatten)]
    pub quiet: QuietArg,
}

/// `hook allow`.
#[derive(Debug, Args)]
pub(crate) struct AllowArgs {
    #[command(flatten)]
    pub manifest: ManifestArg,
}

/// `init`.
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// The repository folder to set up
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Overwrite verify-matrix.yml and the workflow if they exist
    #[arg(long)]
    pub force: bool,
    /// Write only verify-matrix.yml, no workflow
    #[arg(long)]
    pub no_workflow: bool,
    /// The CI service to write a pipeline for: `github` (.github/workflows/verify-matrix.yml)
    /// or `gitlab` (.gitlab-ci.yml, from the manifest's environments; an existing
    /// manifest is kept and used)
    #[arg(long, value_enum, value_name = "SERVICE", default_value = "github")]
    pub ci: super::flags::Ci,
    #[command(flatten)]
    pub quiet: QuietArg,
}

/// `mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// Where runs write their results, under the repository root (each run replaces
    /// `OUT/latest`)
    #[arg(long, value_name = "DIR", default_value = "verify-matrix-results/mcp")]
    pub out: PathBuf,
    #[command(flatten)]
    pub manifest: ManifestArg,
}

/// `exec`.
#[derive(Debug, Args)]
pub(crate) struct ExecArgs {
    /// The id recorded as `command_id`
    #[arg(long, value_name = "ID", default_value = "command")]
    pub command_id: String,
    /// Where the command runs
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub cwd: PathBuf,
    /// Where the full output goes
    #[arg(long, value_name = "FILE")]
    pub log_path: PathBuf,
    /// The check is required (the default)
    #[arg(long, overrides_with = "optional")]
    pub required: bool,
    /// The check is not required
    #[arg(long, overrides_with = "required")]
    pub optional: bool,
    /// The gate type recorded
    #[arg(long, value_enum, default_value_t = GateArg::Custom)]
    pub gate_type: GateArg,
    /// A gate that ran nothing fails
    #[arg(long)]
    pub must_be_effective: bool,
    /// Kill the command's process group after this many seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_seconds: u64,
    /// SIGTERM → SIGKILL grace, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub grace_seconds: u64,
    /// The exit code that passes
    #[arg(
        long,
        value_name = "CODE",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub exit_code: i32,
    /// Retries of retryable failures (timeouts, leaks, transient errors)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub retries: u32,
    /// The shell the command runs under
    #[arg(long, value_enum, default_value_t = ShellArg::Bash)]
    pub shell: ShellArg,
    /// The environment name recorded (default: VERIFY_MATRIX_ENV, else "local")
    #[arg(long, value_name = "ENV")]
    pub environment: Option<String>,
    /// Let long-lived watch/dev commands run
    #[arg(long)]
    pub allow_watch: bool,
    /// The command: one argument is a shell command line; several are quoted and joined
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `--gate-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum GateArg {
    Test,
    Typecheck,
    Lint,
    Build,
    Format,
    Custom,
}

/// `--shell`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ShellArg {
    Bash,
    Sh,
    Pwsh,
    Powershell,
    Cmd,
    None,
}

/// `plan`.
#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    /// Only this environment
    #[arg(long, value_name = "ENV")]
    pub env: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = PlanFormat::Table)]
    pub format: PlanFormat,
    #[command(flatten)]
    pub manifest: ManifestArg,
}

/// `plan --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum PlanFormat {
    /// A table for people
    Table,
    /// The plan as JSON
    Json,
    /// `{"include":[…]}` for a workflow's `strategy.matrix` (also `matrix=` in $GITHUB_OUTPUT under Actions)
    Github,
}

/// `run`, with the shared options it takes.
#[derive(Debug, Args)]
pub(crate) struct RunCommand {
    #[command(flatten)]
    pub run: RunArgs,
    /// What is printed when the run ends: the table of every pair, only the checklist
    /// answer (one JSON object, as `render --format aot`), or the INFRA_BLOCKED report of
    /// the environments this machine is not (`signal`)
    #[arg(long, value_enum, default_value_t = RunFormat::Table)]
    pub format: RunFormat,
    #[command(flatten)]
    pub manifest: ManifestArg,
    #[command(flatten)]
    pub color: ColorArg,
    #[command(flatten)]
    pub quiet: QuietArg,
}

/// What `run` prints when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum RunFormat {
    // The table of every pair, and the verdict.
    Table,
    // Only the AoT loop verifier's answer.
    Aot,
    // The INFRA_BLOCKED report of the environments that could not run here.
    Signal,
}

/// `run`'s own options (also accepted with no command name).
#[derive(Debug, Clone, Args, Default, PartialEq)]
pub(crate) struct RunArgs {
    /// The environment to run (repeatable; default: VERIFY_MATRIX_ENV, then `detect` rules,
    /// then the only environment)
    #[arg(long = "env", value_name = "ENV")]
    pub envs: Vec<String>,
    /// Every environment: those this machine is run here, those with `enter:` are entered,
    /// the others are reported as not run here (the whole matrix and its verdict)
    #[arg(long, conflicts_with = "envs")]
    pub all: bool,
    /// Folder for verify-matrix-ENV.json and logs/ENV/CHECK.log
    #[arg(long, value_name = "DIR", default_value = "verify-matrix-results")]
    pub out: PathBuf,
    /// Checks run at once
    #[arg(long, short = 'j', value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: u16,
    /// Stop starting checks after the first required failure (the rest are NOT_RUN)
    #[arg(long)]
    pub fail_fast: bool,
    /// A test that passed only on a retry (flaky) fails its check, as `fail-on-flaky:
    /// true` on every check does
    #[arg(long)]
    pub fail_on_flaky: bool,
    /// Run only this check (repeatable)
    #[arg(long = "check", value_name = "ID")]
    pub checks: Vec<String>,
    /// Stop the whole run after this long (e.g. "45m"; overrides the manifest's run-timeout)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub run_timeout: Option<std::time::Duration>,
    /// Run shard K of N of a sharded environment (`2/4`): its slice of each split check,
    /// and in shard 1 the checks that run whole (default: the whole environment)
    #[arg(long, value_name = "K/N")]
    pub shard: Option<crate::results::Shard>,
    /// The history database whose test durations `split: timing` splits by [default:
    /// .verify-matrix/history.sqlite beside the manifest, when it exists]
    #[arg(long, value_name = "FILE")]
    pub timings: Option<PathBuf>,
}

fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let duration = match text.parse::<u64>() {
        Ok(secs) => std::time::Duration::from_secs(secs),
        Err(_) => humantime::parse_duration(text).map_err(|e| e.to_string())?,
    };
    if duration.is_zero() {
        return Err("must be greater than zero".to_owned());
    }
    Ok(duration)
}

impl RunArgs {
    /// Whether any option differs from its default.
    pub fn any_set(&self) -> bool {
        !self.envs.is_empty()
            || self.all
            || !self.checks.is_empty()
            || self.fail_fast
            || self.fail_on_flaky
            || self.jobs != 1
            || self.run_timeout.is_some()
            || self.shard.is_some()
            || self.timings.is_some()
            || self.out.as_os_str() != "verify-matrix-results"
    }
}

/// `merge`.
#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// Write the report (JSON) here
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// What to print
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Partial result files, or folders searched recursively (any artifact layout)
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub manifest: ManifestArg,
    #[command(flatten)]
    pub color: ColorArg,
    #[command(flatten)]
    pub quiet: QuietArg,
    #[command(flatten)]
    pub trust: TrustFlags,
    #[command(flatten)]
    pub render: RenderFlags,
}

/// `render`.
#[derive(Debug, Args)]
pub(crate) struct RenderArgs {
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Markdown)]
    pub format: Format,
    /// A report (from `merge`), or partial result files (from `run`) and folders searched
    /// for them recursively, as `merge` reads them (by default the folder `run` writes)
    #[arg(value_name = "FILE", default_value = "verify-matrix-results")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub manifest: ManifestArg,
    #[command(flatten)]
    pub color: ColorArg,
    #[command(flatten)]
    pub quiet: QuietArg,
    #[command(flatten)]
    pub trust: TrustFlags,
    #[command(flatten)]
    pub render: RenderFlags,
}

/// `publish`.
#[derive(Debug, Args)]
pub(crate) struct PublishArgs {
    /// The report (from `merge`)
    #[arg(value_name = "REPORT", required_unless_present = "pending")]
    pub report: Option<PathBuf>,
    /// Mark the head commit as being verified instead of publishing a report: an
    /// in-progress check run, and the PR comment's pending mark above the previous
    /// result (run at the start of a workflow run, e.g. in the plan job)
    #[arg(long, conflicts_with = "report")]
    pub pending: bool,
    #[command(flatten)]
    pub manifest: ManifestArg,
    #[command(flatten)]
    pub quiet: QuietArg,
    #[command(flatten)]
    pub verbose: VerboseArg,
    #[command(flatten)]
    pub publish: PublishFlags,
}

/// `report`.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// Write the report (JSON) here
    #[arg(long, value_name = "FILE", default_value = "verify-matrix-report.json")]
    pub out: PathBuf,
    /// Partial result files, or folders searched recursively (any artifact layout)
    #[arg(required_unless_present = "files", value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Runner reports a workflow already makes (JUnit, TRX, NUnit, xUnit.net, CTRF,
    /// Jest/Vitest/Mocha/RSpec/Playwright JSON, `go test -json`, TAP), by glob
    /// (repeatable; `!GLOB` excludes): alone, instead of result files; with PATHs, added
    /// to the manifest's checks. Each file is one environment's: `{environment}` in the
    /// glob names it, else --environment, else the file's first folder; `{check}` names
    /// its check, else `tests`
    #[arg(long, value_name = "GLOB")]
    pub files: Vec<String>,
    /// With --files: the environments expected (names, a JSON array of names, or the
    /// plan's matrix; with PATHs, by default the manifest's); one without a file has no
    /// result
    #[arg(long, value_name = "NAME", value_delimiter = ',', requires = "files")]
    pub environments: Vec<String>,
    /// With --files, under GitHub Actions: the environments expected are the legs of this
    /// run's matrix job JOB (`JOB (a, b)` is `a-b`; `{environment}` in JOB matches a
    /// whole job name), as GitHub lists the run's jobs
    #[arg(
        long,
        value_name = "JOB",
        requires = "files",
        conflicts_with = "environments"
    )]
    pub environments_from_job: Option<String>,
    /// With --files: the one environment every file belongs to (a single leg)
    #[arg(long, value_name = "NAME", requires = "files")]
    pub environment: Option<String>,
    #[command(flatten)]
    pub manifest: ManifestArg,
    #[command(flatten)]
    pub color: ColorArg,
    #[command(flatten)]
    pub quiet: QuietArg,
    #[command(flatten)]
    pub verbose: VerboseArg,
    #[command(flatten)]
    pub trust: TrustFlags,
    /// The workflow run was cancelled (e.g. `${{ contains(needs.*.result, 'cancelled') }}`):
    /// the verdict is NOT VERIFIED with that reason and the check run is `cancelled`
    #[arg(long)]
    pub cancelled: bool,
    /// When the step fails: `not-verified` (any NOT VERIFIED), `failures` (a required
    /// check failed; missing results tolerated), `never` (a trial: publish, exit 0). The
    /// verdict, the comment and the check run say NOT VERIFIED either way
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = FailOnStep::NotVerified)]
    pub fail_on: FailOnStep,
    #[command(flatten)]
    pub publish: PublishFlags,
}

/// `report --fail-on`: which verdicts fail the step (its exit code). Never what the
/// verdict says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FailOnStep {
    /// Any NOT VERIFIED (the gate)
    NotVerified,
    /// Only a failed required check: missing and incomplete results are tolerated
    Failures,
    /// Never: a trial that publishes every verdict and exits 0
    Never,
}

/// `validate-signal`.
#[derive(Debug, Args)]
pub(crate) struct ValidateSignalArgs {
    /// Also reject claims that differ from this report's real results
    #[arg(long, value_name = "REPORT")]
    pub against: Option<PathBuf>,
    /// The environments expected, instead of those the manifest declares
    #[arg(long, value_name = "ENV", value_delimiter = ',')]
    pub environments: Vec<String>,
    /// The signal text (`-` for standard input)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub manifest: ManifestArg,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_definition_is_consistent() {
        super::command().debug_assert();
    }
}

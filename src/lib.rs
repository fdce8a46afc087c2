//! cargo verify-matrix: proves a pull request passed every required check in every
//! environment it must pass in.
//!
//! Data flows one way, one stage per module, each importing only the stages before it
//! (`tests/architecture.rs` enforces it):
//!
//! ```text
//!  verify-matrix.yml
//!        │
//!   [manifest] ── parse, validate, digest                       src/manifest/
//!        │
//!     [plan] ──── the (check × environment) pairs               src/plan/
//!        │
//!      [run] ──── one environment's checks: processes, leaks,   src/run/
//!        │        gate effectiveness → a partial result + logs
//!        │ (artifacts, one per environment)
//!   [results] ─── merge the partial results, judge each pair,   src/results/
//!        │        coverage and the verdict → the report
//!        ├──► [render] ── markdown | table | json | junit |      src/render/
//!        │                html | signals
//!        └──► [publish] ─ job summary, PR comment, check run    src/publish/
//!
//!   [gate] ────── what the coding-agent gate trusts (the        src/gate/
//!                 manifest as committed), and its judgement
//!   [cli] ─────── flags and environment → settings; one file   src/cli/
//!                 per command; the only stage that prints
//! ```
//!
//! Leaves every stage may use: [`shell`] (the command-line lexer), [`actions_env`]
//! (every GitHub Actions variable, read once), [`gitlab_env`] (GitLab CI's, carried
//! by it), [`untrusted`] (bounds, quoting and
//! redaction for what pull requests produce), [`exit_code`].
//!
//! Each stage is a pure function of its inputs except `run` (processes), which owns the
//! async runtime and the signals ([`run::session`]), and `publish`'s sending.

pub mod actions_env;
pub mod cli;
pub mod exit_code;
pub mod gate;
pub mod gitlab_env;
pub mod history;
pub mod manifest;
pub mod plan;
pub mod publish;
pub mod render;
pub mod results;
pub mod run;
pub mod shell;
pub mod untrusted;

/// Runs the program with the process's arguments; returns the exit code.
pub fn main() -> i32 {
    cli::main()
}

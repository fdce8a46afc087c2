//! cargo verify-matrix: proves a pull request passed every required check in every
//! environment it must pass in.
//!
//! Data flows one way:
//!
//! ```text
//! verify-matrix.yml ─► manifest ─► plan ─► run ──► partial results (JSON + logs, per env)
//!                                                      │  (artifacts)
//!                        report ◄─ merge ◄─────────────┘
//!                          │
//!                          ├─► render (markdown | table | json | junit | html | signals)
//!                          └─► publish
//! ```
//!
//! Each stage is a pure function of its inputs except `run` (processes), which owns the
//! async runtime.

pub mod actions_env;
pub mod cli;
pub mod exit_code;
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

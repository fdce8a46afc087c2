//! Running one environment's share of the matrix: processes, check kinds, the result file.

pub mod argv;
pub mod auto;
pub mod check;
pub mod effect;
pub mod kinds;
pub mod leaks;
pub mod policy;
pub mod process;
pub mod runner;
pub mod session;

pub use runner::{
    EnvironmentLock, RunError, RunEvent, RunOptions, lock_environments, result_path,
    run_environment,
};

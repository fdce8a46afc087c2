//! Running one environment's share of the matrix: processes, check kinds, the result file.

pub mod argv;
pub mod auto;
pub mod check;
pub mod effect;
pub mod enter;
pub mod facts;
pub mod here;
pub mod imported;
pub mod kinds;
pub mod leaks;
pub mod platform;
pub mod policy;
pub mod process;
pub mod reports;
pub mod runner;
pub mod secrets;
pub mod session;
pub mod split;
pub mod watchdog;

pub use runner::{
    EnvironmentLock, RunError, RunEvent, RunOptions, lock_environments, result_path,
    run_environment,
};

/// Why a check could not be started or its evidence not gathered (a refusal, a command
/// `shell: none` cannot split, no test suite for `test: auto`, an invalid glob): said in
/// the check's result, which is then an ERROR.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CheckError(pub String);

impl std::ops::Deref for CheckError {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<String> for CheckError {
    fn from(reason: String) -> CheckError {
        CheckError(reason)
    }
}

impl From<&str> for CheckError {
    fn from(reason: &str) -> CheckError {
        CheckError(reason.to_owned())
    }
}

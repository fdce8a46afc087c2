//! The command line: parsing (with the cargo subcommand shim), settings, one file per
//! command, and everything the tool prints. The stages below never print; what they
//! have to say comes back as values and is said here.
//!
//! - `args`: the clap definitions, private to the CLI;
//! - `settings`: flags and environment, read once, and the render options built from them;
//! - `judge`: reading untrusted results and reports, and the manifest they are judged against;
//! - `engine`: the seam for CI services (GitHub Actions, GitLab CI): the run's jobs,
//!   publishing; `publishing` and `gitlab_publishing` put a report on each;
//! - `live`: the live view of a run;
//! - `local`: running this machine's share of the matrix, shared by `run` and `hook`;
//! - `trust` and `state`: what the coding-agent gate trusts, kept outside the repository;
//! - `commands/`: one file per command.

#![allow(clippy::print_stderr, clippy::print_stdout)]

mod args;
mod commands;
mod engine;
mod error;
mod flags;
mod gitlab_publishing;
mod judge;
mod live;
mod local;
mod publishing;
mod settings;

use std::ffi::OsString;
use std::io::Write as _;

pub use error::Error;

/// Runs the program with the process's arguments and returns its exit code.
pub fn main() -> i32 {
    run_with(std::env::args_os().collect())
}

/// Runs the program with `args` (the first is the program name) and returns its exit code.
pub fn run_with(args: Vec<OsString>) -> i32 {
    let (args, bin_name) = strip_cargo_shim(args);
    let parsed = args::command()
        .bin_name(bin_name)
        .try_get_matches_from(&args)
        .and_then(|matches| <args::Cli as clap::FromArgMatches>::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            let _ = std::io::stdout().flush();
            let text = e.to_string();
            // Manifest diagnostics are already rendered with their own `error:` lines.
            if text.starts_with("error: ") {
                eprintln!("{text}");
            } else {
                eprintln!("error: {text}");
            }
            e.exit_code()
        }
    }
}

/// Cargo runs `cargo-verify-matrix verify-matrix ARGS` for `cargo verify-matrix ARGS`:
/// drop that word, and name the program the way the user called it.
fn strip_cargo_shim(mut args: Vec<OsString>) -> (Vec<OsString>, &'static str) {
    if args.get(1).is_some_and(|a| a == "verify-matrix") {
        args.remove(1);
        args[0] = OsString::from("cargo verify-matrix");
        (args, "cargo verify-matrix")
    } else {
        (args, "cargo-verify-matrix")
    }
}

/// Writes `text` to stdout; a closed pipe (`| head`) is not an error.
pub(crate) fn print_stdout(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    stdout_written(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}

/// Prints `value` as indented JSON, streamed: a report of a large matrix is hundreds of
/// megabytes indented, never held as one string.
pub(crate) fn print_json_pretty<T: serde::Serialize>(value: &T) -> Result<(), Error> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    stdout_written(
        serde_json::to_writer_pretty(&mut out, value)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush()),
    )
}

/// How a write to stdout ended: a closed pipe (`| head`) is not an error.
fn stdout_written(written: std::io::Result<()>) -> Result<(), Error> {
    match written {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(source) => Err(Error::Io {
            context: "failed to write to stdout".to_owned(),
            source,
        }),
    }
}

/// The async runtime of publishing.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    crate::run::session::runtime().map_err(runtime_error)
}

/// The session `run` and `exec` work in: the runtime, the subreaper, the signals.
pub(crate) fn session() -> Result<crate::run::session::Session, Error> {
    crate::run::session::Session::start().map_err(runtime_error)
}

fn runtime_error(source: std::io::Error) -> Error {
    Error::Io {
        context: "cannot start the async runtime".to_owned(),
        source,
    }
}

//! `exec`: one command under the verification-worker contract (docs/formats.md §4). Whatever
//! happens (refusal, timeout, leak, a program that does not exist, an unwritable log),
//! stdout carries exactly one JSON object with every field, and nothing else.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::cli::args::{ExecArgs, GateArg, ShellArg};
use crate::cli::live::announce;
use crate::cli::{Error, print_stdout, session};
use crate::exit_code;
use crate::manifest::{Check, CheckId, CheckKind, EnvScope, ExpectExit, Gate, Policy, Shell};
use crate::results::{CheckResult, Status};
use crate::run::check::CheckJob;

/// Runs `exec` and returns its exit code: 0 pass, 1 fail or error, 130 interrupted.
pub(super) fn run(args: &ExecArgs) -> Result<i32, Error> {
    let command = match args.command.as_slice() {
        [one] => one.clone(),
        many => shell_words::join(many),
    };
    let environment = args
        .environment
        .clone()
        .or_else(|| {
            std::env::var("VERIFY_MATRIX_ENV")
                .ok()
                .filter(|v| !v.is_empty())
        })
        .unwrap_or_else(|| "local".to_owned());
    let gate = gate(args.gate_type);
    let check = Check {
        id: CheckId(args.command_id.clone()),
        name: None,
        kind: CheckKind::Run(command),
        scope: EnvScope::All,
        expect: ExpectExit::Code(args.exit_code),
        gate,
        must_be_effective: args.must_be_effective,
        required: !args.optional,
        timeout: Duration::from_secs(args.timeout_seconds),
        grace: Duration::from_secs(args.grace_seconds),
        retries: args.retries,
        reports: Vec::new(),
        min_tests: None,
        tests_may_drop: None,
        cwd: args.cwd.display().to_string(),
        env: BTreeMap::new(),
        shell: Some(shell(args.shell)),
        line: None,
        shards: None,
        split: None,
        list: None,
        shards_may_overlap: false,
        fail_on_flaky: false,
        quarantine: Vec::new(),
    };
    let job = CheckJob {
        check,
        environment: environment.clone(),
        shell: shell(args.shell),
        env: BTreeMap::from([
            ("VERIFY_MATRIX_ENV".to_owned(), environment),
            ("VERIFY_MATRIX_CHECK".to_owned(), args.command_id.clone()),
        ]),
        cwd: args.cwd.clone(),
        root: args.cwd.clone(),
        log_file: args.log_path.clone(),
        log_path: args.log_path.display().to_string(),
        policy: Policy {
            deny: Vec::new(),
            allow_watch: args.allow_watch,
        },
        echo: None,
        slice: None,
        timings: Default::default(),
        masks: crate::untrusted::redacting::Masks::new(crate::untrusted::Redactor::from_vars(
            std::env::vars(),
        )),
        out_dir: args
            .log_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        running: None,
    };
    let mut session = session()?;
    let result = session.block_on(announce, job.run(session.stop()));
    let mut result = result.unwrap_or_else(|e| unwritable_log(&job, &args.log_path, &e));
    crate::run::secrets::redact_result(&mut result, &job.masks.snapshot());
    // `exec` prints exactly the fields of docs/formats.md §4, which programs parse as
    // they are: a long cause is in the log (and, for a refusal, in `refused`).
    result.cause = None;
    let mut json = serde_json::to_string(&result).unwrap_or_default();
    json.push('\n');
    print_stdout(&json)?;
    Ok(if session.interrupted() {
        exit_code::INTERRUPTED
    } else if result.status == Status::Pass {
        exit_code::OK
    } else {
        exit_code::FAILED
    })
}

fn unwritable_log(job: &CheckJob, path: &Path, e: &std::io::Error) -> CheckResult {
    let mut result = job.blank_result(
        Status::Error,
        &format!("cannot write the log `{}`: {e}", path.display()),
    );
    result.retryable = false;
    result
}

fn gate(arg: GateArg) -> Gate {
    match arg {
        GateArg::Test => Gate::Test,
        GateArg::Typecheck => Gate::Typecheck,
        GateArg::Lint => Gate::Lint,
        GateArg::Build => Gate::Build,
        GateArg::Format => Gate::Format,
        GateArg::Custom => Gate::Custom,
    }
}

fn shell(arg: ShellArg) -> Shell {
    match arg {
        ShellArg::Bash => Shell::Bash,
        ShellArg::Sh => Shell::Sh,
        ShellArg::Pwsh => Shell::Pwsh,
        ShellArg::Powershell => Shell::Powershell,
        ShellArg::Cmd => Shell::Cmd,
        ShellArg::None => Shell::None,
    }
}

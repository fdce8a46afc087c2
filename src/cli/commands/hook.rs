//! `hook claude-code` / `hook codex`: a coding agent's Stop hook. The agent's client
//! sends the hook's JSON on stdin when the agent is about to stop; the manifest's checks
//! for this machine run (the manifest's `hook:` subset, `--env`, `--check`), and the
//! answer is the client's documented Stop-hook JSON on stdout, exit 0:
//!
//! - the checks passed: `{"systemMessage": …}` (the stop goes through), saying VERIFIED
//!   only for a run of every required pair, else that the run was partial;
//! - they did not: `{"decision": "block", "reason": …}` (the agent keeps working, with
//!   the reason as its next instruction): what failed, its log, the log's last lines;
//! - after `max-blocks` blocks in a row in one session (counted per session id under the
//!   run's folder; a stop that is not itself the continuation of a block starts the count
//!   again), the stop goes through with a message that says it is NOT VERIFIED.
//!
//! Anything that keeps the checks from being judged (unreadable input, a broken
//! manifest, a taken lock) blocks too, with the error as the reason: the gate fails
//! closed, and the count still ends the loop.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::cli::args::{HookArgs, HookClient};
use crate::cli::live::{Live, Mode};
use crate::cli::local::{Ran, only_checks, result_path, run_here};
use crate::cli::settings::{Settings, quoter};
use crate::cli::{Error, print_stdout};
use crate::manifest::Manifest;
use crate::plan::select;
use crate::render::hook::{TAIL_LINES, block_reason};
use crate::render::{Quoted, RenderOptions, Tails};
use crate::results::{Verdict, write_json_atomic};
use crate::untrusted::{cut, read_at_most};

/// The most bytes of hook input read.
const MAX_INPUT_BYTES: u64 = 1024 * 1024;

/// The folder, under the run's folder, where each session's count of blocks is kept.
const STATE_DIR: &str = ".verify-matrix-hook";

/// What the clients send (both speak the same Stop-hook input; unknown fields ignored).
#[derive(Debug, Default, Deserialize)]
struct HookInput {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    hook_event_name: Option<String>,
    #[serde(default)]
    stop_hook_active: bool,
    #[serde(default)]
    cwd: Option<PathBuf>,
}

/// The answer: a block with its reason, or a message for the person watching.
#[derive(Debug, Serialize)]
struct Answer {
    #[serde(skip_serializing_if = "Option::is_none")]
    decision: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(rename = "systemMessage", skip_serializing_if = "Option::is_none")]
    system_message: Option<String>,
}

impl Answer {
    fn block(reason: String) -> Answer {
        Answer {
            decision: Some("block"),
            reason: Some(reason),
            system_message: None,
        }
    }

    fn allow(message: String) -> Answer {
        Answer {
            decision: None,
            reason: None,
            system_message: Some(message),
        }
    }
}

/// The count of blocks in a row for one session.
#[derive(Debug, Default, Serialize, Deserialize)]
struct SessionState {
    session_id: String,
    blocks: u32,
}

pub(super) fn run(settings: &Settings, args: &HookArgs) -> Result<i32, Error> {
    // Claude Code and Codex speak the same Stop-hook JSON; the name says which client
    // the settings snippet is for, and leaves room for one that differs.
    let (HookClient::ClaudeCode | HookClient::Codex) = args.client;
    let input = match read_input() {
        Ok(input) => input,
        Err(message) => {
            let answer = Answer::block(format!(
                "verify-matrix could not read the hook's input, so nothing was verified: {message}"
            ));
            return answer_with(&answer);
        }
    };
    if let Some(event) = &input.hook_event_name
        && event != "Stop"
        && event != "SubagentStop"
    {
        eprintln!("verify-matrix: `{event}` is not a Stop event; nothing to gate");
        return Ok(crate::exit_code::OK);
    }
    if let Some(dir) = input.cwd.as_deref().filter(|d| d.is_dir()) {
        std::env::set_current_dir(dir).map_err(|source| Error::Io {
            context: format!("cannot enter the session's folder {}", dir.display()),
            source,
        })?;
    }
    let session = input.session_id.clone().unwrap_or_default();
    let state_path = state_path(&args.run.out, &session);
    let mut state = read_state(&state_path, &session);
    if !input.stop_hook_active {
        // Not the continuation of a block: a new run of blocks starts.
        state.blocks = 0;
    }
    let manifest = settings.load_manifest();
    let max_blocks = args
        .max_blocks
        .or_else(|| manifest.as_ref().ok().map(|m| m.hook.max_blocks))
        .unwrap_or(crate::manifest::DEFAULT_MAX_BLOCKS);
    let outcome = manifest.and_then(|m| gate(settings, args, &m));
    let answer = match &outcome {
        Ok(ran) if ran.report.verdict == Verdict::Verified => {
            state.blocks = 0;
            Answer::allow(passed_message(ran))
        }
        Ok(ran) if state.blocks >= max_blocks => {
            state.blocks = 0;
            Answer::allow(format!(
                "verify-matrix: NOT VERIFIED. The stop was blocked {max_blocks} times in a row in this session; it is let through so that the session does not loop. Full results: {}",
                result_files(args, ran)
            ))
        }
        Ok(ran) => {
            state.blocks += 1;
            Answer::block(failed_reason(args, ran, state.blocks, max_blocks))
        }
        Err(e) if state.blocks >= max_blocks => {
            state.blocks = 0;
            let e = bounded(&e.to_string());
            Answer::allow(format!(
                "verify-matrix: NOT VERIFIED (nothing could be checked: {e}). The stop was blocked {max_blocks} times in a row in this session; it is let through so that the session does not loop."
            ))
        }
        Err(e) => {
            state.blocks += 1;
            let e = bounded(&e.to_string());
            Answer::block(format!(
                "verify-matrix could not check this work, so the stop is blocked (block {} of at most {max_blocks} in a row): {e}",
                state.blocks
            ))
        }
    };
    write_state(&state_path, &state);
    answer_with(&answer)
}

/// Runs the hook's checks in the hook's environments.
fn gate(settings: &Settings, args: &HookArgs, manifest: &Manifest) -> Result<Ran, Error> {
    let envs = given_or(&args.run.envs, &manifest.hook.environments, |e| e.as_str());
    let checks = given_or(&args.run.checks, &manifest.hook.checks, |c| c.as_str());
    let environments = select::select(manifest, &envs, &select::Host)?;
    let only = only_checks(manifest, &checks)?;
    let mode = if settings.quiet {
        Mode::Quiet
    } else {
        Mode::Lines
    };
    let live = Live::new(
        mode,
        &args.run.out,
        usize::from(args.run.jobs),
        quoter(None),
    );
    let source = settings.source(&manifest.dir);
    run_here(manifest, &environments, &only, &args.run, &source, &live)
}

/// An error's text cut to fit the agent's few kilobytes (a manifest with many problems
/// lists them all), marked where it was cut.
fn bounded(text: &str) -> String {
    const ERROR_LIMIT: usize = crate::render::hook::REASON_LIMIT - 512;
    if text.len() <= ERROR_LIMIT {
        return text.to_owned();
    }
    format!(
        "{} (cut; run `cargo verify-matrix plan` to see it all)",
        cut(text, ERROR_LIMIT)
    )
}

/// The names given on the command line, else those of the manifest's `hook:` section.
fn given_or<T>(given: &[String], hook: &[T], name: impl Fn(&T) -> &str) -> Vec<String> {
    if given.is_empty() {
        hook.iter().map(|t| name(t).to_owned()).collect()
    } else {
        given.to_vec()
    }
}

/// What the person watching is told when the stop goes through on passing checks.
fn passed_message(ran: &Ran) -> String {
    let report = &ran.report;
    let envs: Vec<&str> = ran.names.iter().map(|e| e.as_str()).collect();
    match &report.partial {
        Some(partial) => format!(
            "verify-matrix: the hook's checks passed in {} ({} pairs). {}",
            envs.join(", "),
            report.rows.len(),
            partial.line()
        ),
        None => format!(
            "verify-matrix: All Required Environments: VERIFIED ({} pairs in {})",
            report.rows.len(),
            envs.join(", ")
        ),
    }
}

/// The reason the agent is given when its stop is blocked.
fn failed_reason(args: &HookArgs, ran: &Ran, blocks: u32, max_blocks: u32) -> String {
    let report = &ran.report;
    let what = match &report.partial {
        Some(partial) => format!("The hook's checks failed ({})", partial.line()),
        None => "All Required Environments: NOT VERIFIED".to_owned(),
    };
    let interrupted = if ran.interrupted {
        " The run was interrupted before every check finished."
    } else {
        ""
    };
    let intro = format!(
        "verify-matrix: {what}, so this stop is blocked (block {blocks} of at most {max_blocks} in a row).{interrupted} Fix what fails below, then stop again:"
    );
    let options = RenderOptions {
        log_root: Some(args.run.out.clone()),
        tail_lines: TAIL_LINES * 4,
        quoter: quoter(None),
        ..RenderOptions::for_report(report)
    };
    let quoted = Quoted::new(report, &options.quoter);
    let tails = Tails::load(&quoted, &options, Tails::SHORT);
    block_reason(
        &quoted,
        &tails,
        &args.run.out.display().to_string(),
        &intro,
        &result_files(args, ran),
    )
}

/// The result files the run wrote, where the agent can read everything.
fn result_files(args: &HookArgs, ran: &Ran) -> String {
    ran.names
        .iter()
        .map(|env| result_path(&args.run.out, env).display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The hook's input: at most [`MAX_INPUT_BYTES`] of JSON on stdin (none from a terminal:
/// a person trying the hook by hand).
fn read_input() -> Result<HookInput, String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(HookInput::default());
    }
    let bytes = read_at_most(stdin.lock(), MAX_INPUT_BYTES)
        .map_err(|e| format!("stdin: {e}"))?
        .ok_or_else(|| format!("stdin holds more than {MAX_INPUT_BYTES} bytes"))?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(HookInput::default());
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "stdin is not the hook's JSON object: {e} (line {}, column {})",
            e.line(),
            e.column()
        )
    })
}

/// Where the count of `session` is kept: a digest of its id, so that any id makes a
/// plain file name inside the folder.
fn state_path(out: &Path, session: &str) -> PathBuf {
    let digest = Sha256::digest(session.as_bytes());
    let name: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    out.join(STATE_DIR).join(format!("{name}.json"))
}

/// The session's count; a missing or unreadable file (or one of another session) is a
/// count of zero.
fn read_state(path: &Path, session: &str) -> SessionState {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<SessionState>(&bytes).ok())
        .filter(|state| state.session_id == session)
        .unwrap_or_else(|| SessionState {
            session_id: session.to_owned(),
            blocks: 0,
        })
}

/// Saves the session's count (written aside, then renamed into place). A count that
/// cannot be saved is said, not fatal: the client's own cap still ends a loop.
fn write_state(path: &Path, state: &SessionState) {
    let saved = match path.parent() {
        Some(dir) => std::fs::create_dir_all(dir).map_err(|e| e.to_string()),
        None => Ok(()),
    }
    .and_then(|()| write_json_atomic(path, state).map_err(|e| e.to_string()));
    if let Err(e) = saved {
        eprintln!(
            "verify-matrix: cannot save the count of blocks in {}: {e}",
            path.display()
        );
    }
}

/// Prints the answer as one line of JSON; exit 0 (the answer is in the JSON).
fn answer_with(answer: &Answer) -> Result<i32, Error> {
    let mut json = serde_json::to_string(answer).unwrap_or_default();
    json.push('\n');
    print_stdout(&json)?;
    Ok(crate::exit_code::OK)
}

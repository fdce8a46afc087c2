//! `hook claude-code` / `hook codex` / `hook gemini` / `hook cursor`: a coding agent's
//! Stop hook (Gemini CLI's AfterAgent, Cursor's `stop`). The agent's client
//! sends the hook's JSON on stdin when the agent is about to stop; the manifest's checks
//! for this machine run (the manifest's `hook:` subset, `--env`, `--check`), and the
//! answer is the client's documented Stop-hook JSON on stdout, exit 0:
//!
//! - the checks passed: `{"systemMessage": …}` (the stop goes through), saying VERIFIED
//!   only for a run of every required pair, else that the run was partial;
//! - they did not: `{"decision": "block", "reason": …}` (the agent keeps working, with
//!   the reason as its next instruction): what failed, its log, the log's last lines;
//! - the agent changed the manifest in a way not proven a strengthening (see
//!   [`crate::gate::trust`]): a block that names the changes, with a `systemMessage`
//!   telling the person how to allow them;
//! - after `max-blocks` blocks in a row in one session (counted per session in the
//!   user's state folder, outside the repository; a stop that is not itself the
//!   continuation of a block starts the count again), the stop goes through with a
//!   message that says it is NOT VERIFIED and why.
//!
//! Anything that keeps the checks from being judged (unreadable input, a broken
//! manifest, a taken lock) blocks too, with the error as the reason: the gate fails
//! closed, and the count still ends the loop.
//!
//! `hook allow` is the person's side: it records that the working copy's manifest, as
//! it is now, may be judged by.

use std::io::{BufRead as _, IsTerminal};

use crate::cli::args::{AllowArgs, GateArgs, HookArgs, HookCommand};
use crate::cli::live::{Live, Mode};
use crate::cli::local::{Ran, only_checks, result_path, run_here};
use crate::cli::settings::{Settings, current_dir, quoter};
use crate::cli::{Error, print_stdout};
use crate::gate::protocol::{Answer, Client, Event, HookInput};
use crate::gate::session::Session;
use crate::gate::strengthen::Change;
use crate::gate::trust::{self, Blocked, Judged, Repository, Snapshot, short};
use crate::manifest::Manifest;
use crate::plan::select::{self, Surroundings};
use crate::render::hook::{TAIL_LINES, block_reason};
use crate::render::{Quoted, RenderOptions, Tails};
use crate::results::Verdict;
use crate::run::facts;
use crate::run::here::{Refusal, admit};
use crate::untrusted::{cut, read_at_most};

/// The most bytes of hook input read.
const MAX_INPUT_BYTES: u64 = 1024 * 1024;

/// How long the gate's run may take unless `--run-timeout` says otherwise (or the
/// manifest's `run-timeout` is shorter): inside the 600 s the book has each client give
/// the hook, so that the gate answers (a block) before its client kills it.
const HOOK_RUN_LIMIT: std::time::Duration = std::time::Duration::from_secs(540);

pub(super) fn run(settings: &Settings, args: &HookArgs) -> Result<i32, Error> {
    match &args.command {
        // Claude Code and Codex speak the same Stop-hook JSON; the name says which
        // client the settings snippet is for, and leaves room for one that differs.
        HookCommand::ClaudeCode(gate) | HookCommand::Codex(gate) => {
            gate_stop(settings, gate, Client::StopHook)
        }
        HookCommand::Gemini(gate) => gate_stop(settings, gate, Client::Gemini),
        HookCommand::Cursor(gate) => gate_stop(settings, gate, Client::Cursor),
        HookCommand::Allow(allow) => allow_manifest(settings, allow),
        HookCommand::Pin(pin) => pin_manifest(settings, pin),
    }
}

fn gate_stop(settings: &Settings, args: &GateArgs, client: Client) -> Result<i32, Error> {
    // The checks the gate runs are the agent's code, run as the same user: they may not
    // reach into this process (its memory, its stdout through /proc).
    crate::run::platform::guard_this_process();
    // Whatever goes wrong, the client gets an answer: never an exit that lets the stop
    // through unanswered.
    match judge_stop(settings, args, client) {
        Ok(code) => Ok(code),
        Err(e) => answer_in(
            client,
            &Answer::block(format!(
                "verify-matrix could not check this work, so the stop is blocked: {}",
                bounded(&e.to_string())
            )),
        ),
    }
}

fn judge_stop(settings: &Settings, args: &GateArgs, client: Client) -> Result<i32, Error> {
    let answer_with = |answer: &Answer| answer_in(client, answer);
    let input = match read_input() {
        Ok(input) => input,
        Err(message) => {
            let answer = Answer::block(format!(
                "verify-matrix could not read the hook's input, so nothing was verified: {message}"
            ));
            return answer_with(&answer);
        }
    };
    let is_start = match input.event(client) {
        Event::Start => true,
        Event::Stop => false,
        Event::Other(event) => {
            eprintln!("verify-matrix: `{event}` is not a Stop event; nothing to gate");
            return answer_with(&Answer::nothing());
        }
        Event::Unjudged(status) => {
            eprintln!("verify-matrix: the turn ended `{status}`; nothing to gate");
            return answer_with(&Answer::nothing());
        }
    };
    let repo = match current_dir()
        .map_err(|e| e.to_string())
        .and_then(|here| Repository::of_project(&here))
    {
        Ok(repo) => repo,
        // Without the state folder no count is kept: the client's flag that this stop
        // continues a block is the only cap left.
        Err(e) if input.continues_a_block() => {
            return answer_with(&Answer::allow(format!(
                "verify-matrix: NOT VERIFIED (nothing could be checked: {}). The stop was blocked once already and no count of blocks can be kept, so it is let through.",
                bounded(&e)
            )));
        }
        Err(e) => {
            return answer_with(&Answer::block(format!(
                "verify-matrix could not check this work, so the stop is blocked: {}",
                bounded(&e)
            )));
        }
    };
    std::env::set_current_dir(&repo.root).map_err(|source| Error::Io {
        context: format!("cannot enter the repository {}", repo.root.display()),
        source,
    })?;
    // The commit the session is judged from: HEAD at its start event; a session first
    // seen at a stop has none the agent could not have made but its upstream's.
    let mut state = match Session::of(
        &repo,
        &input.session(),
        is_start,
        settings.manifest.as_deref(),
        settings.dialect,
    ) {
        Ok(state) => state,
        Err(why) if input.continues_a_block() => {
            return answer_with(&Answer::allow(format!(
                "verify-matrix: NOT VERIFIED (nothing could be checked: {}). The stop was blocked once already and no count of blocks can be kept, so it is let through.",
                bounded(&why)
            )));
        }
        Err(why) => {
            return answer_with(&Answer::block(format!(
                "verify-matrix could not check this work, so the stop is blocked: {}",
                bounded(&why)
            )));
        }
    };
    if is_start {
        // The session's start: the commit its manifest is trusted at is now pinned.
        save_state(&state);
        return answer_with(&Answer::nothing());
    }
    if !input.continues_a_block() {
        // Not the continuation of a block: a new run of blocks starts.
        state.blocks = 0;
    }
    let judged = state.trusted().and_then(|snapshot| {
        trust::judge(
            &repo,
            snapshot,
            settings.manifest.as_deref(),
            settings.dialect,
        )
    });
    let max_blocks = args.max_blocks.unwrap_or(match &judged {
        Ok(Judged::Run { manifest, .. }) => manifest.hook.max_blocks,
        Ok(Judged::Blocked(blocked)) => blocked.max_blocks,
        Err(_) => crate::manifest::DEFAULT_MAX_BLOCKS,
    });
    let capped = state.blocks >= max_blocks;
    let loop_note = format!(
        "The stop was blocked {max_blocks} times in a row in this session; it is let through so that the session does not loop."
    );
    let answer = match judged {
        Ok(Judged::Blocked(blocked)) if capped => Answer::allow(format!(
            "verify-matrix: NOT VERIFIED: the manifest was changed in ways not proven to strengthen the gate ({}), and no person allowed it. {loop_note}",
            bounded(&listed(&blocked.changes))
        )),
        Ok(Judged::Blocked(blocked)) => {
            state.blocks += 1;
            blocked_answer(&repo.root, &blocked, state.blocks, max_blocks)
        }
        Ok(Judged::Run { manifest, notes }) => {
            let mut notes = notes_text(&notes);
            match gate(settings, args, &manifest) {
                Ok((ran, elsewhere)) => {
                    notes.push_str(&elsewhere_note(&elsewhere));
                    match ran {
                        None => Answer::allow(format!(
                            "verify-matrix: NOT VERIFIED here: no environment of the manifest is this machine, so nothing ran.{notes}"
                        )),
                        Some(ran) => ran_answer(
                            args, ran, &mut state, capped, max_blocks, &loop_note, &notes,
                        ),
                    }
                }
                Err(e) => error_answer(&e.to_string(), &mut state, capped, max_blocks, &loop_note),
            }
        }
        Err(e) => error_answer(&e, &mut state, capped, max_blocks, &loop_note),
    };
    if !answer.blocks() {
        state.blocks = 0;
    }
    save_state(&state);
    answer_with(&answer)
}

/// The answer for a run of the gate's checks: the stop goes through when they passed
/// (or past the cap, NOT VERIFIED), else it is blocked with the failures.
fn ran_answer(
    args: &GateArgs,
    ran: Ran,
    state: &mut Session,
    capped: bool,
    max_blocks: u32,
    loop_note: &str,
    notes: &str,
) -> Answer {
    match ran {
        ran if ran.report.verdict == Verdict::Verified => {
            state.blocks = 0;
            Answer::allow(format!("{}{notes}", passed_message(&ran)))
        }
        ran if capped => Answer::allow(format!(
            "verify-matrix: NOT VERIFIED: {}. {loop_note} Full results: {}{notes}",
            bounded(&ran.report.reasons.join("; ")),
            result_files(args, &ran)
        )),
        ran => {
            state.blocks += 1;
            let answer = Answer::block(failed_reason(args, &ran, state.blocks, max_blocks));
            if notes.is_empty() {
                answer
            } else {
                answer.telling(format!("verify-matrix:{notes}"))
            }
        }
    }
}

/// The environments this machine is not, for the person: CI verifies them.
fn elsewhere_note(elsewhere: &[Refusal]) -> String {
    if elsewhere.is_empty() {
        return String::new();
    }
    let named: Vec<String> = elsewhere
        .iter()
        .map(|r| {
            let what = r.why.split(';').next().unwrap_or(&r.why);
            format!(
                "{} ({})",
                r.environment,
                what.strip_prefix("it ").unwrap_or(what)
            )
        })
        .collect();
    format!(" Verified in CI, not here: {}.", named.join(", "))
}

/// The answer when nothing could be judged: a block, or past the cap the stop let
/// through, NOT VERIFIED.
fn error_answer(
    e: &str,
    state: &mut Session,
    capped: bool,
    max_blocks: u32,
    loop_note: &str,
) -> Answer {
    let e = bounded(e);
    if capped {
        return Answer::allow(format!(
            "verify-matrix: NOT VERIFIED (nothing could be checked: {e}). {loop_note}"
        ));
    }
    state.blocks += 1;
    Answer::block(format!(
        "verify-matrix could not check this work, so the stop is blocked (block {} of at most {max_blocks} in a row): {e}",
        state.blocks
    ))
}

/// The block for a manifest changed in ways not proven to strengthen it: the changes
/// for the agent, and for the person the way to allow them.
fn blocked_answer(
    root: &std::path::Path,
    blocked: &Blocked,
    blocks: u32,
    max_blocks: u32,
) -> Answer {
    let at = blocked
        .commit
        .as_deref()
        .map(short)
        .unwrap_or("the session's start");
    let path = blocked.path.display();
    let mut reason = format!(
        "verify-matrix: `{path}` was changed in ways not proven to strengthen the gate, so this stop is blocked (block {blocks} of at most {max_blocks} in a row). The gate judges by the manifest committed at {at}; undo these changes, or ask the person to allow them:\n"
    );
    for change in blocked.changes.iter().filter(|c| !c.proven) {
        reason.push_str(&format!("- {}\n", change.change));
    }
    let reason = bounded(&reason);
    let allow = if blocked.key.is_some() {
        format!(
            "or allowed by you: run `cargo verify-matrix hook allow` in {}",
            root.display()
        )
    } else {
        "nothing else can be allowed".to_owned()
    };
    let message = format!(
        "verify-matrix: the agent changed `{path}` in ways not proven to strengthen the gate ({}). Nothing is verified until the change is undone, {allow}",
        bounded(&listed(&blocked.changes)),
    );
    Answer::block(reason).telling(message)
}

/// The changes not proven strengthenings, one phrase each.
fn listed(changes: &[Change]) -> String {
    changes
        .iter()
        .filter(|c| !c.proven)
        .map(|c| c.change.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The notes for the person, as a sentence after the message (or nothing).
fn notes_text(notes: &[String]) -> String {
    notes.iter().map(|n| format!(" Note: {n}.")).collect()
}

/// Saves the session's state. A state that cannot be saved is said, not fatal: the
/// client's own flag still ends a loop.
fn save_state(state: &Session) {
    if let Err(e) = state.save() {
        eprintln!("verify-matrix: {e}");
    }
}

/// `hook allow`: a person allows the working copy's manifest (and the files it names)
/// as they are now.
fn allow_manifest(settings: &Settings, _args: &AllowArgs) -> Result<i32, Error> {
    let repo = Repository::around(&current_dir()?).map_err(Error::Usage)?;
    std::env::set_current_dir(&repo.root).map_err(|source| Error::Io {
        context: format!("cannot enter the repository {}", repo.root.display()),
        source,
    })?;
    let head = repo.head();
    let review = trust::review(&repo, settings.manifest.as_deref(), settings.dialect)
        .map_err(Error::Usage)?;
    let path = review.path.display().to_string();
    let mut text = format!(
        "The Stop-hook gate in {} will judge by `{path}` as it is now ({}), and the files it names as they are now.\n",
        repo.root.display(),
        review.digest
    );
    match (review.committed, head.as_deref()) {
        (true, Some(head)) if review.changes.is_empty() => {
            text.push_str(&format!(
                "It is the manifest committed at {}.\n",
                short(head)
            ));
        }
        (true, Some(head)) => {
            text.push_str(&format!(
                "Changes against the manifest committed at {}:\n",
                short(head)
            ));
            for change in &review.changes {
                let mark = if change.proven {
                    "strengthens"
                } else {
                    "not proven"
                };
                text.push_str(&format!("  - [{mark}] {}\n", change.change));
            }
        }
        _ => text.push_str("No manifest is committed to compare it with.\n"),
    }
    eprint!("{text}");
    if !ask_a_person("allow")? {
        eprintln!("Not allowed.");
        return Ok(crate::exit_code::USAGE);
    }
    let saved = repo.allow(&review.key).map_err(Error::Usage)?;
    eprintln!("Allowed (kept in {}).", saved.display());
    Ok(crate::exit_code::OK)
}

/// `hook pin`: a person pins the manifest committed at HEAD (and the files it names) as
/// what sessions that send no start event are judged by.
fn pin_manifest(settings: &Settings, _args: &AllowArgs) -> Result<i32, Error> {
    let repo = Repository::around(&current_dir()?).map_err(Error::Usage)?;
    let snapshot = Snapshot::take(&repo, settings.manifest.as_deref(), settings.dialect)
        .map_err(Error::Usage)?;
    let what = match (&snapshot.path, &snapshot.commit) {
        (Some(path), Some(commit)) => {
            format!("`{}` as committed at {}", path.display(), short(commit))
        }
        (None, Some(commit)) => format!("no manifest (none is committed at {})", short(commit)),
        _ => "no manifest (the repository has no commit)".to_owned(),
    };
    eprintln!(
        "Sessions of an agent's client that sends no start event will be judged in {} by {what}.",
        repo.root.display()
    );
    if !ask_a_person("pin")? {
        eprintln!("Not pinned.");
        return Ok(crate::exit_code::USAGE);
    }
    let saved = repo.pin(snapshot).map_err(Error::Usage)?;
    eprintln!("Pinned (kept in {}).", saved.display());
    Ok(crate::exit_code::OK)
}

/// Asks the person at the terminal to type `word`; refused without a terminal (as an
/// agent's shell runs a command).
fn ask_a_person(word: &str) -> Result<bool, Error> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Error::Usage(format!(
            "`hook {word}` asks a person at a terminal; an agent's command has none. Run it yourself"
        )));
    }
    eprint!("Type `{word}` to {word} it: ");
    let mut line = String::new();
    stdin
        .lock()
        .read_line(&mut line)
        .map_err(|source| Error::Io {
            context: "cannot read the answer".to_owned(),
            source,
        })?;
    Ok(line.trim() == word)
}

/// The machine as the gate sees it: the variable that names an environment by hand
/// (`VERIFY_MATRIX_ENV`) is not read — an agent could set it.
struct Here;

impl Surroundings for Here {
    fn var(&self, name: &str) -> Option<String> {
        (name != "VERIFY_MATRIX_ENV")
            .then(|| select::Host.var(name))
            .flatten()
    }
    fn os(&self) -> &str {
        select::Host.os()
    }
    fn arch(&self) -> &str {
        select::Host.arch()
    }
    fn file_exists(&self, path: &str) -> bool {
        select::Host.file_exists(path)
    }
}

/// Runs the hook's checks in the hook's environments that this machine is: those named
/// (`--env`, `hook.environments`), each of which must be this machine; else every
/// variant and every environment this machine is, the others named as CI's (`None`
/// when that leaves nothing to run).
fn gate(
    settings: &Settings,
    args: &GateArgs,
    manifest: &Manifest,
) -> Result<(Option<Ran>, Vec<Refusal>), Error> {
    let envs = given_or(&args.run.envs, &manifest.hook.environments, |e| e.as_str());
    let checks = given_or(&args.run.checks, &manifest.hook.checks, |c| c.as_str());
    let machine = facts::this_machine(&settings.actions);
    let (environments, elsewhere) = if envs.is_empty() {
        admit(
            manifest.environments.iter().collect(),
            &facts::this(&machine),
            &Here,
        )
    } else {
        let chosen = select::select(manifest, &envs, &Here)?;
        let (environments, refused) = admit(chosen, &facts::this(&machine), &Here);
        if !refused.is_empty() {
            let lines: Vec<String> = refused.iter().map(Refusal::line).collect();
            return Err(Error::Usage(format!(
                "the gate names environments this machine is not, whose results it will not write: {}",
                lines.join("; ")
            )));
        }
        (environments, refused)
    };
    if environments.is_empty() {
        return Ok((None, elsewhere));
    }
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
    // The gate answers before its client gives up on it (a hook the client kills lets
    // the stop through): the run is bounded by HOOK_RUN_LIMIT unless a limit is given.
    let mut run = args.run.clone();
    if run.run_timeout.is_none() {
        run.run_timeout = Some(
            manifest
                .run_timeout
                .map_or(HOOK_RUN_LIMIT, |limit| limit.min(HOOK_RUN_LIMIT)),
        );
    }
    let ran = run_here(
        manifest,
        &environments,
        &[],
        &only,
        &run,
        &source,
        &live,
        &machine,
    )?;
    Ok((Some(ran), elsewhere))
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
    let pairs = match report.rows.len() {
        1 => "1 pair".to_owned(),
        n => format!("{n} pairs"),
    };
    match &report.partial {
        Some(partial) => format!(
            "verify-matrix: the hook's checks passed in {} ({pairs}). {}",
            envs.join(", "),
            partial.line()
        ),
        None => format!(
            "verify-matrix: All Required Environments: VERIFIED ({pairs} in {})",
            envs.join(", ")
        ),
    }
}

/// The reason the agent is given when its stop is blocked.
fn failed_reason(args: &GateArgs, ran: &Ran, blocks: u32, max_blocks: u32) -> String {
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
fn result_files(args: &GateArgs, ran: &Ran) -> String {
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
    HookInput::parse(&bytes)
}

/// Prints the answer in `client`'s words; exit 0 (the answer is in the JSON).
fn answer_in(client: Client, answer: &Answer) -> Result<i32, Error> {
    let said = answer.said_to(client);
    if let Some(log) = said.log {
        eprintln!("{log}");
    }
    if let Some(line) = said.stdout {
        print_stdout(&line)?;
    }
    Ok(crate::exit_code::OK)
}

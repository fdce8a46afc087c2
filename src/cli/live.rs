//! What `run` shows while it runs:
//!
//! - under GitHub Actions, each check's output inside `::group::<check> (<env>)` /
//!   `::endgroup::` (streamed live with one job, replayed from the log with several), and
//!   an `::error` annotation per required failure: at most 10, then one `::notice::`
//!   counting the rest;
//! - on a terminal, a live display with one line per running check and its elapsed
//!   time, then a line per finished check and the log tail of each failure;
//! - otherwise (or with `--quiet`), one line per finished check.

use std::collections::HashMap;
use std::io::{IsTerminal as _, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use compact_str::CompactString;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::results::logs::tail;
use crate::results::{CheckResult, Status};
use crate::run::RunEvent;
use crate::run::process::Echo;
use crate::run::session::Interrupt;
use crate::untrusted::Quoter;

/// GitHub shows at most this many error annotations per step.
pub const MAX_ANNOTATIONS: usize = 10;
/// Log lines shown under a failure on a terminal.
const TAIL_LINES: usize = 15;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    GitHub,
    Terminal,
    Lines,
    /// `-q` outside Actions: nothing until the final table.
    Quiet,
}

impl Mode {
    /// GitHub Actions (groups and annotations, even when quiet) › quiet › a terminal on
    /// stderr › plain lines.
    pub fn detect(quiet: bool, actions: bool) -> Mode {
        if actions {
            Mode::GitHub
        } else if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            Mode::Terminal
        } else {
            Mode::Lines
        }
    }
}

/// The live reporter of one `run`.
pub struct Live {
    mode: Mode,
    out_dir: PathBuf,
    /// With one job under Actions, output streams to stdout as it comes.
    stream: Option<Arc<LineTracker>>,
    state: Mutex<State>,
    /// Summaries and log tails are quoted (secrets masked) before they are shown.
    quoter: Quoter,
}

#[derive(Default)]
struct State {
    multi: Option<MultiProgress>,
    bars: HashMap<(CompactString, CompactString), ProgressBar>,
    annotations: usize,
    unannotated: usize,
}

impl Live {
    /// A reporter for a run writing under `out_dir` with `jobs` checks at once.
    pub fn new(mode: Mode, out_dir: &Path, jobs: usize, quoter: Quoter) -> Live {
        let stream = (mode == Mode::GitHub && jobs == 1).then(|| Arc::new(LineTracker::default()));
        let multi = (mode == Mode::Terminal)
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        Live {
            mode,
            out_dir: out_dir.to_path_buf(),
            stream,
            state: Mutex::new(State {
                multi,
                ..State::default()
            }),
            quoter,
        }
    }

    /// Where the runner should copy output live, if anywhere.
    pub fn echo(&self) -> Option<Echo> {
        self.stream.as_ref().map(|tracker| {
            Echo(Arc::new(Mutex::new(TrackedStdout {
                tracker: Arc::clone(tracker),
            })))
        })
    }

    /// Reacts to one run event.
    pub fn event(&self, event: RunEvent<'_>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            RunEvent::Started { check, environment } => {
                self.started(&mut state, check, environment)
            }
            RunEvent::Finished { result } => self.finished(&mut state, result),
        }
    }

    /// Ends the display: the count of failures beyond the annotation limit.
    pub fn finish(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(multi) = state.multi.take() {
            let _ = multi.clear();
        }
        if self.mode == Mode::GitHub && state.unannotated > 0 {
            stdout_line(&format!(
                "::notice::{} more failed check{} not annotated (GitHub shows {MAX_ANNOTATIONS} error annotations per step); see the table below",
                state.unannotated,
                if state.unannotated == 1 { "" } else { "s" }
            ));
        }
    }

    fn started(&self, state: &mut State, check: &str, environment: &str) {
        match self.mode {
            Mode::GitHub if self.stream.is_some() => {
                stdout_line(&format!(
                    "::group::{} ({})",
                    escape_data(check),
                    escape_data(environment)
                ));
                if let Some(tracker) = &self.stream {
                    tracker.at_line_start.store(true, Ordering::SeqCst);
                }
            }
            Mode::Terminal => {
                if let Some(multi) = &state.multi {
                    let bar = multi.add(ProgressBar::new_spinner());
                    bar.set_style(
                        ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                    bar.set_message(format!("{environment} {check}"));
                    bar.enable_steady_tick(Duration::from_millis(120));
                    state.bars.insert((environment.into(), check.into()), bar);
                }
            }
            _ => {}
        }
    }

    fn finished(&self, state: &mut State, result: &CheckResult) {
        let summary = self.quoter.quote(&result.summary);
        let line = status_line(result, &summary);
        let failed = matches!(result.status, Status::Fail | Status::Error);
        match self.mode {
            Mode::GitHub => {
                if let Some(tracker) = &self.stream {
                    if !tracker.at_line_start.load(Ordering::SeqCst) {
                        stdout_line("");
                    }
                } else if result.status != Status::NotRun {
                    stdout_line(&format!(
                        "::group::{} ({})",
                        escape_data(&result.command_id),
                        escape_data(&result.environment)
                    ));
                    self.replay_log(result);
                }
                if self.stream.is_some() || result.status != Status::NotRun {
                    stdout_line("::endgroup::");
                }
                stdout_line(&line);
                if failed && result.required {
                    if state.annotations < MAX_ANNOTATIONS {
                        state.annotations += 1;
                        stdout_line(&format!(
                            "::error title={}::{}",
                            escape_property(&format!(
                                "{} failed in {}",
                                result.command_id, result.environment
                            )),
                            escape_data(&summary)
                        ));
                    } else {
                        state.unannotated += 1;
                    }
                }
            }
            Mode::Terminal => {
                let key = (result.environment.clone(), result.command_id.clone());
                if let Some(bar) = state.bars.remove(&key) {
                    bar.finish_and_clear();
                }
                let mut text = line;
                if failed && let Some(log_tail) = self.log_tail(result) {
                    for l in log_tail.lines() {
                        text.push_str("\n    │ ");
                        text.push_str(l);
                    }
                }
                match &state.multi {
                    Some(multi) => {
                        let _ = multi.println(text);
                    }
                    None => stderr_line(&text),
                }
            }
            Mode::Lines => stderr_line(&line),
            Mode::Quiet => {}
        }
    }

    fn log_tail(&self, result: &CheckResult) -> Option<String> {
        let path = self.out_dir.join(result.log_path.as_deref()?);
        tail(&path, TAIL_LINES, 16 * 1024)
            .filter(|t| !t.trim().is_empty())
            .map(|t| self.quoter.quote(&t))
    }

    /// With several jobs the output is shown once the check is done, from its log.
    fn replay_log(&self, result: &CheckResult) {
        let Some(path) = result.log_path.as_deref().map(|p| self.out_dir.join(p)) else {
            return;
        };
        let Ok(mut file) = std::fs::File::open(path) else {
            return;
        };
        let mut out = std::io::stdout().lock();
        let mut last = [b'\n'];
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = std::io::Read::read(&mut file, &mut buf) {
            if n == 0 {
                break;
            }
            last[0] = buf[n - 1];
            if out.write_all(&buf[..n]).is_err() {
                return;
            }
        }
        if last[0] != b'\n' {
            let _ = out.write_all(b"\n");
        }
        let _ = out.flush();
    }
}

/// `  PASS [   1.2s] linux unit_tests: passed (exit 0) in 1.2s`, with the result's
/// summary already quoted.
pub fn status_line(result: &CheckResult, summary: &str) -> String {
    let status = match (result.status, result.flaky) {
        (Status::Pass, true) => "PASS (flaky)",
        // The final table's words (the result file keeps NOT_RUN).
        (Status::NotRun, _) => "NOT RUN",
        (status, _) => status.as_str(),
    };
    format!(
        "{status:>12} [{:>7.1}s] {} {}: {}",
        result.duration_ms as f64 / 1000.0,
        result.environment,
        result.command_id,
        summary
    )
}

/// Escapes a workflow command's message (`%`, CR, LF).
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value (also `:` and `,`).
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

fn stdout_line(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

fn stderr_line(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Remembers whether streamed output ended with a newline, so `::endgroup::` always
/// starts a line of its own.
#[derive(Default)]
struct LineTracker {
    at_line_start: AtomicBool,
}

struct TrackedStdout {
    tracker: Arc<LineTracker>,
}

impl Write for TrackedStdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = std::io::stdout().lock().write(buf)?;
        if n > 0 {
            self.tracker
                .at_line_start
                .store(buf[n - 1] == b'\n', Ordering::SeqCst);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stdout().lock().flush()
    }
}

/// Says on stderr what a signal does to the run (`run`, `exec`).
pub(crate) fn announce(interrupt: Interrupt) {
    // Whoever read stderr may be gone (the server that started the run, killed): the
    // run stops all the same.
    let _ = writeln!(std::io::stderr(), "{}", interrupt.describe());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_command_escaping() {
        assert_eq!(escape_data("50% done\nnext\r"), "50%25 done%0Anext%0D");
        assert_eq!(escape_property("a: b, c"), "a%3A b%2C c");
    }
}

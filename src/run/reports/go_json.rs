//! `go test -json` (test2json) events, one JSON object per line: `run`, `output`, and a
//! test's end, `pass`, `fail` or `skip`. Every test (subtests too, as `go test -v`
//! counts them) is one result; a failure's message and output are what it printed.
//! Lines that are not events (a build error on stderr) are not tests, but one that says
//! something failed (`FAIL`, `--- FAIL`, `panic:`) is a failure outside the tests; a
//! stream with no event at all is no `go test -json` output. A failed test run again
//! after its package ended (gotestsum's `--rerun-fails` record) is one test with
//! attempts: flaky when a rerun passed, failed when none did.

use std::collections::HashMap;
use std::io::BufRead;

use serde::Deserialize;

use super::{Collector, Found, ReadError, capture};
use crate::results::TestOutcome;

/// The longest event line read.
const MAX_LINE: usize = 1024 * 1024;
/// The most tests whose output is held at once (running in parallel).
const MAX_OPEN: usize = 10_000;

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Package", default)]
    package: Option<String>,
    #[serde(rename = "Test", default)]
    test: Option<String>,
    #[serde(rename = "Elapsed", default)]
    elapsed: Option<f64>,
    #[serde(rename = "Output", default)]
    output: Option<String>,
    /// Build events (Go 1.24) name what they build here, not a `Package`.
    #[serde(rename = "ImportPath", default)]
    import_path: Option<String>,
}

/// A test that failed, remembered in case the runner runs it again (gotestsum's
/// `--rerun-fails` runs a package's failed tests again after the package ended).
struct Failed {
    /// The package's ends seen when it failed: a run of it after a later end is a
    /// rerun.
    epoch: u64,
    /// Where it is listed among the cases.
    index: Option<usize>,
    /// It was started again (a `run` event) after its package ended.
    restarted: bool,
}

/// The most failed tests remembered to see whether they are run again.
const MAX_HELD: usize = 100_000;

/// What the stream said of one package.
#[derive(Default)]
struct Package {
    /// Its own end: `pass`, `fail` or `skip` (absent: the stream stopped before it).
    end: Option<String>,
    /// Its tests that failed.
    failed: u64,
    /// What it printed outside its tests (a build error, a panic in TestMain).
    printed: String,
    /// Its own ends seen so far: more than one when a runner ran it again.
    ends: u64,
}

/// Reads `go test -json` events into `sink`.
pub(super) fn read(mut source: impl BufRead, sink: &mut Collector<'_>) -> Result<(), ReadError> {
    // What each running test printed, by package and name.
    let mut printed: HashMap<(String, String), String> = HashMap::new();
    // The tests that started and have not ended: when each started (a test run twice
    // over, `-count=2`, may start again before it ends), found by name in one step.
    let mut running: HashMap<(String, String), Vec<u64>> = HashMap::new();
    let mut open = 0usize;
    let mut packages: std::collections::BTreeMap<String, Package> = Default::default();
    let mut line = Vec::new();
    let mut number = 0u64;
    let mut events = 0u64;
    // The first line outside the events that says something failed, and where.
    let mut failed_outside: Option<(u64, String)> = None;
    // Failed tests, remembered to see whether the runner runs them again.
    let mut held: HashMap<(String, String), Failed> = HashMap::new();
    loop {
        line.clear();
        let read = read_line(&mut source, &mut line)
            .map_err(|e| ReadError::at_line(e.to_string(), number + 1))?;
        if read == 0 {
            break;
        }
        number += 1;
        let text = line.trim_ascii();
        if !text.starts_with(b"{") {
            let said = String::from_utf8_lossy(text);
            if failed_outside.is_none()
                && ["FAIL", "--- FAIL", "panic:"]
                    .iter()
                    .any(|word| said.starts_with(word))
            {
                failed_outside = Some((number, said.into_owned()));
            }
            continue;
        }
        events += 1;
        let event: Event = serde_json::from_slice(text)
            .map_err(|e| ReadError::at_line(format!("not a `go test -json` event: {e}"), number))?;
        let package = event.package.clone().unwrap_or_default();
        // Build events name an `ImportPath`, not a package: a package is what a
        // `Package` names (its end, a failed build's included, comes as its own event),
        // or the one unnamed package of `go tool test2json` run without `-p`.
        if event.import_path.is_none()
            && (packages.len() < MAX_OPEN || packages.contains_key(&package))
        {
            packages.entry(package.clone()).or_default();
        }
        let Some(test) = event.test.filter(|t| !t.is_empty()) else {
            // A package's own line: `ok  pkg  (cached)` says its tests were not run now.
            if let Some(output) = event.output.as_deref() {
                if output.contains("(cached)") && sink.noop.is_none() {
                    sink.noop = Some(output.trim().replace('\t', " "));
                }
                if let Some(p) = packages.get_mut(&package) {
                    capture(&mut p.printed, output);
                }
            }
            if matches!(event.action.as_str(), "pass" | "fail" | "skip")
                && let Some(p) = packages.get_mut(&package)
            {
                // A failure said once is not taken back by a later pass.
                if p.end.as_deref() != Some("fail") {
                    p.end = Some(event.action.clone());
                }
                p.ends += 1;
            }
            continue;
        };
        let outcome = match event.action.as_str() {
            "output" => {
                let key = (package, test);
                if printed.len() < MAX_OPEN || printed.contains_key(&key) {
                    let buffer = printed.entry(key).or_default();
                    capture(buffer, event.output.as_deref().unwrap_or_default());
                }
                continue;
            }
            "run" => {
                // Started again after its package ended: the runner's rerun.
                let epoch = packages.get(&package).map_or(0, |p| p.ends);
                if let Some(failed) = held.get_mut(&(package.clone(), test.clone()))
                    && epoch > failed.epoch
                {
                    failed.restarted = true;
                }
                if open < MAX_OPEN {
                    running.entry((package, test)).or_default().push(number);
                    open += 1;
                }
                continue;
            }
            "pass" => TestOutcome::Passed,
            "fail" => TestOutcome::Failed,
            "skip" => TestOutcome::Skipped,
            _ => continue,
        };
        let key = (package, test);
        if let Some(starts) = running.get_mut(&key) {
            starts.remove(0);
            open -= 1;
            if starts.is_empty() {
                running.remove(&key);
            }
        }
        let (package, test) = key;
        if outcome == TestOutcome::Failed
            && let Some(p) = packages.get_mut(&package)
        {
            p.failed += 1;
        }
        let output = printed
            .remove(&(package.clone(), test.clone()))
            .unwrap_or_default();
        let said = said(&output);
        let duration_ms = event
            .elapsed
            .filter(|d| d.is_finite() && *d >= 0.0)
            .map(|secs| (secs * 1000.0).round() as u64);
        let epoch = packages.get(&package).map_or(0, |p| p.ends);
        let key = (package, test);
        // A run after its package ended again is the runner's rerun of a failed test
        // (gotestsum `--rerun-fails`): one test with attempts — flaky when a rerun
        // passed, failed (listed once) while none has.
        let rerun = held
            .get(&key)
            .is_some_and(|f| f.restarted && epoch > f.epoch);
        if rerun {
            match outcome {
                TestOutcome::Passed => {
                    if let Some(failed) = held.remove(&key) {
                        sink.passed_on_rerun(failed.index);
                    }
                    continue;
                }
                TestOutcome::Failed => {
                    if let Some(failed) = held.get_mut(&key) {
                        failed.epoch = epoch;
                        failed.restarted = false;
                    }
                    continue;
                }
                _ => {}
            }
        }
        let (package, test) = &key;
        let index = sink.add(Found {
            suite: package,
            name: test,
            outcome: Some(outcome),
            duration_ms,
            message: &said,
            output: &said,
            file: None,
            line: None,
            package: Some(package),
            outside: false,
        });
        if outcome == TestOutcome::Failed && (held.len() < MAX_HELD || held.contains_key(&key)) {
            held.insert(
                key,
                Failed {
                    epoch,
                    index,
                    restarted: false,
                },
            );
        }
    }
    // A test that started and never ended (a timeout's panic, a crash, a stream cut
    // short) did not pass.
    let mut never_ended: Vec<(u64, &(String, String))> = running
        .iter()
        .flat_map(|(key, starts)| starts.iter().map(move |at| (*at, key)))
        .collect();
    never_ended.sort_unstable();
    for (_, (package, test)) in never_ended {
        let output = printed
            .remove(&(package.clone(), test.clone()))
            .unwrap_or_default();
        let said = said(&output);
        if let Some(p) = packages.get_mut(package) {
            p.failed += 1;
        }
        let message = format!("it never ended (no pass, fail or skip): {said}");
        sink.add(Found {
            suite: package,
            name: test,
            outcome: Some(TestOutcome::Error),
            duration_ms: None,
            message: message.trim_end_matches(": "),
            output: &said,
            file: None,
            line: None,
            package: Some(package),
            outside: false,
        });
    }
    if events == 0 {
        return Err(ReadError::new(
            "no `go test -json` event: not one line is a JSON event",
        ));
    }
    if let Some((at, said)) = failed_outside {
        let message = format!("line {at}, outside the events: {said}");
        sink.add(Found {
            name: "(the output around the events)",
            outcome: Some(TestOutcome::Error),
            message: &message,
            outside: true,
            ..Found::default()
        });
    }
    // A package that failed with no failed test of its own (a build that failed, a
    // panic in TestMain), or whose end the stream never reached, did not pass either.
    for (name, package) in &packages {
        let why = match package.end.as_deref() {
            Some("fail") if package.failed == 0 => "the package failed",
            Some(_) => continue,
            None => "the stream ends before the package's result",
        };
        let message = format!("{why}: {}", package.printed.trim());
        sink.add(Found {
            suite: name,
            name: "(the package itself)",
            outcome: Some(TestOutcome::Error),
            duration_ms: None,
            message: message.trim_end_matches(": "),
            output: &package.printed,
            file: None,
            line: None,
            package: Some(name),
            outside: true,
        });
    }
    Ok(())
}

/// What a test printed, without go's own framing lines (`=== RUN`, `--- FAIL`, …).
fn said(output: &str) -> String {
    output
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("=== ") || t.starts_with("--- "))
        })
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads one line (without growing past [`MAX_LINE`]: the rest is skipped).
fn read_line(source: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let buf = source.fill_buf()?;
        if buf.is_empty() {
            return Ok(total);
        }
        let (part, used, ended) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        line.extend_from_slice(&part[..part.len().min(room)]);
        source.consume(used);
        total += used;
        if ended {
            return Ok(total);
        }
    }
}

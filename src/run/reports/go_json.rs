//! `go test -json` (test2json) events, one JSON object per line: `run`, `output`, and a
//! test's end, `pass`, `fail` or `skip`. Every test (subtests too, as `go test -v`
//! counts them) is one result; a failure's message and output are what it printed.
//! Lines that are not events (a build error on stderr) are passed over.

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
}

/// Reads `go test -json` events into `sink`.
pub(super) fn read(mut source: impl BufRead, sink: &mut Collector<'_>) -> Result<(), ReadError> {
    // What each running test printed, by package and name.
    let mut printed: HashMap<(String, String), String> = HashMap::new();
    let mut line = Vec::new();
    let mut number = 0u64;
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
            continue;
        }
        let event: Event = serde_json::from_slice(text)
            .map_err(|e| ReadError::at_line(format!("not a `go test -json` event: {e}"), number))?;
        let Some(test) = event.test else {
            // A package's own line: `ok  pkg  (cached)` says its tests were not run now.
            if let Some(output) = event.output.as_deref()
                && output.contains("(cached)")
                && sink.noop.is_none()
            {
                sink.noop = Some(output.trim().replace('\t', " "));
            }
            continue;
        };
        let package = event.package.unwrap_or_default();
        let outcome = match event.action.as_str() {
            "output" => {
                let key = (package, test);
                if printed.len() < MAX_OPEN || printed.contains_key(&key) {
                    let buffer = printed.entry(key).or_default();
                    capture(buffer, event.output.as_deref().unwrap_or_default());
                }
                continue;
            }
            "pass" => TestOutcome::Passed,
            "fail" => TestOutcome::Failed,
            "skip" => TestOutcome::Skipped,
            _ => continue,
        };
        let output = printed
            .remove(&(package.clone(), test.clone()))
            .unwrap_or_default();
        let said = said(&output);
        sink.add(Found {
            suite: &package,
            name: &test,
            outcome: Some(outcome),
            duration_ms: event
                .elapsed
                .filter(|d| d.is_finite() && *d >= 0.0)
                .map(|secs| (secs * 1000.0).round() as u64),
            message: &said,
            output: &said,
            file: None,
            line: None,
            package: Some(&package),
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

//! Large reports, read and written on every core.
//!
//! Reading a report too large to hold beside its parsed form, fast: the file is read in
//! blocks, a small scanner finds where each element of `rows` begins and ends (tracking
//! only strings and nesting), and the rows are parsed from their own bytes by serde_json
//! on every core, while the few other keys are gathered and parsed as one small object.
//! Memory is the rows parsed plus a few blocks in flight, never the whole file.
//!
//! The scanner only cuts the text; serde_json still parses every byte of it. Anything
//! the scanner does not expect (a second `rows`, text after the object, a file that ends
//! early) makes it give up with `None`, and the caller reads the file the slow, exact way,
//! which words the error.
//!
//! Writing one: everything but the rows is serialized as serde_json would (the rows
//! left out), and the rows are serialized in chunks on every core and written in their
//! order between, so the file is byte for byte the one `serde_json::to_writer` writes.

use std::cell::Cell;
use std::io::{Read, Write};
use std::sync::mpsc;

use super::report::{Report, Row};

/// Bytes read from the file at a time.
const READ_BLOCK: usize = 1 << 20;
/// Bytes of rows handed to a parser at a time.
const BATCH_BYTES: usize = 4 << 20;

/// A batch of whole rows: their bytes, and where each row ends in them.
struct Batch {
    index: usize,
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

/// The report in `input`, its rows parsed on `threads` threads; `None` when the text is
/// not a JSON object the scanner can cut (the caller then reads it the exact way).
pub(crate) fn read_report(input: impl Read, threads: usize) -> Option<Report> {
    let threads = threads.max(1);
    let (to_parsers, batches) = mpsc::sync_channel::<Batch>(threads * 2);
    let batches = std::sync::Mutex::new(batches);
    std::thread::scope(|scope| {
        let (to_main, parsed) = mpsc::channel::<(usize, Option<Vec<Row>>)>();
        for _ in 0..threads {
            let (batches, to_main) = (&batches, to_main.clone());
            scope.spawn(move || {
                loop {
                    // The lock is held only to take the next batch.
                    let next = batches.lock().ok().and_then(|b| b.recv().ok());
                    let Some(batch) = next else { break };
                    let _ = to_main.send((batch.index, parse_batch(&batch)));
                }
            });
        }
        drop(to_main);
        let others = Scanner::new(input).object(&to_parsers);
        drop(to_parsers);
        let mut chunks: Vec<(usize, Option<Vec<Row>>)> = parsed.iter().collect();
        let others = others?;
        chunks.sort_by_key(|(index, _)| *index);
        let mut report: Report = super::objects::from_slice(&others).ok()?;
        let total = chunks
            .iter()
            .map(|(_, rows)| rows.as_ref().map_or(0, Vec::len))
            .sum();
        report.rows = Vec::with_capacity(total);
        for (_, rows) in chunks {
            report.rows.extend(rows?);
        }
        Some(report)
    })
}

fn parse_batch(batch: &Batch) -> Option<Vec<Row>> {
    let mut rows = Vec::with_capacity(batch.ends.len());
    let mut start = 0;
    for &end in &batch.ends {
        rows.push(super::objects::from_slice(&batch.bytes[start..end]).ok()?);
        start = end;
    }
    Some(rows)
}

/// The top level of the document, read block by block.
struct Scanner<R> {
    input: R,
    /// What is read, kept while it may still be needed.
    buf: Vec<u8>,
    /// One read's worth.
    block: Vec<u8>,
    pos: usize,
    eof: bool,
}

impl<R: Read> Scanner<R> {
    fn new(input: R) -> Self {
        Scanner {
            input,
            buf: Vec::with_capacity(READ_BLOCK * 2),
            block: vec![0; READ_BLOCK],
            pos: 0,
            eof: false,
        }
    }

    /// Reads another block onto the end of the buffer; false at the end of the input
    /// (or on a read error, which the exact reader then reports). Positions in the
    /// buffer stay valid: only [`Scanner::compact`] moves them.
    fn fill(&mut self) -> bool {
        if self.eof {
            return false;
        }
        match self.input.read(&mut self.block) {
            Ok(n) if n > 0 => {
                self.buf.extend_from_slice(&self.block[..n]);
                true
            }
            _ => {
                self.eof = true;
                false
            }
        }
    }

    /// Drops what was consumed, between values (so the buffer holds about a value and
    /// a few blocks).
    fn compact(&mut self) {
        if self.pos >= 4 * READ_BLOCK {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
    }

    /// The byte at `at` (an absolute position in the buffer), reading more as needed.
    fn byte_at(&mut self, at: usize) -> Option<u8> {
        while at >= self.buf.len() {
            if !self.fill() {
                return None;
            }
        }
        Some(self.buf[at])
    }

    fn skip_space(&mut self) -> Option<u8> {
        loop {
            let b = self.byte_at(self.pos)?;
            if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                return Some(b);
            }
            self.pos += 1;
        }
    }

    /// Where the value starting at `self.pos` ends (exclusive). Strings are skipped
    /// with their escapes; brackets are counted; a scalar ends at the first byte that
    /// cannot be in it.
    fn value_end(&mut self) -> Option<usize> {
        let mut at = self.pos;
        let mut depth = 0usize;
        loop {
            let b = self.byte_at(at)?;
            match b {
                b'"' => {
                    at = self.string_end(at)?;
                    if depth == 0 {
                        return Some(at);
                    }
                }
                b'{' | b'[' => {
                    depth += 1;
                    at += 1;
                }
                b'}' | b']' if depth == 0 => return Some(at),
                b'}' | b']' => {
                    depth -= 1;
                    at += 1;
                    if depth == 0 {
                        return Some(at);
                    }
                }
                b',' | b':' | b' ' | b'\n' | b'\r' | b'\t' if depth == 0 => return Some(at),
                _ => at += 1,
            }
        }
    }

    /// Where the object starting at `self.pos` ends (exclusive). Only braces are
    /// counted: in JSON, brackets nest inside them properly, and the scanner only cuts
    /// (serde_json checks every byte of each row afterwards).
    fn object_end(&mut self) -> Option<usize> {
        let mut at = self.pos;
        let mut depth = 0usize;
        loop {
            let rest = self.buf.get(at..).unwrap_or_default();
            let Some(i) = memchr::memchr3(b'"', b'{', b'}', rest) else {
                at = self.buf.len();
                if !self.fill() {
                    return None;
                }
                continue;
            };
            at += i;
            match self.buf[at] {
                b'"' => at = self.string_end(at)?,
                b'{' => {
                    depth += 1;
                    at += 1;
                }
                _ => {
                    depth = depth.checked_sub(1)?;
                    at += 1;
                    if depth == 0 {
                        return Some(at);
                    }
                }
            }
        }
    }

    /// Where the string starting at `at` (its opening quote) ends (after its closing
    /// quote).
    fn string_end(&mut self, at: usize) -> Option<usize> {
        let mut at = at + 1;
        loop {
            // Find the next quote or backslash in what is buffered.
            let rest = self.buf.get(at..).unwrap_or_default();
            match memchr::memchr2(b'"', b'\\', rest) {
                Some(i) => {
                    at += i;
                    if self.buf[at] == b'"' {
                        return Some(at + 1);
                    }
                    // A backslash escapes the next byte, whatever it is.
                    self.byte_at(at + 1)?;
                    at += 2;
                }
                None => {
                    at = self.buf.len();
                    if !self.fill() {
                        return None;
                    }
                }
            }
        }
    }

    /// The top-level object: every key but `rows` copied into a small object (with
    /// `"rows":[]`), the rows sent in batches to the parsers.
    fn object(mut self, parsers: &mpsc::SyncSender<Batch>) -> Option<Vec<u8>> {
        if self.skip_space()? != b'{' {
            return None;
        }
        self.pos += 1;
        let mut others = b"{".to_vec();
        let mut seen_rows = false;
        let mut first = true;
        loop {
            self.compact();
            match self.skip_space()? {
                // `{}`; after a comma a key must follow.
                b'}' if first => {
                    self.pos += 1;
                    break;
                }
                b'"' => {}
                _ => return None,
            }
            first = false;
            let key_end = self.string_end(self.pos)?;
            let key = self.buf[self.pos..key_end].to_vec();
            self.pos = key_end;
            if self.skip_space()? != b':' {
                return None;
            }
            self.pos += 1;
            if others.len() > 1 {
                others.push(b',');
            }
            others.extend_from_slice(&key);
            others.push(b':');
            if key == b"\"rows\"" {
                if seen_rows {
                    return None;
                }
                seen_rows = true;
                self.rows(parsers)?;
                others.extend_from_slice(b"[]");
            } else {
                self.skip_space()?;
                let end = self.value_end()?;
                others.extend_from_slice(&self.buf[self.pos..end]);
                self.pos = end;
            }
            match self.skip_space()? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    break;
                }
                _ => return None,
            }
        }
        // Nothing but white space may follow.
        if self.skip_space().is_some() {
            return None;
        }
        others.push(b'}');
        Some(others)
    }

    /// The `rows` array, each element's bytes found and sent on in batches.
    fn rows(&mut self, parsers: &mpsc::SyncSender<Batch>) -> Option<()> {
        if self.skip_space()? != b'[' {
            return None;
        }
        self.pos += 1;
        let mut batch = Batch {
            index: 0,
            bytes: Vec::new(),
            ends: Vec::new(),
        };
        let mut first = true;
        loop {
            self.compact();
            match self.skip_space()? {
                b']' => {
                    self.pos += 1;
                    break;
                }
                b',' if !first => {
                    self.pos += 1;
                    self.skip_space()?;
                }
                _ if first => {}
                _ => return None,
            }
            first = false;
            if self.buf[self.pos] != b'{' {
                return None;
            }
            let end = self.object_end()?;
            batch.bytes.extend_from_slice(&self.buf[self.pos..end]);
            batch.ends.push(batch.bytes.len());
            self.pos = end;
            if batch.bytes.len() >= BATCH_BYTES {
                let next = Batch {
                    index: batch.index + 1,
                    bytes: Vec::with_capacity(BATCH_BYTES + (BATCH_BYTES >> 3)),
                    ends: Vec::new(),
                };
                parsers.send(std::mem::replace(&mut batch, next)).ok()?;
            }
        }
        if !batch.ends.is_empty() {
            parsers.send(batch).ok()?;
        }
        Some(())
    }
}

thread_local! {
    /// Set while the writer serializes everything but the rows, on its own thread.
    static ROWS_LEFT_OUT: Cell<bool> = const { Cell::new(false) };
}

/// `Report::rows` serialized: the rows, or none while [`write_report`] writes the rest.
pub(crate) fn serialize_rows<S: serde::Serializer>(
    rows: &[Row],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    if ROWS_LEFT_OUT.get() {
        serializer.collect_seq(std::iter::empty::<&Row>())
    } else {
        serializer.collect_seq(rows)
    }
}

/// Rows serialized per chunk.
const ROWS_PER_CHUNK: usize = 1024;

/// Writes `report` as compact JSON to `out`, its rows serialized on `threads` threads.
pub(crate) fn write_report(
    out: &mut impl Write,
    report: &Report,
    threads: usize,
) -> std::io::Result<()> {
    write_report_in(out, report, threads.max(1), ROWS_PER_CHUNK)
}

fn write_report_in(
    out: &mut impl Write,
    report: &Report,
    threads: usize,
    rows_per_chunk: usize,
) -> std::io::Result<()> {
    /// Puts the flag back however serialization ends.
    struct LeftOut;
    impl Drop for LeftOut {
        fn drop(&mut self) {
            ROWS_LEFT_OUT.set(false);
        }
    }
    let head = {
        ROWS_LEFT_OUT.set(true);
        let _reset = LeftOut;
        serde_json::to_vec(report)?
    };
    // Everything before the rows escapes its quotes, so the first unescaped key is it.
    const ROWS: &[u8] = b"\"rows\":[";
    let at = memchr::memmem::find(&head, b"\"rows\":[]")
        .ok_or_else(|| std::io::Error::other("the report has no rows key"))?
        + ROWS.len();
    out.write_all(&head[..at])?;
    // Each round of chunks is serialized on `threads` threads while the round before
    // it is written: two rounds held at most. A chunk's buffer, once written, is the
    // next chunk's: a report's hundreds of megabytes pass through a few buffers, not
    // each through one the allocator takes from the system and hands back.
    let spare = Spare::default();
    let mut first = true;
    let mut write = |parts: Vec<std::io::Result<Vec<u8>>>| -> std::io::Result<()> {
        for part in parts {
            if !first {
                out.write_all(b",")?;
            }
            first = false;
            let part = part?;
            out.write_all(&part)?;
            spare.give(part);
        }
        Ok(())
    };
    std::thread::scope(|scope| {
        let mut ahead = None;
        for round in report.rows.chunks(rows_per_chunk * threads) {
            let spare = &spare;
            let next = scope.spawn(move || round_text(round, rows_per_chunk, spare));
            if let Some(before) = ahead.replace(next) {
                write(joined(before))?;
            }
        }
        match ahead {
            Some(last) => write(joined(last)),
            None => Ok(()),
        }
    })?;
    out.write_all(&head[at..])
}

/// What a thread gave, its panic passed on.
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Buffers written out, for the next chunks to be serialized into.
#[derive(Default)]
struct Spare(std::sync::Mutex<Vec<Vec<u8>>>);

impl Spare {
    /// A buffer written out (emptied), or a new one.
    fn take(&self) -> Vec<u8> {
        let mut buffer = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop()
            .unwrap_or_default();
        buffer.clear();
        buffer
    }

    fn give(&self, buffer: Vec<u8>) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(buffer);
    }
}

/// Each chunk of `round` (`rows_per_chunk` rows), serialized on a thread of its own.
fn round_text(
    round: &[Row],
    rows_per_chunk: usize,
    spare: &Spare,
) -> Vec<std::io::Result<Vec<u8>>> {
    std::thread::scope(|scope| {
        let mut chunks = round.chunks(rows_per_chunk);
        let mine = chunks.next().unwrap_or_default();
        let others: Vec<_> = chunks
            .map(|rows| scope.spawn(move || rows_text(rows, spare.take())))
            .collect();
        let mut parts = vec![rows_text(mine, spare.take())];
        parts.extend(others.into_iter().map(joined));
        parts
    })
}

/// `rows`, comma-separated, in `text` (empty).
fn rows_text(rows: &[Row], mut text: Vec<u8>) -> std::io::Result<Vec<u8>> {
    text.reserve(rows.len() * 640);
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            text.push(b',');
        }
        serde_json::to_writer(&mut text, row)?;
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gives its bytes one at a time, so every value straddles reads.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            match (self.0.split_first(), out.first_mut()) {
                (Some((b, rest)), Some(slot)) => {
                    *slot = *b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    /// The other keys and each row's text, as the scanner cuts `doc`.
    fn cut(doc: &str) -> Option<(String, Vec<String>)> {
        let (to_parsers, batches) = mpsc::sync_channel::<Batch>(1024);
        let others = Scanner::new(Trickle(doc.as_bytes())).object(&to_parsers)?;
        drop(to_parsers);
        let mut rows = Vec::new();
        for batch in batches.iter() {
            let mut start = 0;
            for end in batch.ends {
                rows.push(String::from_utf8(batch.bytes[start..end].to_vec()).unwrap());
                start = end;
            }
        }
        Some((String::from_utf8(others).unwrap(), rows))
    }

    #[test]
    fn rows_are_cut_at_their_own_ends_whatever_their_strings_hold() {
        let doc = r#" { "a" : "x}\"]" , "rows" : [ {"k": "a\\\"b{"} ,
            {"n": [1, {"m": "]"}], "é": "\u00e9"} ] , "z": [1, 2], "t": true, "n": -1.5e3 }
        "#;
        let (others, rows) = cut(doc).expect("cut");
        assert_eq!(
            others,
            r#"{"a":"x}\"]","rows":[],"z":[1, 2],"t":true,"n":-1.5e3}"#
        );
        assert_eq!(
            rows,
            [
                r#"{"k": "a\\\"b{"}"#,
                r#"{"n": [1, {"m": "]"}], "é": "\u00e9"}"#
            ]
        );
        assert_eq!(
            cut(r#"{"rows":[]}"#).unwrap(),
            (r#"{"rows":[]}"#.to_owned(), vec![])
        );
    }

    #[test]
    fn a_report_read_fast_is_the_report_written() {
        let manifest = crate::manifest::from_yaml_text(
            std::path::Path::new("m.yml"),
            "version: 1\nenvironments: [{name: a}, {name: b}]\nchecks: [{id: c, run: 'true'}]\n",
        )
        .unwrap();
        let mut report = Report::build_from(&manifest, Vec::new());
        let detail: crate::results::CheckResult = serde_json::from_value(serde_json::json!({
            "command_id": "c", "environment": "a", "kind": "run",
            "command": "echo \"}{\" \\ ]", "cwd": ".", "required": true,
            "must_be_effective": false, "gate_type": "custom", "status": "PASS",
            "exit_code": 0, "required_exit_code": 0, "duration_ms": 5, "log_path": null,
            "gate_effective": null, "tests_executed": null, "test_counts": null,
            "ineffective_reason": null, "summary": "ok ✓", "retryable": false,
            "attempts": 1, "flaky": false, "timed_out": false, "leaked": [], "refused": null
        }))
        .unwrap();
        for environment in ["a", "b"] {
            let mut detail = detail.clone();
            detail.environment = environment.into();
            report.rows.push(Row {
                check: "c".into(),
                environment: environment.into(),
                required: true,
                required_exit_code: Some(0),
                exit_code: 0,
                result: crate::results::RowResult::Pass,
                detail: Box::new(detail),
            });
        }
        let text = serde_json::to_string(&report).unwrap();
        for threads in [1, 2, 3] {
            let read = read_report(Trickle(text.as_bytes()), threads).expect("taken");
            assert_eq!(
                serde_json::to_value(&read).unwrap(),
                serde_json::to_value(&report).unwrap()
            );
        }
        // Written on several threads in chunks of every size, it is what serde_json
        // writes, byte for byte.
        for _ in 0..5 {
            report.rows.extend(report.rows.clone());
        }
        let whole = serde_json::to_vec(&report).unwrap();
        for (threads, per_chunk) in [(1, 1), (2, 1), (2, 3), (3, 7), (4, 64), (2, 4096)] {
            let mut written = Vec::new();
            write_report_in(&mut written, &report, threads, per_chunk).unwrap();
            assert!(
                written == whole,
                "{threads} threads, {per_chunk} rows a chunk"
            );
        }
        let mut none = Report::build_from(&manifest, Vec::new());
        none.rows.clear();
        let mut written = Vec::new();
        write_report(&mut written, &none, 2).unwrap();
        assert_eq!(written, serde_json::to_vec(&none).unwrap());
    }

    #[test]
    fn anything_unexpected_is_left_to_the_exact_reader() {
        for doc in [
            r#"{"rows": [], "rows": []}"#,
            r#"{"rows": []} trailing"#,
            r#"{"rows": [{"a": 1}"#,
            r#"{"rows": [{"a": "never closed}]}"#,
            r#"{"rows": [1, 2]}"#,
            r#"{"rows": [{}, , {}]}"#,
            r#"{"rows": [{}, ]}"#,
            r#"{"rows": [], }"#,
            r#"{"a": 1, "rows": [],}"#,
            r#"{"rows": [{}] "a": 1}"#,
            r#"[{"rows": []}]"#,
            r#"{"a" 1}"#,
            "",
        ] {
            assert_eq!(cut(doc), None, "{doc}");
        }
    }
}

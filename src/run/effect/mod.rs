//! Gate effectiveness: did a green gate really do its work? A `cargo test` that ran 0
//! tests, a Gradle task that was `UP-TO-DATE`, a `go test` result from cache all exit 0.
//!
//! The log is read line by line (a huge log is never held whole), ANSI escapes removed,
//! and every line offered to each runner's parser in turn, behind one multi-word search
//! made from the parsers' own trigger words, so that most lines cost no regex at all.
//! A line with an escape is looked at without its escapes, as the parsers read it (one
//! inside a word would hide the word), and a word a line begins with is also looked for
//! behind Maven's level.
//! Counts from several runners in one log (a `make test` running two suites) are added
//! up.
//!
//! Each runner family is one file here, implementing the `Parser` trait. Adding a runner is a
//! new file (its patterns, its trigger words, its reading of a line), its name in the
//! `runners!` list, and its logs under `fixtures/runner-logs/<runner>/` with the counts
//! expected beside each.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::LazyLock;

use crate::manifest::Gate;
use crate::results::TestCounts;
use crate::results::logs::{strip_ansi, strip_ansi_into};

/// What the log says about the gate.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assessment {
    pub gate_effective: Option<bool>,
    pub tests_executed: Option<u64>,
    pub test_counts: Option<TestCounts>,
    pub ineffective_reason: Option<String>,
    /// Evidence without a test count, for the summary: `go test` without `-v` or
    /// `-json` reports packages only ("2 packages passed").
    pub packages: Option<String>,
    /// The log showed the work skipped (up to date, from a cache): no report of the
    /// run's tests outweighs that.
    pub noop: bool,
}

/// Reads the log at `path` and judges a gate of kind `gate`.
pub fn assess_file(gate: Gate, path: &Path) -> Assessment {
    assess_file_from(gate, path, 0)
}

/// Like [`assess_file`], reading from byte `offset` (the start of the last attempt).
pub fn assess_file_from(gate: Gate, path: &Path, offset: u64) -> Assessment {
    use std::io::{Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return Assessment::default();
    };
    if file.seek(SeekFrom::Start(offset)).is_err() {
        return Assessment::default();
    }
    assess_reader(gate, BufReader::with_capacity(256 * 1024, file))
}

/// Judges a gate of kind `gate` from the log's bytes as `reader` gives them: the file,
/// or the blocks the writer puts in it as they are written ([`BlockReader`]).
pub fn assess_reader(gate: Gate, reader: impl BufRead) -> Assessment {
    let mut scan = Scan::new(gate);
    for_each_line(reader, unread_lines, Some(&TRIGGER), |line, words| {
        scan.raw_line(line, words)
    });
    scan.finish()
}

/// The blocks written to a log, as they are written (from the thread writing it), read
/// as one stream: the scan runs beside the write, and the log is never read again.
pub struct BlockReader {
    blocks: std::sync::mpsc::Receiver<Vec<u8>>,
    block: Vec<u8>,
    at: usize,
}

impl BlockReader {
    pub fn new(blocks: std::sync::mpsc::Receiver<Vec<u8>>) -> BlockReader {
        BlockReader {
            blocks,
            block: Vec::new(),
            at: 0,
        }
    }
}

impl std::io::Read for BlockReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let buf = self.fill_buf()?;
        let n = buf.len().min(out.len());
        out[..n].copy_from_slice(&buf[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for BlockReader {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.at >= self.block.len() {
            // The writer is done (its sender dropped): the end of the log.
            let Ok(block) = self.blocks.recv() else {
                return Ok(&[]);
            };
            (self.block, self.at) = (block, 0);
        }
        Ok(&self.block[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.block.len());
    }
}

/// How many of the first bytes of `buf` (which begins a line) are whole lines that no
/// parser reads: none holds a trigger word, nor begins as a raw reader's lines do.
/// One vectorised search over the whole buffer, so that a log of lines no runner wrote
/// costs no more than reading it.
fn unread_lines(buf: &[u8]) -> usize {
    let trigger = &*TRIGGER;
    if buf
        .first()
        .is_some_and(|&first| trigger.line_first_bytes[usize::from(first)])
        && trigger
            .line_starts
            .iter()
            .any(|p| buf.starts_with(p.as_bytes()))
    {
        return 0;
    }
    let Some(any) = &trigger.lines else {
        return 0;
    };
    // The first word, or escape (a line with one is read: an escape inside a word hides
    // the word from the search), looked for in a window doubled until one is found: the
    // search costs what the lines passed over cost, wherever the first one is. Each
    // window's search begins where the last one's ended, less a word's length but one
    // (a word it could not see whole): every byte is looked at once.
    let (mut searched, mut window) = (0, 4096);
    let read_from = loop {
        let end = window.min(buf.len());
        let escape = memchr::memchr(ESCAPE, &buf[searched..end]).map_or(end, |at| searched + at);
        let from = searched.saturating_sub(trigger.longest - 1);
        match any.find_in(buf, aho_corasick::Span::from(from..escape)) {
            // A line that begins with a word begins after the line end the match begins with.
            Some(m) if buf[m.start()] == b'\n' => break m.start() + 1,
            Some(m) => break m.start(),
            None if escape < end || end == buf.len() => break escape,
            None => (searched, window) = (end, window * 2),
        }
    };
    memchr::memrchr(b'\n', &buf[..read_from]).map_or(0, |end| end + 1)
}

/// The byte every ANSI escape sequence begins with.
const ESCAPE: u8 = 0x1b;

/// The longest part of a line that is looked at: summaries are short, and a command
/// printing one endless line must not make the tool hold it.
const MAX_LINE: usize = 64 * 1024;

/// Calls `f` with each line of `reader` (without its newline), each cut to
/// [`MAX_LINE`] bytes, holding no more than one such line at a time; the whole lines
/// that `unread` says begin what is read next (at a line's start) are passed over.
///
/// With `trigger`, a line read where it is in the buffer comes with its trigger words
/// ([`Words`]): those its bytes hold, or, for a line with escapes, the line without them
/// and the words that holds. Each is found by one vectorised search over many lines
/// ([`Trigger::words_in`]), not by a walk of every byte of every line; other lines come
/// with [`Words::Unknown`].
fn for_each_line(
    mut reader: impl BufRead,
    unread: impl Fn(&[u8]) -> usize,
    trigger: Option<&Trigger>,
    mut f: impl FnMut(&[u8], Words<'_>),
) {
    let mut line = Vec::with_capacity(1024);
    // Where the log's bytes are (the offset of the buffer's first), and what the last
    // search for the trigger words found.
    let (mut at, mut ahead) = (0u64, Ahead::default());
    let mut stripped = StrippedRun::default();
    // Where most lines are read (a log of test results), looking for lines to pass
    // over costs more than it saves: after a few lines in a row that are read, it
    // waits a while before it looks again.
    let (mut read_in_a_row, mut wait) = (0u32, 0u32);
    loop {
        let buf = match reader.fill_buf() {
            Ok([]) => break,
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if line.is_empty() {
            if wait > 0 {
                wait -= 1;
            } else {
                let passed = unread(buf);
                if passed > 0 {
                    read_in_a_row = 0;
                    reader.consume(passed);
                    at += passed as u64;
                    continue;
                }
                read_in_a_row += 1;
                if read_in_a_row >= 8 {
                    (read_in_a_row, wait) = (0, 64);
                }
            }
        }
        // A line of the coloured run stripped already: its end is known (and where it
        // is, in the buffer, it is still there).
        let held = match trigger {
            Some(_) if line.is_empty() => stripped
                .seek(at)
                .filter(|&len| buf.get(len) == Some(&b'\n')),
            _ => None,
        };
        // The line's end, and whether an escape is before it: one search for both.
        let (newline, escaped) = match held {
            Some(_) => (held, true),
            None => match memchr::memchr2(b'\n', ESCAPE, buf) {
                Some(e) if buf[e] == ESCAPE => {
                    (memchr::memchr(b'\n', &buf[e..]).map(|i| e + i), true)
                }
                found => (found, false),
            },
        };
        let (part, used, ended) = match newline {
            // A whole line in the buffer: read where it is, without a copy.
            Some(i) if line.is_empty() => {
                let words = match trigger {
                    // A line with an escape is looked at without it: its bytes' words
                    // are not what it is read with.
                    Some(trigger) if held.is_some() => stripped.take(at, trigger),
                    Some(trigger) if i <= MAX_LINE => {
                        if !escaped {
                            Words::Held(trigger.words_in(buf, i, at, &mut ahead))
                        } else {
                            stripped.fill(buf, at, trigger);
                            stripped.take(at, trigger)
                        }
                    }
                    _ => Words::Unknown,
                };
                f(&buf[..i.min(MAX_LINE)], words);
                reader.consume(i + 1);
                at += i as u64 + 1;
                continue;
            }
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        line.extend_from_slice(&part[..part.len().min(room)]);
        reader.consume(used);
        at += used as u64;
        if ended {
            f(&line, Words::Unknown);
            line.clear();
        }
    }
    if !line.is_empty() {
        f(&line, Words::Unknown);
    }
}

/// What is known of a line's trigger words as it is read.
#[derive(Debug, Clone, Copy)]
enum Words<'a> {
    /// Nothing: the line is searched on its own.
    Unknown,
    /// The bits of the words its bytes hold (a line without escapes).
    Held(u32),
    /// The line without its escapes (its text read as UTF-8, lossily) and the bits of
    /// the words that holds.
    Stripped(&'a str, u32),
}

/// The most text, and the most lines, a run of lines without their escapes holds at
/// once (past its first line).
const STRIPPED_RUN: usize = 256 * 1024;
const STRIPPED_LINES: usize = 4096;

/// A run of lines with escapes, one after another without them (each followed by its
/// newline), searched for trigger words as one text: where every line is coloured, one
/// search covers many lines, as it does for lines without escapes.
#[derive(Default)]
struct StrippedRun {
    text: String,
    lines: Vec<RunLine>,
    /// The next line to be read.
    next: usize,
    /// What the last search of `text` found (offsets in `text`).
    ahead: Ahead,
}

/// A line of a [`StrippedRun`].
#[derive(Debug, Clone, Copy)]
struct RunLine {
    /// Its offset in the log, and its length there (its newline not counted).
    at: u64,
    len: usize,
    /// Where it is in the run's text, without its escapes.
    from: usize,
    to: usize,
}

impl StrippedRun {
    /// Whether the line at offset `at` of the log is the next one this run holds (lines
    /// before it, passed over, are let go): its length in the log if it is.
    fn seek(&mut self, at: u64) -> Option<usize> {
        while self.lines.get(self.next).is_some_and(|line| line.at < at) {
            self.next += 1;
        }
        self.lines
            .get(self.next)
            .filter(|line| line.at == at)
            .map(|line| line.len)
    }

    /// Holds the run of whole lines with escapes `buf` (the log from offset `at`) begins
    /// with, each without its escapes. Each line is stripped as it is searched for its
    /// end, a byte at a time. Where the run's bytes are not all UTF-8, each of its lines
    /// is read lossily and stripped as a line without escapes is.
    fn fill(&mut self, buf: &[u8], at: u64, trigger: &Trigger) {
        let mut text = std::mem::take(&mut self.text).into_bytes();
        let read = self.fill_with(buf, at, &mut text, strip_line);
        // Whole characters only are taken out of a line: where it is UTF-8, so is what
        // is left of it.
        if std::str::from_utf8(&buf[..read]).is_err() {
            self.fill_with(buf, at, &mut text, strip_line_lossily);
        }
        self.text = String::from_utf8(text)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        trigger.pad_for_search(&mut self.text);
    }

    /// Strips the run's lines into `text` with `strip` (see [`strip_line`]); the bytes
    /// of `buf` the run takes.
    fn fill_with(
        &mut self,
        buf: &[u8],
        at: u64,
        text: &mut Vec<u8>,
        strip: fn(&[u8], &mut Vec<u8>) -> Option<usize>,
    ) -> usize {
        text.clear();
        self.lines.clear();
        (self.next, self.ahead) = (0, Ahead::default());
        let mut start = 0;
        while self.lines.is_empty()
            || (text.len() < STRIPPED_RUN && self.lines.len() < STRIPPED_LINES)
        {
            let from = text.len();
            let Some(len) = strip(&buf[start..], text) else {
                text.truncate(from);
                break;
            };
            self.lines.push(RunLine {
                at: at + start as u64,
                len,
                from,
                to: text.len(),
            });
            text.push(b'\n');
            start += len + 1;
        }
        start
    }

    /// The line at offset `at` ([`StrippedRun::seek`] found it), without its escapes,
    /// and its words.
    fn take(&mut self, at: u64, trigger: &Trigger) -> Words<'_> {
        let Some(&RunLine {
            at: line, from, to, ..
        }) = self.lines.get(self.next)
        else {
            return Words::Unknown;
        };
        if line != at {
            return Words::Unknown;
        }
        self.next += 1;
        let text = &self.text.as_bytes()[from..];
        let words = trigger.words_in(text, to - from, from as u64, &mut self.ahead);
        Words::Stripped(&self.text[from..to], words)
    }
}

/// Appends the line `rest` begins with to `out` without its escapes, as
/// [`strip_ansi_into`] strips it, and gives its length: none where the line is not whole
/// in `rest`, holds no escape, or is longer than [`MAX_LINE`] (what was appended is then
/// to be taken back). One search finds the next escape or the line's end. Whole
/// characters only are taken out (an escape's, where `rest` is UTF-8), and none is cut.
fn strip_line(rest: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    let (mut at, mut escaped) = (0, false);
    loop {
        let i = at + memchr::memchr2(ESCAPE, b'\n', &rest[at..])?;
        out.extend_from_slice(&rest[at..i]);
        if rest[i] == b'\n' {
            return (escaped && i <= MAX_LINE).then_some(i);
        }
        escaped = true;
        at = escape_end(rest, i + 1);
    }
}

/// Where the escape whose first byte is before `rest[at]` ends, as
/// [`strip_ansi_into`]'s reading of a line's characters ends it, the line ending at the
/// first newline (never taken in): a CSI's bytes to its final one in `@`..`~`; `(` or
/// `)` and one more character; else one character.
fn escape_end(rest: &[u8], at: usize) -> usize {
    // A character: its first byte and those that go on with it.
    let char_end = |at: usize| {
        let more = rest[at + 1..]
            .iter()
            .take(3)
            .take_while(|&&b| b & 0xc0 == 0x80)
            .count();
        at + 1 + more
    };
    match rest.get(at) {
        None | Some(b'\n') => at,
        Some(b'[') => {
            let params = &rest[at + 1..];
            match params
                .iter()
                .position(|&b| b == b'\n' || (b'@'..=b'~').contains(&b))
            {
                Some(i) if params[i] == b'\n' => at + 1 + i,
                Some(i) => at + 2 + i,
                None => rest.len(),
            }
        }
        Some(b'(' | b')') => match rest.get(at + 1) {
            None | Some(b'\n') => at + 1,
            Some(_) => char_end(at + 1),
        },
        Some(_) => char_end(at),
    }
}

/// [`strip_line`] for a line that may not be UTF-8: read lossily, then stripped.
fn strip_line_lossily(rest: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    let len = memchr::memchr(b'\n', rest)?;
    let raw = &rest[..len];
    if len > MAX_LINE || memchr::memchr(ESCAPE, raw).is_none() {
        return None;
    }
    let mut text = String::new();
    strip_ansi_into(&String::from_utf8_lossy(raw), &mut text);
    out.extend_from_slice(text.as_bytes());
    Some(len)
}

/// How far past a line's end the search for the next trigger word goes on (to the next
/// line end after it): far enough to cover many lines in one search where most lines
/// are read, near enough that where the gate passes over most lines, the bytes it
/// searches are seldom searched twice.
const LOOK_AHEAD: usize = 1024;

/// What a search of a buffer for the next trigger word found, kept for the lines after
/// the one it was made for, by the log's offsets (a byte at an offset is the same
/// whichever buffer holds it): no word begins from `from` to `next`, or, with no
/// `next`, to `to` (a word ending by `to`).
#[derive(Default)]
struct Ahead {
    from: u64,
    next: Option<u64>,
    to: u64,
}

/// Judges a gate from log text already in memory.
pub fn assess_text(gate: Gate, text: &str) -> Assessment {
    let mut scan = Scan::new(gate);
    for line in text.lines() {
        scan.line(line);
    }
    scan.finish()
}

/// One runner family's reading of a log.
trait Parser: Send {
    /// Words a line this parser reads always contains. The scan skips a line that has
    /// none of any parser's words (or of [`NOTHING_MARKERS`]) before any regex runs.
    fn triggers(&self) -> &'static [&'static str];

    /// Words a line this parser reads may begin with instead of holding one of its
    /// [`Parser::triggers`] anywhere: words too short or too common to be searched for
    /// anywhere in every line of a log (`go test`'s `ok`). Matched at the start of the
    /// line as the parsers read it: without its escapes, and behind Maven's level too.
    fn starts(&self) -> &'static [&'static str] {
        &[]
    }

    /// How the lines [`Parser::raw`] reads begin (most parsers read text lines only:
    /// none).
    fn raw_starts(&self) -> &'static [&'static str] {
        &[]
    }

    /// Words every line [`Parser::raw`] reads holds somewhere, for raw lines whose
    /// start is too short to be searched for (`go test -json`'s `{"`).
    fn raw_words(&self) -> &'static [&'static str] {
        &[]
    }

    /// A line as it comes from the log, before the trigger test (for output that is
    /// not text for people, such as `go test -json` events).
    fn raw(&mut self, _raw: &[u8]) -> Raw {
        Raw::Pass
    }

    /// Sees every line the trigger lets through, before any parser reads it (markers
    /// that do not end a line's reading, like Gradle's task states).
    fn observe(&mut self, _line: &str, _found: &mut Findings) {}

    /// Reads a line (ANSI escapes and Maven's level prefix removed); true when it was
    /// this runner's, and no later parser sees it.
    fn line(&mut self, line: &str, found: &mut Findings) -> bool;

    /// After the last line: counts kept until the end are added.
    fn finish(&mut self, _found: &mut Findings) {}
}

/// What a parser made of a raw line.
enum Raw {
    /// Not its own: the line is read as text.
    Pass,
    /// Its own, and nothing more to read.
    Taken,
    /// Its own, carrying this text to be read as a line.
    Text(String),
}

/// Declares the runner modules and the parsers, in order.
macro_rules! runners {
    ($($module:ident :: $parser:ident),* $(,)?) => {
        $(mod $module;)*

        fn parsers() -> Vec<Box<dyn Parser>> {
            vec![$(Box::new($module::$parser::default())),*]
        }
    };
}

macro_rules! re {
    ($name:ident, $pattern:expr) => {
        static $name: std::sync::LazyLock<regex::Regex> =
            std::sync::LazyLock::new(|| regex::Regex::new($pattern).expect("valid regex"));
    };
}

re!(COUNT_WORD, r"(\d+) ([A-Za-z][A-Za-z ]*?)(?:,|\||\(|$)");

// The runner families, one file each, in the order a line is offered to them: the
// first that takes a line ends its reading. Adding a runner is a new file and its name
// here.
runners! {
    libtest::Libtest,
    nextest::Nextest,
    pytest::Pytest,
    jest::Jest,
    vitest::Vitest,
    mocha::Mocha,
    node_test::NodeTest,
    go::Go,
    maven::Maven,
    gradle::Gradle,
    phpunit::Phpunit,
    rspec::Rspec,
    exunit::Exunit,
    dotnet::Dotnet,
    ctest::Ctest,
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    passed: u64,
    failed: u64,
    skipped: u64,
}

/// What the parsers have found so far.
struct Findings {
    gate: Gate,
    /// Per runner, in the order first seen.
    tallies: Vec<(&'static str, Tally)>,
    /// A no-op marker: the work was skipped (up to date, from cache).
    noop: Option<String>,
    /// A runner saying it found nothing to run.
    nothing: Option<String>,
    /// Evidence without a test count (`go test` packages).
    packages: Option<String>,
}

impl Findings {
    fn add(&mut self, runner: &'static str, passed: u64, failed: u64, skipped: u64) {
        let tally = match self.tallies.iter_mut().find(|(r, _)| *r == runner) {
            Some((_, tally)) => tally,
            None => {
                self.tallies.push((runner, Tally::default()));
                &mut self.tallies.last_mut().expect("just pushed").1
            }
        };
        tally.passed += passed;
        tally.failed += failed;
        tally.skipped += skipped;
    }

    /// For runners that report a total: passed = total − failed − skipped.
    fn add_total(&mut self, runner: &'static str, total: u64, failed: u64, skipped: u64) {
        self.add(
            runner,
            total.saturating_sub(failed + skipped),
            failed,
            skipped,
        );
    }
}

/// What runners print when they found nothing to run.
const NOTHING_MARKERS: &[&str] = &[
    "No tests found",
    "no tests ran",
    "No test files found",
    "no tests to run",
    "No tests to run",
    "[no tests to run]",
    "No tests were found",
    "No tests executed",
    "No examples found",
    "No test is available",
];

/// Every word a line must contain one of to matter: the parsers' triggers and the
/// nothing-to-run markers, matched in one pass over the bytes.
static TRIGGER: LazyLock<Trigger> = LazyLock::new(|| {
    let mut words: Vec<&str> = Vec::new();
    let mut owners = Vec::new();
    let parsers = parsers();
    assert!(
        parsers.len() < 31,
        "one bit per parser, below the nothing bit"
    );
    for (i, parser) in parsers.iter().enumerate() {
        for word in parser.triggers() {
            words.push(word);
            owners.push(1u32 << i);
        }
    }
    for word in NOTHING_MARKERS {
        words.push(word);
        owners.push(NOTHING_BIT);
    }
    // A word holding another of its owner's adds nothing to the search: a line with it
    // holds the other (`[no tests to run]`, `no tests to run`).
    let (words, owners): (Vec<&str>, Vec<u32>) = (0..words.len())
        .filter(|&i| !holds_another(&words, i, |j| owners[j] == owners[i]))
        .map(|i| (words[i], owners[i]))
        .unzip();
    // A line is read without Maven's level: its start is looked for behind one too.
    let starts: Vec<(String, u32)> = parsers
        .iter()
        .enumerate()
        .flat_map(|(i, p)| p.starts().iter().map(move |s| (*s, 1u32 << i)))
        .flat_map(|(s, owner)| {
            std::iter::once("")
                .chain(MAVEN_LEVELS)
                .map(move |level| (format!("{level}{s}"), owner))
        })
        .collect();
    // Every line a parser reads begins with one of these (or holds an escape).
    let line_starts: Vec<String> = parsers
        .iter()
        .flat_map(|p| p.raw_starts())
        .map(|s| (*s).to_owned())
        .chain(starts.iter().map(|(s, _)| s.clone()))
        .collect();
    let gate = gate_words(&parsers, &line_starts);
    let line_first_bytes =
        std::array::from_fn(|b| line_starts.iter().any(|s| s.as_bytes()[0] == b as u8));
    Trigger {
        longest: gate.iter().map(String::len).max().unwrap_or(1),
        lines: aho_corasick::packed::Searcher::new(gate),
        line_starts,
        next_word: next_word_search(&words),
        by_first: (0..=u8::MAX)
            .map(|b| {
                words
                    .iter()
                    .zip(&owners)
                    .filter(|(w, _)| w.as_bytes()[0] == b)
                    .map(|(w, o)| (*w, *o))
                    .collect()
            })
            .collect(),
        words: aho_corasick::AhoCorasick::new(&words).expect("valid patterns"),
        owners,
        first_bytes: std::array::from_fn(|b| {
            starts.iter().any(|(s, _)| s.as_bytes()[0] == b as u8)
        }),
        line_first_bytes,
        starts,
    }
});

/// The search for the next place a trigger word begins: for each word's first four
/// bytes, once (the words are then compared whole, [`Trigger::by_first`]). It compares
/// four bytes at every position before it looks closer; where it can, it sorts them
/// into 16 groups rather than 8, and looks closer less often (on test logs, with these
/// words, that is faster than the 8 groups' longer steps).
fn next_word_search(words: &[&'static str]) -> Option<aho_corasick::packed::Searcher> {
    let prefixes = word_prefixes(words);
    aho_corasick::packed::Config::new()
        .only_teddy_fat(Some(true))
        .builder()
        .extend(&prefixes)
        .build()
        .or_else(|| aho_corasick::packed::Searcher::new(&prefixes))
}

/// Whether `text` begins with `word`: its first four bytes compared as one number
/// before the rest, where most words end (a call to compare bytes costs more than that
/// comparison, made for every place the search stopped).
fn begins_with(text: &[u8], word: &[u8]) -> bool {
    match (text.first_chunk::<4>(), word.split_first_chunk::<4>()) {
        (Some(head), Some((word_head, rest))) => {
            head == word_head && (rest.is_empty() || text[4..].starts_with(rest))
        }
        _ => text.starts_with(word),
    }
}

/// Each word's first four bytes (or fewer, in a shorter word), once.
fn word_prefixes(words: &[&'static str]) -> Vec<&'static [u8]> {
    let mut prefixes: Vec<&[u8]> = words
        .iter()
        .map(|w| &w.as_bytes()[..w.len().min(4)])
        .collect();
    prefixes.sort_unstable();
    prefixes.dedup();
    prefixes
}

/// What the search for the next line any parser reads looks for: every trigger word,
/// every raw reader's word, and each way a line may begin after the line end before it.
/// Each is at least four bytes long (a test says so): the search then compares four
/// bytes at every position before it looks closer, and on common text (`test parse ...
/// ok` in every line) it looks closer half as often as with three.
///
/// A word holding another is left out (`% tests passed`, `passed`): the line it is in
/// holds the other, which the search finds in it (a word beginning with a line end is
/// held only by another that does, or by one in the line after it). The search takes
/// 64 words at most.
fn gate_words(parsers: &[Box<dyn Parser>], line_starts: &[String]) -> Vec<String> {
    let words: Vec<String> = parsers
        .iter()
        .flat_map(|p| p.triggers().iter().chain(p.raw_words()))
        .chain(NOTHING_MARKERS)
        .map(|w| (*w).to_owned())
        .chain(line_starts.iter().map(|s| format!("\n{s}")))
        .collect();
    let all: Vec<&str> = words.iter().map(String::as_str).collect();
    (0..all.len())
        .filter(|&i| !holds_another(&all, i, |_| true))
        .map(|i| all[i].to_owned())
        .collect()
}

/// Whether `words[i]` holds another of the words `related` says count for it (of two
/// that are the same, the second holds the first).
fn holds_another(words: &[&str], i: usize, related: impl Fn(usize) -> bool) -> bool {
    (0..words.len()).any(|j| {
        related(j)
            && if words[j] == words[i] {
                j < i
            } else {
                words[i].contains(words[j])
            }
    })
}

/// The bit of the nothing-to-run markers in a line's [`Trigger::owners_of`] (the
/// parsers have the bits below it, one each, in their order).
const NOTHING_BIT: u32 = 1 << 31;

/// The trigger words, each with its owner's bit.
struct Trigger {
    /// The words and, after a line's end, the words lines begin with: one vectorised
    /// search for the next line any parser reads ([`gate_words`]: each four bytes or
    /// more).
    lines: Option<aho_corasick::packed::Searcher>,
    /// The longest word of `lines`, in bytes.
    longest: usize,
    /// How raw readers' lines, and lines of parsers with [`Parser::starts`], begin.
    line_starts: Vec<String>,
    words: aho_corasick::AhoCorasick,
    owners: Vec<u32>,
    /// The same words, for the vectorised search of a buffer of lines for where the
    /// next one begins ([`Trigger::words_in`]).
    next_word: Option<aho_corasick::packed::Searcher>,
    /// Per first byte, the words beginning with it and their owners' bits.
    by_first: Vec<Vec<(&'static str, u32)>>,
    /// The words lines begin with (also behind Maven's level), each with its owner's
    /// bit.
    starts: Vec<(String, u32)>,
    /// The first bytes of `starts`, marked: most lines begin with none.
    first_bytes: [bool; 256],
    /// The first bytes of `line_starts`, marked.
    line_first_bytes: [bool; 256],
}

/// The level Maven prefixes every line with, removed before a line is read.
const MAVEN_LEVELS: [&str; 3] = ["[INFO] ", "[ERROR] ", "[WARNING] "];

impl Trigger {
    /// Whose words `line` holds (or begins with): a parser is offered only lines with
    /// one of its own words (every line it reads holds one; tests compare with offering
    /// every line). `line` holds no escape: a line with one is looked at as it is read,
    /// without them (an escape inside a word would hide it).
    #[cfg(test)]
    fn owners_of(&self, line: &[u8]) -> u32 {
        self.begins(line) | self.words_of(line)
    }

    /// The bits of the words `line` begins with ([`Parser::starts`]).
    fn begins(&self, line: &[u8]) -> u32 {
        match line.first() {
            Some(&first) if self.first_bytes[usize::from(first)] => self
                .starts
                .iter()
                .filter(|(start, _)| line.starts_with(start.as_bytes()))
                .fold(0, |bits, (_, owner)| bits | owner),
            _ => 0,
        }
    }

    /// The bits of the trigger words `line` holds, each byte walked.
    fn words_of(&self, line: &[u8]) -> u32 {
        self.words
            .find_overlapping_iter(line)
            .fold(0, |bits, m| bits | self.owners[m.pattern().as_usize()])
    }

    /// The bits of the trigger words `line` holds, found by the vectorised search
    /// ([`Trigger::words_in`]), which looks at no fewer than a few dozen bytes: the
    /// line is followed by line ends for it while it looks, then given back as it was.
    fn words_padded(&self, line: &mut String) -> u32 {
        let end = line.len();
        self.pad_for_search(line);
        let words = self.words_in(line.as_bytes(), end, 0, &mut Ahead::default());
        line.truncate(end);
        words
    }

    /// Line ends after `text` up to the vectorised search's shortest haystack (below
    /// it, the search falls back to a slower one): a line end begins no word.
    fn pad_for_search(&self, text: &mut String) {
        let shortest = self.next_word.as_ref().map_or(0, |s| s.minimum_len());
        while text.len() < shortest {
            text.push('\n');
        }
    }

    /// The bits of the trigger words held by the line `buf[..end]` (whose newline is at
    /// `end`), `buf` being the log's bytes from offset `at`: what [`Trigger::words_of`]
    /// gives, found by the vectorised search for the next place a word may begin (its
    /// first four bytes are there), which runs on past the line and is kept in `ahead`
    /// for the lines after it. In most lines no word begins, or one does; each place
    /// the search stops at is looked at for every word beginning with its byte.
    fn words_in(&self, buf: &[u8], end: usize, at: u64, ahead: &mut Ahead) -> u32 {
        let Some(search) = &self.next_word else {
            return self.words_of(&buf[..end]);
        };
        let mut bits = 0;
        let mut from = 0;
        while let Some(start) = self.next_word_from(search, buf, from, end, at, ahead) {
            bits |= self.by_first[usize::from(buf[start])]
                .iter()
                .filter(|(word, _)| begins_with(&buf[start..end], word.as_bytes()))
                .fold(0, |bits, (_, owner)| bits | owner);
            from = start + 1;
        }
        bits
    }

    /// Where the first place a word may begin (its first four bytes, or a shorter word's
    /// bytes, are there) at or after `buf[from]` and before `buf[end]` is, a line's
    /// newline being at `end`: every place a word begins is one. What `ahead` knows is
    /// used; otherwise the buffer is searched on, to the first line end [`LOOK_AHEAD`]
    /// bytes past the line's (or the buffer's end; or the line end the last search
    /// stopped at, while that is half as far past or more), and `ahead` told what was
    /// found. A word beginning before a line end ends by it (no word holds a newline),
    /// so a search that ran to one saw whole the first bytes of every word beginning
    /// before it.
    fn next_word_from(
        &self,
        search: &aho_corasick::packed::Searcher,
        buf: &[u8],
        from: usize,
        end: usize,
        at: u64,
        ahead: &mut Ahead,
    ) -> Option<usize> {
        let (from_at, end_at) = (at + from as u64, at + end as u64);
        let known = ahead.from <= from_at
            && match ahead.next {
                Some(next) => next >= from_at,
                None => ahead.to >= end_at,
            };
        if !known {
            // The line end the last search stopped at, while it is far enough ahead (it
            // is looked for again only every half `LOOK_AHEAD` bytes or so).
            let kept = usize::try_from(ahead.to.saturating_sub(at))
                .ok()
                .filter(|&to| to >= end + LOOK_AHEAD / 2 && buf.get(to) == Some(&b'\n'));
            let to = kept.unwrap_or_else(|| {
                let past = (end + LOOK_AHEAD).min(buf.len());
                memchr::memchr(b'\n', &buf[past..]).map_or(buf.len(), |i| past + i)
            });
            let found = search.find_in(buf, aho_corasick::Span::from(from..to));
            *ahead = Ahead {
                from: from_at,
                next: found.map(|m| at + m.start() as u64),
                to: at + to as u64,
            };
        }
        ahead
            .next
            .filter(|&next| next < end_at)
            .map(|next| (next - at) as usize)
    }
}

/// The running state of one log's scan.
struct Scan {
    parsers: Vec<Box<dyn Parser>>,
    /// The parsers that read raw lines.
    raw_readers: Vec<usize>,
    /// Every line is read, trigger or not (tests compare the two).
    untriggered: bool,
    found: Findings,
    /// A line without its escapes (the buffer is kept from line to line).
    stripped: String,
}

impl Scan {
    fn new(gate: Gate) -> Scan {
        let parsers = parsers();
        let raw_readers = (0..parsers.len())
            .filter(|&i| !(parsers[i].raw_starts().is_empty() && parsers[i].raw_words().is_empty()))
            .collect();
        Scan {
            parsers,
            raw_readers,
            untriggered: false,
            stripped: String::new(),
            found: Findings {
                gate,
                tallies: Vec::new(),
                noop: None,
                nothing: None,
                packages: None,
            },
        }
    }

    /// A line straight from the log: most lines mention nothing a summary is made of,
    /// and one pass of a multi-word search over the bytes skips them.
    /// `words`: what is known of its trigger words.
    fn raw_line(&mut self, raw: &[u8], words: Words<'_>) {
        for &i in &self.raw_readers {
            match self.parsers[i].raw(raw) {
                Raw::Pass => continue,
                Raw::Taken => return,
                Raw::Text(text) => {
                    self.line(&text);
                    return;
                }
            }
        }
        // Most lines are UTF-8: checked at its speed before the lossy reading.
        let text_of = |raw| match std::str::from_utf8(raw) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(raw),
        };
        match words {
            Words::Stripped(text, words) => return self.offer(text, Some(words)),
            // A line without escapes holds the words its bytes do, and begins as they
            // do (the lossy reading only makes other characters of bytes that are not
            // ASCII): a line no parser reads is let go before its text is made.
            Words::Held(words) => {
                let owners = if self.untriggered {
                    u32::MAX
                } else {
                    TRIGGER.begins(raw) | words
                };
                if owners != 0 {
                    self.line_for(&text_of(raw), owners);
                }
                return;
            }
            Words::Unknown => {}
        }
        let text = text_of(raw);
        if memchr::memchr(ESCAPE, raw).is_some() {
            // Looked at as the parsers read it, without its escapes, removed once into
            // a buffer kept from line to line.
            let mut stripped = std::mem::take(&mut self.stripped);
            stripped.clear();
            strip_ansi_into(&text, &mut stripped);
            let words = TRIGGER.words_padded(&mut stripped);
            self.offer(&stripped, Some(words));
            self.stripped = stripped;
        } else {
            self.offer(&text, None);
        }
    }

    /// Offers a line without escapes to the parsers whose words it holds (`words`,
    /// when they are known).
    fn offer(&mut self, text: &str, words: Option<u32>) {
        let owners = if self.untriggered {
            u32::MAX
        } else {
            let line = text.as_bytes();
            TRIGGER.begins(line) | words.unwrap_or_else(|| TRIGGER.words_of(line))
        };
        if owners != 0 {
            self.line_for(text, owners);
        }
    }

    /// Reads a line, offered to every parser.
    fn line(&mut self, raw: &str) {
        if raw.contains('\u{1b}') {
            self.line_for(&strip_ansi(raw), u32::MAX);
        } else {
            self.line_for(raw, u32::MAX);
        }
    }

    /// Reads a line without escapes, offered to the parsers whose bits are in `owners`
    /// (and to the nothing-to-run markers when theirs is).
    fn line_for(&mut self, line: &str, owners: u32) {
        let line = line.trim_end_matches(['\n', '\r']);
        // Maven prefixes every line with its level.
        let line = MAVEN_LEVELS
            .iter()
            .find_map(|p| line.strip_prefix(p))
            .unwrap_or(line);
        let found = &mut self.found;
        if found.nothing.is_none()
            && owners & NOTHING_BIT != 0
            && let Some(marker) = NOTHING_MARKERS.iter().find(|m| line.contains(*m))
        {
            found.nothing = Some((*marker).to_owned());
        }
        // The parsers offered the line, in their order: its owners' bits, lowest first.
        let offered = owners & !NOTHING_BIT;
        let each = || {
            std::iter::successors(Some(offered), |bits| Some(bits & bits.wrapping_sub(1)))
                .take_while(|&bits| bits != 0)
                .map(|bits| bits.trailing_zeros() as usize)
        };
        for i in each() {
            let Some(parser) = self.parsers.get_mut(i) else {
                break;
            };
            parser.observe(line, found);
        }
        for i in each() {
            let Some(parser) = self.parsers.get_mut(i) else {
                break;
            };
            if parser.line(line, found) {
                // Each parser's own words cover what it reads (the trigger is made of them).
                #[cfg(test)]
                assert!(
                    parser.triggers().iter().any(|w| line.contains(w))
                        || parser.starts().iter().any(|w| line.starts_with(w)),
                    "a parser read {line:?} without any of its trigger words"
                );
                return;
            }
        }
    }

    fn finish(mut self) -> Assessment {
        for parser in &mut self.parsers {
            parser.finish(&mut self.found);
        }
        let mut found = self.found;
        let packages = found.packages.take();
        let counts = (!found.tallies.is_empty()).then(|| {
            let total = found
                .tallies
                .iter()
                .fold(Tally::default(), |acc, (_, t)| Tally {
                    passed: acc.passed + t.passed,
                    failed: acc.failed + t.failed,
                    skipped: acc.skipped + t.skipped,
                });
            let runner = found
                .tallies
                .iter()
                .map(|(r, _)| *r)
                .collect::<Vec<_>>()
                .join("+");
            TestCounts {
                passed: total.passed,
                failed: total.failed,
                skipped: total.skipped,
                runner,
                flaky: 0,
                quarantined: 0,
            }
        });
        let executed = counts.as_ref().map(|c| c.passed + c.failed);
        let ineffective = |reason: String| Some(reason);
        let noop = found.noop.is_some();
        let reason = if let Some(noop) = found.noop.take() {
            ineffective(format!("no-op: {noop}"))
        } else if found.gate != Gate::Test || (counts.is_none() && packages.is_some()) {
            // A package that printed `ok` without `[no tests to run]` ran tests.
            None
        } else {
            match (&counts, executed) {
                (Some(c), Some(0)) => ineffective(match &found.nothing {
                    Some(marker) => format!("0 tests executed ({}: \"{marker}\")", c.runner),
                    None => format!("0 tests executed ({})", c.runner),
                }),
                (Some(_), _) => None,
                (None, _) => ineffective(match &found.nothing {
                    Some(marker) => format!("0 tests executed (\"{marker}\")"),
                    None => "no test summary recognised".to_owned(),
                }),
            }
        };
        let tests_executed = match found.gate {
            Gate::Test => executed.or(found.nothing.as_ref().map(|_| 0)),
            _ => executed,
        };
        Assessment {
            gate_effective: Some(reason.is_none()),
            tests_executed,
            test_counts: counts,
            ineffective_reason: reason,
            packages,
            noop,
        }
    }
}

/// A log line for a message: whitespace runs (tabs in `go test` output) made one space.
fn one_line(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn num(c: &regex::Captures<'_>, i: usize) -> u64 {
    c.get(i).and_then(|m| m.as_str().parse().ok()).unwrap_or(0)
}

/// `3 passed, 1 failed | 2 skipped` → [(3, "passed"), (1, "failed"), (2, "skipped")].
fn count_items(text: &str) -> Vec<(u64, String)> {
    COUNT_WORD
        .captures_iter(text)
        .filter_map(|c| Some((c[1].parse().ok()?, c[2].trim().to_owned())))
        .collect()
}

/// The sum of the counts of `items` whose word is one of `words`.
fn sum(items: &[(u64, String)], words: &[&str]) -> u64 {
    items
        .iter()
        .filter(|(_, word)| words.contains(&word.as_str()))
        .map(|(n, _)| n)
        .sum()
}

#[cfg(test)]
mod tests;

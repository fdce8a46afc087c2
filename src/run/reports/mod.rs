//! The runner's own test reports (`reports:`): which tests ran, which failed, and where.
//!
//! A check names the files its command writes; after the command ends they are found
//! (globs relative to the check's folder, never outside the manifest's folder), refused
//! when older than the check's start (left over from an earlier run), and read by
//! content: JUnit XML (every dialect: nextest, pytest, jest-junit, vitest, mocha,
//! Surefire, Gradle, go-junit-report, PHPUnit, …), the .NET runners' own XML (TRX,
//! NUnit 2 and 3, xUnit.net), CTRF, Jest, Vitest, Mocha, RSpec or Playwright JSON, `go test -json`
//! events, or TAP (node's test runner, Perl's Test::More and `prove -v`, Bats).
//!
//! Everything here comes from pull-request code: files are bounded in number and size,
//! XML may declare no DTD (so no entity expansion), every string kept is bounded, and a
//! file that cannot be read is an error naming the file and line, never a pass.

mod ctrf;
mod go_json;
mod jest;
mod json;
mod junit;
mod locate;
mod mocha;
mod nunit;
mod playwright;
mod rspec;
mod tap;
mod trx;
mod xml;
mod xunit;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use compact_str::CompactString;
use globset::{Glob, GlobMatcher};

use crate::manifest::ReportPattern;
use crate::results::{TestCounts, TestOutcome, TestReport, TestResult};
use crate::untrusted::Redactor;

pub use locate::Locator;

/// The most files one check's `reports` may match.
pub const MAX_FILES: usize = 1000;
/// The largest report file read.
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;
/// The most folder entries a pattern's search looks at.
pub const MAX_WALK: usize = 200_000;
/// The most tests listed per check; more are counted, not listed.
pub const MAX_CASES: usize = 100_000;
/// Of [`MAX_CASES`], the places only a failure may take: a failure after a hundred
/// thousand passes is still named.
const FAILURES_ONLY: usize = 10_000;
/// The longest suite or test name kept, in characters.
pub const MAX_NAME_CHARS: usize = 500;
/// The longest failure message kept, in characters.
pub const MAX_MESSAGE_CHARS: usize = 500;
/// The longest failure output excerpt kept, in characters (its start and its end).
pub const MAX_OUTPUT_CHARS: usize = 4000;
/// The most text read from one failure or output element (the rest is skipped).
const MAX_CAPTURE_BYTES: usize = 64 * 1024;

pub use crate::manifest::ReportFormat as Format;

/// Whether the format is XML.
fn is_xml(format: Format) -> bool {
    matches!(
        format,
        Format::Junit | Format::Trx | Format::Nunit | Format::Xunit
    )
}

/// Why the reports gave no evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// No file, or only old ones: the gate's evidence is missing (ineffective).
    Missing(String),
    /// A file that is not a report, or a broken one: the check is an ERROR.
    Unreadable(String),
}

/// What one check's reports said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub report: TestReport,
    pub counts: TestCounts,
    /// A no-op the report shows (a `go test` package result `(cached)`): its tests
    /// were not run by this attempt.
    pub noop: Option<String>,
    /// Of the failures counted, those outside any test (a test file that failed to
    /// load, a suite's own set-up): a log does not count them as tests.
    pub outside_failures: u64,
}

/// Whether a log's counts and a report's tell different stories. Failures must agree,
/// and so must the tests that ran, or at least all the tests: runners' reports sort a
/// few kinds differently from their logs (a Jest `todo` is a passed case to jest-junit;
/// nextest's and mocha's reports leave skipped tests out), never by dropping or adding
/// tests that ran. Failures outside any test (`outside`, of the report's) are not the
/// log's tests: a file that failed to load is in jest's `Test Suites:` line, not in its
/// `Tests:`.
pub fn counts_disagree(log: &TestCounts, report: &TestCounts, outside: u64) -> bool {
    let report = TestCounts {
        failed: report.failed.saturating_sub(outside),
        ..report.clone()
    };
    let total = |c: &TestCounts| c.passed + c.failed + c.skipped;
    let ran = |c: &TestCounts| c.passed + c.failed;
    log.failed != report.failed || (ran(log) != ran(&report) && total(log) != total(&report))
}

pub use crate::manifest::report_pattern_problem as check_pattern;

/// Where to look, and since when.
#[derive(Debug, Clone)]
pub struct Context {
    /// The check's folder: patterns and relative paths in reports start here.
    pub cwd: PathBuf,
    /// The manifest's folder: no report is read outside it, and failure locations are
    /// given relative to it.
    pub root: PathBuf,
    /// When the check's (last) attempt started, and the files its patterns matched
    /// then: a report older than the start, or one the attempt left as it found it,
    /// is left over.
    pub started: Started,
    /// Masks secrets in names, messages and output before they are cut to their bounds
    /// (a cut could leave most of a secret that the mask would no longer know).
    pub redactor: std::sync::Arc<Redactor>,
}

/// A check attempt's start, as the freshness of its reports is judged against.
#[derive(Debug, Clone)]
pub struct Started {
    /// When it started.
    pub at: SystemTime,
    /// The files the patterns matched just before, each with its size and its
    /// modification time at full precision.
    before: Vec<(PathBuf, u64, Option<SystemTime>)>,
}

impl Started {
    /// Now, for a check whose reports are `patterns` in `cwd`: the files they match
    /// are noted (none when the patterns match nothing or cannot be read).
    pub fn now(patterns: &[ReportPattern], cwd: &Path) -> Started {
        let mut before = Vec::new();
        for pattern in patterns {
            for file in matching(&pattern.path, cwd).unwrap_or_default() {
                if let Ok(meta) = std::fs::metadata(&file) {
                    before.push((file, meta.len(), meta.modified().ok()));
                }
            }
        }
        Started {
            at: SystemTime::now(),
            before,
        }
    }

    /// A start at `at` with no files noted; [`SystemTime::UNIX_EPOCH`] judges no file
    /// by its time (reports read on request, by `tests`).
    pub fn at(at: SystemTime) -> Started {
        Started {
            at,
            before: Vec::new(),
        }
    }

    /// Whether `file` is as it was before the start (same size, same modification time
    /// to the nanosecond): the attempt did not write it.
    fn unchanged(&self, file: &Path, meta: &std::fs::Metadata) -> bool {
        self.before.iter().any(|(path, len, modified)| {
            path == file && *len == meta.len() && *modified == meta.modified().ok()
        })
    }
}

/// How far in the future a report's time may be (clocks of network file systems and
/// containers drift a little) before it is taken as forged.
const FUTURE_SLACK: Duration = Duration::from_secs(5);

/// Finds and reads the files `patterns` name, each in the format its pattern names,
/// else in the one its content shows. Why it could not is one line of plain text: what
/// it quotes of a file (a name, a status, an element) came from pull-request code.
pub fn read(patterns: &[ReportPattern], ctx: &Context) -> Result<Reading, Problem> {
    read_patterns(patterns, ctx).map_err(Problem::tidy)
}

/// The longest reason a problem gives, in bytes.
const MAX_REASON_BYTES: usize = 1000;

impl Problem {
    /// The reason without escapes, control characters or line breaks, and bounded.
    fn tidy(self) -> Problem {
        let tidy = |reason: String| {
            let clean = crate::untrusted::neutralise::clean(&reason).replace(['\n', '\t'], " ");
            crate::untrusted::cut(&clean, MAX_REASON_BYTES)
        };
        match self {
            Problem::Missing(reason) => Problem::Missing(tidy(reason)),
            Problem::Unreadable(reason) => Problem::Unreadable(tidy(reason)),
        }
    }
}

fn read_patterns(patterns: &[ReportPattern], ctx: &Context) -> Result<Reading, Problem> {
    let root = std::fs::canonicalize(&ctx.root)
        .map_err(|e| Problem::Unreadable(format!("reports: the manifest's folder: {e}")))?;
    let mut files: Vec<(PathBuf, Option<Format>)> = Vec::new();
    for ReportPattern {
        path: pattern,
        format,
    } in patterns
    {
        let found = matching(pattern, &ctx.cwd)?;
        if found.is_empty() {
            return Err(Problem::Missing(format!(
                "no report: `{pattern}` matched no file"
            )));
        }
        for file in found {
            match files.iter_mut().find(|(seen, _)| *seen == file) {
                None => files.push((file, *format)),
                // Two patterns that name one file in two formats: which is meant
                // cannot be told.
                Some((_, Some(first))) if format.is_some_and(|f| f != *first) => {
                    return Err(Problem::Unreadable(format!(
                        "report unreadable: `{}` is named as {first} and as {}; give it one format",
                        shown(&file, ctx),
                        format.map_or("", Format::as_str),
                    )));
                }
                Some((_, first)) => *first = first.or(*format),
            }
        }
        if files.len() > MAX_FILES {
            return Err(Problem::Unreadable(format!(
                "reports: more than {MAX_FILES} files match; narrow the patterns"
            )));
        }
    }
    for (file, _) in &files {
        admit(file, &root, ctx)?;
    }
    let locator = Locator::new(&root, &ctx.cwd);
    let parsed = parse_all(&files, ctx, &locator)?;
    Ok(combine(&files, ctx, parsed))
}

/// The regular files under `cwd` that `pattern` matches, in path order.
fn matching(pattern: &str, cwd: &Path) -> Result<Vec<PathBuf>, Problem> {
    let pattern = pattern.replace('\\', "/");
    let literal = !pattern.contains(['*', '?', '[', '{']);
    if literal {
        let path = cwd.join(&pattern);
        return Ok(if path.is_file() {
            vec![path]
        } else {
            Vec::new()
        });
    }
    // Walk from the folder the pattern names before its first wildcard.
    let mut base = PathBuf::new();
    for part in pattern.split('/') {
        if part.contains(['*', '?', '[', '{']) {
            break;
        }
        base.push(part);
    }
    let matcher: GlobMatcher = Glob::new(&pattern)
        .map_err(|e| Problem::Unreadable(format!("reports: `{pattern}`: {e}")))?
        .compile_matcher();
    let mut found = Vec::new();
    let start = cwd.join(&base);
    let mut seen = 0;
    for entry in walkdir::WalkDir::new(&start)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
    {
        let Ok(entry) = entry else { continue };
        seen += 1;
        if seen > MAX_WALK {
            return Err(Problem::Unreadable(format!(
                "reports: `{pattern}` searched more than {MAX_WALK} folder entries; narrow it"
            )));
        }
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(cwd) else {
            continue;
        };
        if matcher.is_match(relative) {
            found.push(entry.path().to_path_buf());
        }
    }
    Ok(found)
}

/// A file may be read: inside the manifest's folder, not too large, written since the
/// check started.
fn admit(file: &Path, root: &Path, ctx: &Context) -> Result<(), Problem> {
    let shown = shown(file, ctx);
    let real = std::fs::canonicalize(file)
        .map_err(|e| Problem::Unreadable(format!("report unreadable: `{shown}`: {e}")))?;
    if !real.starts_with(root) {
        return Err(Problem::Unreadable(format!(
            "report unreadable: `{shown}` leads outside the repository"
        )));
    }
    let meta = std::fs::metadata(&real)
        .map_err(|e| Problem::Unreadable(format!("report unreadable: `{shown}`: {e}")))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(Problem::Unreadable(format!(
            "report unreadable: `{shown}` is larger than {} MiB",
            MAX_FILE_BYTES / (1024 * 1024)
        )));
    }
    if let Ok(modified) = meta.modified()
        && is_stale(modified, ctx.started.at)
    {
        return Err(Problem::Missing(format!(
            "report `{shown}` predates the check (left over from an earlier run)"
        )));
    }
    if ctx.started.unchanged(file, &meta) {
        return Err(Problem::Missing(format!(
            "report `{shown}` was not written by the check: it is as it was before the check started (left over from an earlier check or run)"
        )));
    }
    if let Ok(modified) = meta.modified()
        && ctx.started.at > SystemTime::UNIX_EPOCH
        && modified > SystemTime::now() + FUTURE_SLACK
    {
        return Err(Problem::Missing(format!(
            "report `{shown}` is dated in the future, so when it was written cannot be told"
        )));
    }
    Ok(())
}

/// Whether a file modified at `modified` predates a start at `since`. Whole seconds are
/// compared, so a file system that keeps coarse times never makes a fresh report old.
fn is_stale(modified: SystemTime, since: SystemTime) -> bool {
    let secs = |t: SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    };
    secs(modified) < secs(since)
}

/// A file as messages and results name it: relative to the check's folder.
fn shown(file: &Path, ctx: &Context) -> String {
    file.strip_prefix(&ctx.cwd)
        .unwrap_or(file)
        .to_string_lossy()
        .replace('\\', "/")
}

/// One file's tests.
#[derive(Debug, Default)]
struct Parsed {
    format: Option<Format>,
    cases: Vec<TestResult>,
    tally: Tally,
    left_out: u64,
    noop: Option<String>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    passed: u64,
    failed: u64,
    skipped: u64,
    flaky: u64,
    /// Of `failed`, those outside any test (see [`Found::outside`]).
    outside: u64,
}

/// Reads every file, on every core when there are several.
fn parse_all(
    files: &[(PathBuf, Option<Format>)],
    ctx: &Context,
    locator: &Locator,
) -> Result<Vec<Parsed>, Problem> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len());
    if threads <= 1 {
        return files
            .iter()
            .map(|(f, format)| parse_file(f, *format, ctx, locator))
            .collect();
    }
    let chunk = files.len().div_ceil(threads);
    let results: Vec<Result<Vec<Parsed>, Problem>> = std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|(f, format)| parse_file(f, *format, ctx, locator))
                        .collect::<Result<Vec<_>, _>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Problem::Unreadable(
                        "report unreadable: reader failed".into(),
                    ))
                })
            })
            .collect()
    });
    let mut all = Vec::with_capacity(files.len());
    for part in results {
        all.extend(part?);
    }
    Ok(all)
}

/// Reads one file in the format `forced` names, else in the one its content shows.
fn parse_file(
    file: &Path,
    forced: Option<Format>,
    ctx: &Context,
    locator: &Locator,
) -> Result<Parsed, Problem> {
    let shown = shown(file, ctx);
    let unreadable =
        |message: String| Problem::Unreadable(format!("report unreadable: `{shown}`: {message}"));
    let handle = std::fs::File::open(file).map_err(|e| unreadable(e.to_string()))?;
    let mut reader: Box<dyn BufRead> =
        Box::new(std::io::BufReader::with_capacity(64 * 1024, handle));
    // UTF-16 (Windows PowerShell 5's `>` writes it): read as the same text in UTF-8.
    if let Some(text) = utf16(&mut reader).map_err(unreadable)? {
        reader = Box::new(std::io::Cursor::new(text.into_bytes()));
    }
    let kind = match (detect(&mut reader), forced) {
        (Ok(kind), None) => kind,
        // A named format is read whatever the first bytes look like; an empty file is
        // no report in any format.
        (Ok(_), Some(format)) => Kind::of(format),
        (Err(reason), Some(format)) if reason != EMPTY => Kind::of(format),
        (Err(reason), _) => return Err(unreadable(reason)),
    };
    let mut sink = Collector::new(locator, &ctx.redactor);
    let outcome = match kind {
        Kind::Xml(format) => match format {
            Format::Trx => trx::read(reader, &mut sink),
            Format::Nunit => nunit::read(reader, &mut sink),
            Format::Xunit => xunit::read(reader, &mut sink),
            _ => junit::read(reader, &mut sink),
        }
        .map(|()| format),
        Kind::JsonDocument => json::read(reader, forced, &mut sink),
        Kind::JsonEvents => go_json::read(reader, &mut sink).map(|()| Format::GoTestJson),
        Kind::Tap => tap::read(reader, &mut sink).map(|()| Format::Tap),
    };
    let format = match outcome {
        Ok(format) => format,
        Err(error) => {
            let line = error
                .line
                .or_else(|| error.offset.map(|at| line_at(file, at)));
            let at = line.map_or_else(String::new, |n| format!(", line {n}"));
            return Err(unreadable(format!("{}{at}", error.message)));
        }
    };
    Ok(Parsed {
        format: Some(format),
        cases: sink.cases,
        tally: sink.tally,
        left_out: sink.left_out,
        noop: sink.noop,
    })
}

/// The whole text of a UTF-16 file (told by its byte-order mark, or by a `<` or `{`
/// that is half of its first two bytes), its XML declaration then saying UTF-8; `None`
/// for any other file, which is left as it was.
fn utf16(reader: &mut dyn BufRead) -> Result<Option<String>, String> {
    let head = reader.fill_buf().map_err(|e| e.to_string())?;
    let little = match head {
        [0xFF, 0xFE, ..] | [b'<' | b'{', 0, ..] => true,
        [0xFE, 0xFF, ..] | [0, b'<' | b'{', ..] => false,
        _ => return Ok(None),
    };
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(reader, MAX_FILE_BYTES + 1),
        &mut bytes,
    )
    .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "larger than {} MiB",
            MAX_FILE_BYTES / (1024 * 1024)
        ));
    }
    if bytes.len() % 2 != 0 {
        return Err("UTF-16 with an odd number of bytes (cut short?)".to_owned());
    }
    let units = bytes.chunks_exact(2).map(|pair| {
        if little {
            u16::from_le_bytes([pair[0], pair[1]])
        } else {
            u16::from_be_bytes([pair[0], pair[1]])
        }
    });
    let mut text: String = char::decode_utf16(units)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("not valid UTF-16: {e}"))?;
    if text.starts_with('\u{feff}') {
        text.remove(0);
    }
    // The declaration names the encoding the bytes were in; they are UTF-8 now.
    if text.starts_with("<?xml")
        && let Some(end) = text.find("?>")
    {
        let declaration = text[..end]
            .replace("UTF-16", "UTF-8")
            .replace("utf-16", "utf-8");
        text.replace_range(..end, &declaration);
    }
    Ok(Some(text))
}

/// The line of byte `offset` in `file` (1-based).
fn line_at(file: &Path, offset: u64) -> u64 {
    use std::io::Read as _;
    let Ok(handle) = std::fs::File::open(file) else {
        return 1;
    };
    let mut bytes = Vec::new();
    let _ = handle.take(offset).read_to_end(&mut bytes);
    1 + memchr::memchr_iter(b'\n', &bytes).count() as u64
}

/// What a report's first bytes show it to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// XML, in the format its root element says (JUnit, in its dialects, else).
    Xml(Format),
    /// One JSON document, whose keys say the format (CTRF, Jest, Vitest, Mocha, RSpec,
    /// Playwright).
    JsonDocument,
    /// One JSON event per line (`go test -json`).
    JsonEvents,
    /// A TAP stream.
    Tap,
}

impl Kind {
    /// How a report the manifest says is in `format` is read.
    fn of(format: Format) -> Kind {
        match format {
            Format::GoTestJson => Kind::JsonEvents,
            Format::Tap => Kind::Tap,
            xml if is_xml(xml) => Kind::Xml(xml),
            _ => Kind::JsonDocument,
        }
    }
}

/// What [`detect`] says of a file with nothing in it.
const EMPTY: &str = "the file is empty";

/// What the report is, from the first bytes that are not a byte-order mark or white
/// space.
fn detect(reader: &mut impl BufRead) -> Result<Kind, String> {
    let head = reader.fill_buf().map_err(|e| e.to_string())?;
    let skip_bom = if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
        3
    } else {
        0
    };
    reader.consume(skip_bom);
    let head = reader.fill_buf().map_err(|e| e.to_string())?;
    let first = head.iter().position(|b| !b.is_ascii_whitespace());
    match first.map(|i| (head[i], &head[i..])) {
        None => Err(EMPTY.to_owned()),
        Some((b'<', rest)) => Ok(Kind::Xml(xml_format(rest))),
        Some((b'{', rest)) => {
            // `go test -json` writes one event per line, each with an "Action".
            let line = rest.split(|&b| b == b'\n').next().unwrap_or_default();
            if serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(line)
                .is_ok_and(|event| event.contains_key("Action"))
            {
                Ok(Kind::JsonEvents)
            } else {
                Ok(Kind::JsonDocument)
            }
        }
        Some((_, rest)) if tap::looks_like(rest) => Ok(Kind::Tap),
        Some((_, rest)) => {
            // The first bytes, as text a reader can place (untrusted: quoted later).
            let shown: String = String::from_utf8_lossy(&rest[..rest.len().min(40)])
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            Err(format!(
                "not a test report (JUnit, TRX, NUnit or xUnit.net XML, CTRF, Jest, Vitest, Mocha, RSpec or Playwright JSON, `go test -json` output or TAP): it begins `{}`",
                shown.trim_end().replace('`', "'")
            ))
        }
    }
}

/// The XML format, from the root element's name in the first bytes (a declaration,
/// comments and processing instructions before it are passed over): `<TestRun>` is
/// TRX, `<test-run>` NUnit 3 and `<test-results>` NUnit 2, `<assemblies>` or a lone
/// `<assembly>` xUnit.net; anything else is JUnit, as is a root not found there (after
/// a DOCTYPE, or beyond the first bytes), whose reader then says what is wrong.
fn xml_format(head: &[u8]) -> Format {
    let mut rest = head;
    loop {
        rest = rest.trim_ascii_start();
        let skip = if rest.starts_with(b"<?") {
            memchr::memmem::find(rest, b"?>").map(|i| i + 2)
        } else if rest.starts_with(b"<!--") {
            memchr::memmem::find(rest, b"-->").map(|i| i + 3)
        } else {
            break;
        };
        match skip {
            Some(end) => rest = &rest[end..],
            None => return Format::Junit,
        }
    }
    let Some(tag) = rest.strip_prefix(b"<") else {
        return Format::Junit;
    };
    let end = tag
        .iter()
        .position(|b| b.is_ascii_whitespace() || matches!(b, b'/' | b'>'))
        .unwrap_or(tag.len());
    let name = &tag[..end];
    // A prefixed root (`<t:TestRun xmlns:t="…">`) is named by its local part.
    let local = name.rsplit(|&b| b == b':').next().unwrap_or(name);
    match local {
        b"TestRun" => Format::Trx,
        b"test-run" | b"test-results" => Format::Nunit,
        b"assemblies" | b"assembly" => Format::Xunit,
        _ => Format::Junit,
    }
}

/// A reader's complaint: what, and where when known (a line, or a byte offset).
#[derive(Debug)]
struct ReadError {
    message: String,
    line: Option<u64>,
    offset: Option<u64>,
}

impl ReadError {
    fn new(message: impl Into<String>) -> ReadError {
        ReadError {
            message: message.into(),
            line: None,
            offset: None,
        }
    }

    fn at_line(message: impl Into<String>, line: u64) -> ReadError {
        ReadError {
            line: Some(line),
            ..ReadError::new(message)
        }
    }

    fn at_offset(message: impl Into<String>, offset: u64) -> ReadError {
        ReadError {
            offset: Some(offset),
            ..ReadError::new(message)
        }
    }
}

/// One test as a reader found it, before it is bounded and located.
#[derive(Debug, Default)]
struct Found<'a> {
    suite: &'a str,
    name: &'a str,
    outcome: Option<TestOutcome>,
    duration_ms: Option<u64>,
    message: &'a str,
    /// What the failure printed: its text, else its output.
    output: &'a str,
    /// Where the report says the test is.
    file: Option<&'a str>,
    line: Option<u32>,
    /// A Go package's import path: where relative file names in its output start.
    package: Option<&'a str>,
    /// Not a test: a failure of what is around the tests (a file that failed to load, a
    /// suite's own set-up, a package, totals the tests do not bear out), which runners'
    /// logs do not count as a test.
    outside: bool,
}

/// The tests of one file, bounded as they arrive.
struct Collector<'l> {
    cases: Vec<TestResult>,
    tally: Tally,
    left_out: u64,
    /// A no-op the report showed (its first).
    noop: Option<String>,
    locator: &'l Locator,
    redactor: &'l Redactor,
    located: usize,
}

/// The most failures per file whose place in the code is looked for.
const MAX_LOCATED: usize = 1000;

impl<'l> Collector<'l> {
    fn new(locator: &'l Locator, redactor: &'l Redactor) -> Collector<'l> {
        Collector {
            cases: Vec::new(),
            tally: Tally::default(),
            left_out: 0,
            noop: None,
            locator,
            redactor,
            located: 0,
        }
    }

    /// A report's own totals held against the tests it lists: each `(claimed, listed,
    /// what)` whose total claims more than are listed (more tests, more failures) is a
    /// failure of the report, a case `(the report's summary)` saying so — what was not
    /// listed may have failed.
    fn hold_totals(&mut self, claims: &[(Option<u64>, u64, &str)]) {
        let above: Vec<(u64, u64, &str)> = claims
            .iter()
            .filter_map(|&(claimed, listed, what)| Some((claimed?, listed, what)))
            .filter(|&(claimed, listed, _)| claimed > listed)
            .collect();
        self.contradicted_totals(&above);
    }

    /// Holds a format's totals that are counted from the very tests it lists
    /// (Playwright's `stats`) to them: any difference, either way, is a failure.
    fn hold_exact_totals(&mut self, claims: &[(u64, u64, &str)]) {
        let differ: Vec<(u64, u64, &str)> = claims
            .iter()
            .copied()
            .filter(|&(claimed, listed, _)| claimed != listed)
            .collect();
        self.contradicted_totals(&differ);
    }

    /// One failure naming each total that disagrees with the tests listed.
    fn contradicted_totals(&mut self, differ: &[(u64, u64, &str)]) {
        let why: Vec<String> = differ
            .iter()
            .map(|(claimed, listed, what)| format!("{claimed} {what}, it lists {listed}"))
            .collect();
        if why.is_empty() {
            return;
        }
        let message = format!("the summary counts {}", why.join("; "));
        self.add(Found {
            name: "(the report's summary)",
            outcome: Some(TestOutcome::Error),
            message: &message,
            outside: true,
            ..Found::default()
        });
    }

    /// Gives the case listed at `index` its suite, learnt after it was added (a TRX
    /// report may define its tests' classes after their results): masked and bounded
    /// as [`Collector::add`] does, and a name that begins with the suite loses it.
    fn set_suite(&mut self, index: usize, suite: &str) {
        let suite = one_line(&self.redactor.redact(suite), MAX_NAME_CHARS);
        let Some(case) = self.cases.get_mut(index) else {
            return;
        };
        if let Some(rest) = case
            .name
            .strip_prefix(suite.as_str())
            .and_then(|rest| rest.strip_prefix('.'))
            && !suite.is_empty()
            && !rest.is_empty()
        {
            case.name = rest.into();
        }
        case.suite = suite;
    }

    /// Skipped tests a report counts without listing them.
    fn unlisted_skipped(&mut self, n: u64) {
        self.tally.skipped = self.tally.skipped.saturating_add(n);
    }

    /// A failed test added earlier (at `index` among the cases, when it was listed)
    /// passed when the runner ran it again: one flaky test, not a failure.
    fn passed_on_rerun(&mut self, index: Option<usize>) {
        self.tally.failed = self.tally.failed.saturating_sub(1);
        self.tally.passed += 1;
        self.tally.flaky += 1;
        if let Some(case) = index.and_then(|i| self.cases.get_mut(i)) {
            case.outcome = TestOutcome::Flaky;
            case.file = None;
            case.line = None;
        }
    }

    /// Adds a test; where it is listed among the cases (`None`: left out, past the
    /// bound).
    fn add(&mut self, found: Found<'_>) -> Option<usize> {
        let outcome = found.outcome.unwrap_or(TestOutcome::Passed);
        match outcome {
            TestOutcome::Passed => self.tally.passed += 1,
            TestOutcome::Flaky => {
                self.tally.passed += 1;
                self.tally.flaky += 1;
            }
            TestOutcome::Failed | TestOutcome::Error => {
                self.tally.failed += 1;
                self.tally.outside += u64::from(found.outside);
            }
            TestOutcome::Skipped => self.tally.skipped += 1,
        }
        let room = if outcome.is_failure() {
            MAX_CASES
        } else {
            MAX_CASES - FAILURES_ONLY
        };
        if self.cases.len() >= room {
            self.left_out += 1;
            return None;
        }
        // Masked whole, then cut.
        let redactor = self.redactor;
        let (suite, name) = (
            self.locator.unrooted(found.suite),
            self.locator.unrooted(found.name),
        );
        let (suite, name) = (redactor.redact(&suite), redactor.redact(&name));
        let mut case = TestResult {
            suite: one_line(&suite, MAX_NAME_CHARS),
            name: one_line(&name, MAX_NAME_CHARS),
            outcome,
            duration_ms: found.duration_ms,
            message: None,
            output: None,
            file: None,
            line: None,
            id: None,
            quarantined: false,
            history: None,
        };
        if matches!(
            outcome,
            TestOutcome::Failed | TestOutcome::Error | TestOutcome::Flaky
        ) {
            // A runner's colours (Playwright's JSON keeps them) and other terminal
            // escapes are no part of what it said.
            let (message, output) = (
                crate::untrusted::clean(found.message),
                crate::untrusted::clean(found.output),
            );
            let (message, output) = (redactor.redact(&message), redactor.redact(&output));
            let message = first_lines(&message, &output);
            case.message = (!message.is_empty()).then_some(message);
            let output = excerpt(output.trim_end(), MAX_OUTPUT_CHARS);
            case.output = (!output.is_empty()).then_some(output);
        }
        if outcome.is_failure() && self.located < MAX_LOCATED {
            self.located += 1;
            let place = self.locator.locate(
                found.file,
                found.line,
                &[found.output, found.message],
                found.package,
            );
            if let Some((file, line)) = place {
                case.file = Some(file);
                case.line = line;
            }
        }
        self.cases.push(case);
        Some(self.cases.len() - 1)
    }
}

/// The reports' tests and counts, together. Reports in different formats whose counts
/// agree (as many tests in all, as many failed) are one run written twice — jest with
/// jest-junit and a CTRF reporter — and are counted once: in the format named first.
/// Reports of one format are always added up (one file per package, per binary).
fn combine(files: &[(PathBuf, Option<Format>)], ctx: &Context, parsed: Vec<Parsed>) -> Reading {
    let format = parsed
        .iter()
        .find_map(|p| p.format)
        .unwrap_or(Format::Junit);
    let parsed = one_reading_per_run(parsed);
    let mut tally = Tally::default();
    let mut cases = Vec::with_capacity(parsed.iter().map(|p| p.cases.len()).sum());
    let mut left_out = 0;
    let mut noop = None;
    for part in parsed {
        noop = noop.or(part.noop);
        tally.add(&part.tally);
        left_out += part.left_out;
        // As each file's collector keeps them: failures may take the last places.
        for case in part.cases {
            let room = if case.outcome.is_failure() {
                MAX_CASES
            } else {
                MAX_CASES - FAILURES_ONLY
            };
            if cases.len() < room {
                cases.push(case);
            } else {
                left_out += 1;
            }
        }
    }
    Reading {
        report: TestReport {
            format: format.as_str().into(),
            files: files.iter().map(|(f, _)| shown(f, ctx).into()).collect(),
            log_counts: None,
            cases,
            left_out,
            quarantine: Vec::new(),
        },
        counts: TestCounts {
            passed: tally.passed,
            failed: tally.failed,
            skipped: tally.skipped,
            runner: format.as_str().to_owned(),
            flaky: tally.flaky,
            quarantined: 0,
        },
        noop,
        outside_failures: tally.outside,
    }
}

/// The files of each format, less the formats that only repeat an earlier one's counts
/// (the same run read through another reporter).
fn one_reading_per_run(parsed: Vec<Parsed>) -> Vec<Parsed> {
    let mut formats: Vec<(Option<Format>, Tally)> = Vec::new();
    for part in &parsed {
        match formats.iter_mut().find(|(f, _)| *f == part.format) {
            Some((_, tally)) => tally.add(&part.tally),
            None => formats.push((part.format, part.tally)),
        }
    }
    if formats.len() < 2 {
        return parsed;
    }
    let mut kept: Vec<(Option<Format>, Tally)> = Vec::new();
    for (format, tally) in formats {
        if !kept.iter().any(|(_, k)| k.same_run_as(&tally)) {
            kept.push((format, tally));
        }
    }
    parsed
        .into_iter()
        .filter(|p| kept.iter().any(|(f, _)| *f == p.format))
        .collect()
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.passed = self.passed.saturating_add(other.passed);
        self.failed = self.failed.saturating_add(other.failed);
        self.skipped = self.skipped.saturating_add(other.skipped);
        self.flaky = self.flaky.saturating_add(other.flaky);
        self.outside = self.outside.saturating_add(other.outside);
    }

    /// Whether two readings count the same tests: as many in all, as many failed (a
    /// reporter may sort a Jest `todo` as passed where another calls it skipped).
    fn same_run_as(&self, other: &Tally) -> bool {
        let total = |t: &Tally| t.passed + t.failed + t.skipped;
        total(self) > 0 && total(self) == total(other) && self.failed == other.failed
    }
}

/// `text` on one line (control characters as spaces), at most `max` characters.
fn one_line(text: &str, max: usize) -> CompactString {
    let text = text.trim();
    // Most names: short, no control characters; copied as they are.
    let breaks = |c: char| c.is_control() || crate::untrusted::neutralise::is_break(c);
    if text.len() <= max
        && !text.bytes().any(|b| b.is_ascii_control())
        && (text.is_ascii() || !text.chars().any(breaks))
    {
        return CompactString::from(text);
    }
    let mut out = CompactString::default();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        out.push(if breaks(c) { ' ' } else { c });
    }
    // A control character at an end is no part of the name (`bel\x07` is `bel`).
    let trimmed = out.trim();
    if trimmed.len() == out.len() {
        out
    } else {
        CompactString::from(trimmed)
    }
}

/// A failure's message: the report's message, else the first lines of its output;
/// at most six lines (an assertion's values come after its first: jest's `Expected:`
/// and `Received:`, a Rust panic's `left` and `right`), [`MAX_MESSAGE_CHARS`]
/// characters. A message that is only the first line of the output (nextest's, a Rust panic's
/// place) gives way to the output's first lines; a Rust backtrace ends them.
fn first_lines(message: &str, output: &str) -> CompactString {
    let message = message.trim();
    let source = if message.is_empty()
        || (!message.contains('\n') && output.trim_start().starts_with(message))
    {
        output
    } else {
        message
    };
    let lines: Vec<&str> = source
        .lines()
        .map(str::trim_end)
        .take_while(|l| {
            *l != "stack backtrace:" && !l.starts_with("note: run with `RUST_BACKTRACE")
        })
        .filter(|l| !l.trim().is_empty())
        .take(6)
        .collect();
    let joined = lines.join("\n");
    let mut out = CompactString::default();
    for (i, c) in joined.chars().enumerate() {
        if i == MAX_MESSAGE_CHARS {
            out.push('…');
            break;
        }
        out.push(c);
    }
    out
}

/// At most `max` characters of `text`: its start and its end, with a marker between.
fn excerpt(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let half = max / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(count - half).collect();
    format!(
        "{head}\n… {} characters left out …\n{tail}",
        count - 2 * half
    )
}

/// Appends `more` to `buffer` up to [`MAX_CAPTURE_BYTES`] (on a character boundary).
fn capture(buffer: &mut String, more: &str) {
    let room = MAX_CAPTURE_BYTES.saturating_sub(buffer.len());
    if room == 0 {
        return;
    }
    let mut end = more.len().min(room);
    while !more.is_char_boundary(end) {
        end -= 1;
    }
    buffer.push_str(&more[..end]);
}

/// Seconds as a report writes them (`0.123`, `1,234.5`) in milliseconds.
fn seconds_to_ms(text: &str) -> Option<u64> {
    let cleaned: String = text.trim().chars().filter(|&c| c != ',').collect();
    let secs: f64 = cleaned.parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| (secs * 1000.0).round() as u64)
}

#[cfg(test)]
mod dotnet_tests;
#[cfg(test)]
mod tests;

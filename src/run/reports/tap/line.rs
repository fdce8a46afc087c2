//! One line of TAP: what it is (`TAP version`, a plan, a test line), read as
//! TAP::Parser reads it, and lines read with a bound on their length.

use std::io::BufRead;
use std::sync::LazyLock;

use regex::Regex;

use super::MAX_LINE;

/// `TAP version 13`.
pub(super) static VERSION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^TAP version (\d{1,9})\s*$").expect("valid regex"));
/// `1..7`, `1..0 # SKIP no database`.
pub(super) static PLAN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^1\.\.(\d+)\s*(?:#\s*(.*))?$").expect("valid regex"));
/// `bats --tap --timing`: `ok 1 adds in 22ms`.
static BATS_TIME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\s+in (\d{1,12})ms$").expect("valid regex"));

/// `# SKIP` or `# TODO` after a test's description.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Directive {
    Skip,
    Todo,
}

/// A test line, read.
pub(super) struct Parsed {
    pub(super) ok: bool,
    pub(super) number: Option<u64>,
    pub(super) name: String,
    pub(super) directive: Option<Directive>,
    pub(super) duration_ms: Option<u64>,
}

/// `ok 1 - name # SKIP reason` read, as TAP::Parser reads it: the description runs to
/// the first `#` not escaped, a directive only when `SKIP` or `TODO` (any case) follows.
pub(super) fn point(text: &str) -> Option<Parsed> {
    let (ok, rest) = if let Some(rest) = text.strip_prefix("not ok") {
        (false, rest)
    } else {
        (true, text.strip_prefix("ok")?)
    };
    if rest
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
    {
        return None;
    }
    let rest = rest.trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    // A number too large for u64 is a number out of sequence.
    let number = (digits > 0).then(|| rest[..digits].parse().unwrap_or(u64::MAX));
    let rest = rest[digits..].trim_start();
    let (description, directive) = split_directive(rest);
    let description = description.trim();
    let description = description
        .strip_prefix("- ")
        .or_else(|| (description == "-").then_some(""))
        .unwrap_or(description);
    let mut name = unescape(description.trim());
    // `bats --tap --timing` ends each name with its time.
    let mut duration_ms = None;
    if let Some(time) = BATS_TIME.captures(&name) {
        duration_ms = time[1].parse().ok();
        let at = time.get(0).map_or(name.len(), |m| m.start());
        name.truncate(at);
    }
    Some(Parsed {
        ok,
        number,
        name,
        directive,
        duration_ms,
    })
}

/// A description and its directive: what comes before the first `#` not escaped,
/// when `SKIP` or `TODO` follows it.
fn split_directive(text: &str) -> (&str, Option<Directive>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'#' => {
                let after = text[i + 1..].trim_start();
                for (word, directive) in [("skip", Directive::Skip), ("todo", Directive::Todo)] {
                    let boundary = after
                        .get(4..)
                        .is_some_and(|r| !r.starts_with(|c: char| c.is_alphanumeric() || c == '_'));
                    // `get`: the fourth byte may be inside a character.
                    let named = after.get(..4).is_some_and(|w| w.eq_ignore_ascii_case(word));
                    if named && boundary {
                        return (&text[..i], Some(directive));
                    }
                }
                return (text, None);
            }
            _ => i += 1,
        }
    }
    (text, None)
}

/// `\#` and `\\` as the characters they stand for (TAP 14; node and Test::More write
/// them).
fn unescape(text: &str) -> String {
    if !text.contains('\\') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(next @ ('#' | '\\')) => out.push(next),
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// At most `max` bytes of `text`, cut on a character boundary.
pub(super) fn bounded(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// Reads one line into `line`, keeping at most [`MAX_LINE`] bytes of it (the rest is
/// skipped): the bytes read, and whether the line was cut.
pub(super) fn read_line(
    source: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> std::io::Result<(usize, bool)> {
    let mut total = 0;
    let mut cut = false;
    loop {
        let buf = match source.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok((total, cut));
        }
        let (part, used, ended) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        cut |= part.len() > room;
        line.extend_from_slice(&part[..part.len().min(room)]);
        source.consume(used);
        total += used;
        if ended {
            return Ok((total, cut));
        }
    }
}

//! The writer between a check and its log: everything the check prints passes through
//! it before it reaches the disk, so no secret is ever written.
//!
//! Streaming, in bounded memory: text is redacted a block of whole lines at a time (a
//! secret split across two reads is still whole by then), and the end of a line is
//! waited for up to [`MAX_LINE`] bytes. A longer line is written in parts, each cut
//! where nothing masked crosses the cut (see [`RedactingWriter::write`]); one that
//! gives no such cut in [`MAX_HELD`] bytes is masked from there to its end. Everything
//! that is not a secret is written byte for byte (bytes that are not UTF-8 included); a
//! secret reads `***`.
//!
//! - `::add-mask::VALUE` printed by a check masks VALUE from then on, in every check of
//!   the run ([`Masks`] is shared by the run), as GitHub does in its console;
//! - a private key block is masked through to its end, however many blocks it spans.

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::redact::{
    KEY_BEGIN, KEY_END, Look, MASK, Redactor, Survey, declarations, may_hold_key_line,
};

/// The longest line waited for whole: a longer one is cut into parts.
pub const MAX_LINE: usize = 1024 * 1024;

/// The secrets of a run: its redactor, to which each check's `::add-mask::` lines add.
#[derive(Debug, Clone, Default)]
pub struct Masks(Arc<RwLock<Redactor>>);

impl Masks {
    pub fn new(redactor: Redactor) -> Masks {
        Masks(Arc::new(RwLock::new(redactor)))
    }

    /// The redactor, to read (a writer that panicked while holding it left nothing
    /// half-done: values are added whole).
    fn read(&self) -> RwLockReadGuard<'_, Redactor> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The redactor, to add to.
    fn write(&self) -> RwLockWriteGuard<'_, Redactor> {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `text` redacted with what is known now (borrowed when nothing was masked).
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.read().redact(text)
    }

    /// Whether nothing in `text` is masked, and where something masked may be under
    /// way at its end (see [`Redactor::survey`]).
    pub fn survey(&self, text: &[u8]) -> Survey {
        self.read().survey(text)
    }

    /// Whether `text` is certain to be left as it is (see [`Redactor::look`]).
    fn look(&self, text: &str) -> Look {
        self.read().look(text)
    }

    /// [`Masks::redact`] of a text [`Masks::look`] looked at.
    fn redact_looked<'a>(&self, text: &'a str, look: Look) -> Cow<'a, str> {
        self.read().redact_looked(text, look)
    }

    /// The redactor as it is now (for the results written after a check).
    pub fn snapshot(&self) -> Redactor {
        self.read().clone()
    }

    fn declare(&self, value: &str) {
        self.write().add_declared(value);
    }

    /// Declares the start of a value whose line went on past what could be held (see
    /// [`Redactor::add_declared_start`]).
    fn declare_start(&self, value: &str) {
        self.write().add_declared_start(value);
    }
}

/// A writer that redacts what it is given before `inner` gets it.
pub struct RedactingWriter<W: Write> {
    inner: W,
    masks: Masks,
    /// Bytes of a line not yet ended.
    pending: Vec<u8>,
    /// Inside a private key block that an earlier block began.
    in_key: bool,
    /// How long `pending` grows before a cut is tried again (after one failed).
    next_cut: usize,
    /// The rest of an over-long line is masked: no cut of it was safe.
    masking_line: bool,
    /// What of that rest is still to be looked through for declarations and keys (the
    /// last [`CUT_CONTEXT`] bytes of what was, so that none is missed across reads).
    masked: Vec<u8>,
}

impl<W: Write> RedactingWriter<W> {
    pub fn new(inner: W, masks: Masks) -> RedactingWriter<W> {
        RedactingWriter {
            inner,
            masks,
            pending: Vec::with_capacity(64 * 1024),
            in_key: false,
            next_cut: 0,
            masking_line: false,
            masked: Vec::new(),
        }
    }

    /// Writes what is left (a last line without its end) and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        let rest = std::mem::take(&mut self.pending);
        self.emit(&rest)?;
        self.inner.flush()?;
        Ok(self.inner)
    }

    /// Redacts `block` (whole lines, or the part of a line before a cut) and writes it:
    /// as it is when nothing in it is a secret (most output), without a copy.
    fn emit(&mut self, block: &[u8]) -> io::Result<()> {
        let mut in_key = self.in_key;
        let out = self.render(block, &mut in_key, true);
        self.in_key = in_key;
        self.inner.write_all(&out)
    }

    /// `block` redacted, from inside a private key or not (`in_key`, updated to where
    /// the block ends); `declare`: values of its `::add-mask::` lines are added to the
    /// run's masks.
    fn render<'b>(&self, block: &'b [u8], in_key: &mut bool, declare: bool) -> Cow<'b, [u8]> {
        if block.is_empty() {
            return Cow::Borrowed(block);
        }
        if let Ok(text) = std::str::from_utf8(block) {
            let mut out = Vec::new();
            return match self.text(text, &mut out, in_key, declare) {
                None => Cow::Borrowed(block),
                Some(()) => Cow::Owned(out),
            };
        }
        // Values declared across bytes that are not UTF-8 are declared part by part,
        // before any part is redacted.
        if declare {
            self.declare_in(block, Unended::Whole);
        }
        let mut out = Vec::with_capacity(block.len());
        for chunk in block.utf8_chunks() {
            let text = chunk.valid();
            if !text.is_empty() && self.text(text, &mut out, in_key, false).is_none() {
                out.extend_from_slice(text.as_bytes());
            }
            // Bytes that are not UTF-8 hold no secret a redactor knows: kept as they are,
            // but inside a private key (masked with it).
            if !*in_key {
                out.extend_from_slice(chunk.invalid());
            }
        }
        Cow::Owned(out)
    }

    /// Redacts `text` into `out`; `None` (and nothing in `out`) when it is to be
    /// written as it is.
    fn text(
        &self,
        mut text: &str,
        out: &mut Vec<u8>,
        in_key: &mut bool,
        declare: bool,
    ) -> Option<()> {
        let mut changed = false;
        if *in_key {
            // The rest of a private key an earlier block began: masked to its end.
            changed = true;
            match KEY_END.find(text) {
                Some(end) => {
                    *in_key = false;
                    out.extend_from_slice(MASK.as_bytes());
                    text = &text[end.end()..];
                }
                None => {
                    if text.ends_with('\n') {
                        out.extend_from_slice(MASK.as_bytes());
                        out.push(b'\n');
                    }
                    return Some(());
                }
            }
        }
        let look = self.masks.look(text);
        if !changed && look.leaves {
            // No value, declaration, key or token shape: most output, told in one pass.
            return None;
        }
        let bytes = text.as_bytes();
        if declare {
            for (value, _) in declarations(bytes) {
                self.masks.declare(&text[value]);
            }
        }
        // A key that begins here and does not end here goes on in the next block.
        if may_hold_key_line(bytes)
            && let Some(begin) = KEY_BEGIN.find_iter(text).last()
            && !KEY_END.is_match(&text[begin.end()..])
        {
            *in_key = true;
        }
        match self.masks.redact_looked(text, look) {
            Cow::Borrowed(_) if !changed => None,
            redacted => {
                out.extend_from_slice(redacted.as_bytes());
                Some(())
            }
        }
    }

    /// Writes part of a line that has grown past [`MAX_LINE`] without ending, cut where
    /// nothing masked crosses the cut: not inside anything already whole in what is
    /// held (the two parts redact to what the whole does), before anything that may
    /// still be under way at its end ([`Masks::survey`]), and [`CUT_CONTEXT`] bytes
    /// or more before that end. Where no such cut is found, more of the line is
    /// waited for; past [`MAX_HELD`], the rest of the line is masked.
    fn cut_long_line(&mut self) -> io::Result<()> {
        let held = std::mem::take(&mut self.pending);
        let survey = self.masks.survey(&held);
        // Nothing in it to mask (most over-long lines): either part is written as it is.
        let quiet = !self.in_key && survey.leaves;
        if !quiet {
            // Values the line has declared so far are masked from now on, in both parts.
            self.declare_in(&held, Unended::Wait);
        }
        let mut first = held.len() - CUT_CONTEXT;
        if let Some(open) = survey.open {
            first = first.min(open);
        }
        // The whole redacted (the same for every cut tried), when first needed.
        let mut whole = None;
        let mut tried = Vec::new();
        for at in [
            first,
            first.saturating_sub(CUT_CONTEXT),
            first.saturating_sub(4 * CUT_CONTEXT),
            first / 2,
        ] {
            let at = char_start(&held, at);
            if at == 0 || tried.contains(&at) {
                continue;
            }
            tried.push(at);
            if quiet {
                // A part holds no marker or value the whole does not (it only loses
                // what the cut cuts off): as it is.
                self.inner.write_all(&held[..at])?;
            } else if let Some((before, in_key)) = self.cut_holds(
                &held,
                at,
                whole.get_or_insert_with(|| {
                    let mut in_key = self.in_key;
                    (self.render(&held, &mut in_key, false), in_key)
                }),
            ) {
                self.inner.write_all(&before)?;
                self.in_key = in_key;
            } else {
                continue;
            }
            self.pending = held;
            self.pending.drain(..at);
            self.next_cut = 0;
            return Ok(());
        }
        if held.len() < MAX_HELD {
            // Tried again when half as much again is held (a line with no safe cut, one
            // masked run of tokens, is redacted whole a few times, not once a read).
            self.next_cut = (held.len() + (held.len() / 2).max(4 * CUT_CONTEXT)).min(MAX_HELD);
            self.pending = held;
            return Ok(());
        }
        // No safe cut in all that is held: the line is masked from here to its end. What
        // is masked is still looked through: its declarations are kept (their values are
        // masked from now on), and a private key it begins is masked on the next lines.
        self.inner.write_all(MASK.as_bytes())?;
        self.masking_line = true;
        self.masked = held;
        self.look_through_masked(false);
        self.pending.clear();
        self.next_cut = 0;
        Ok(())
    }

    /// Declares the values of the `::add-mask::` lines in what is being masked, and
    /// follows the private keys it begins and ends; keeps its last [`CUT_CONTEXT`]
    /// bytes unless the line has `ended`.
    fn look_through_masked(&mut self, ended: bool) {
        let unended = if ended {
            Unended::Whole
        } else {
            Unended::Start
        };
        self.declare_in(&self.masked, unended);
        let mut in_key = self.in_key;
        let _ = self.render(&self.masked, &mut in_key, false);
        self.in_key = in_key;
        if ended {
            self.masked = Vec::new();
        } else {
            let keep = self.masked.len().saturating_sub(CUT_CONTEXT);
            self.masked.drain(..keep);
        }
    }

    /// Whether `held` redacts, cut at `at`, to what it redacts to whole (its private
    /// keys followed across the cut as across lines).
    /// `whole` is `held` redacted, and whether it ends inside a private key. Where the
    /// cut holds, the part before it redacted and whether that ends inside a key: what
    /// to write (its declarations were made before).
    fn cut_holds<'h>(
        &self,
        held: &'h [u8],
        at: usize,
        whole: &(Cow<'_, [u8]>, bool),
    ) -> Option<(Cow<'h, [u8]>, bool)> {
        let (whole, whole_key) = whole;
        let mut before_key = self.in_key;
        let before = self.render(&held[..at], &mut before_key, false);
        let mut parts_key = before_key;
        let after = self.render(&held[at..], &mut parts_key, false);
        let same = whole.len() == before.len() + after.len()
            && whole.starts_with(&before)
            && whole.ends_with(&after);
        // Masks that meet are one where the whole is (overlapping finds) and two in the
        // parts: what is shown is the same.
        let shown_the_same = || {
            let parts = [before.as_ref(), after.as_ref()].concat();
            masks_as_one(whole) == masks_as_one(&parts)
        };
        (*whole_key == parts_key && (same || shown_the_same())).then_some((before, before_key))
    }

    /// Declares the values of the `::add-mask::` lines of `held`, part of a line that
    /// goes on: those that have ended, and the last as `unended` says.
    fn declare_in(&self, held: &[u8], unended: Unended) {
        for (value, ended) in declarations(held) {
            let unended = if ended { Unended::Whole } else { unended };
            if matches!(unended, Unended::Wait) {
                continue;
            }
            // A value holding bytes that are not UTF-8: each part between them is
            // declared (text is redacted in its UTF-8 parts), the last one by its start
            // where its line goes on past what is held.
            let mut parts = held[value].utf8_chunks().peekable();
            while let Some(part) = parts.next() {
                match unended {
                    Unended::Start if parts.peek().is_none() => {
                        self.masks.declare_start(part.valid())
                    }
                    _ => self.masks.declare(part.valid()),
                }
            }
        }
    }
}

/// What is declared of an `::add-mask::` value that runs to the end of what is held.
#[derive(Clone, Copy)]
enum Unended {
    /// Nothing yet: it will be whole in a later part.
    Wait,
    /// The value: its line ends there.
    Whole,
    /// Its start, masked with the rest of its line wherever it is found: its line went
    /// on past what could be held.
    Start,
}

/// How many bytes of an over-long line's end are kept back at a cut, for the next.
pub const CUT_CONTEXT: usize = 64 * 1024;

/// The most of one line held back in search of a safe cut: past it, the rest of the
/// line is masked.
pub const MAX_HELD: usize = 4 * MAX_LINE;

// What the redactor may not see under way at the end of a text is in the context kept.
const _: () = assert!(super::redact::OPEN_UNSEEN < CUT_CONTEXT && CUT_CONTEXT < MAX_LINE);

/// `text` with each run of masks that meet (`******`) written as one.
fn masks_as_one(text: &[u8]) -> Cow<'_, [u8]> {
    let twice = [MASK.as_bytes(), MASK.as_bytes()].concat();
    if memchr::memmem::find(text, &twice).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = memchr::memmem::find(rest, MASK.as_bytes()) {
        out.extend_from_slice(&rest[..at + MASK.len()]);
        rest = &rest[at + MASK.len()..];
        while rest.starts_with(MASK.as_bytes()) {
            rest = &rest[MASK.len()..];
        }
    }
    out.extend_from_slice(rest);
    Cow::Owned(out)
}

/// `at`, moved back to the start of the character it is inside.
fn char_start(bytes: &[u8], mut at: usize) -> usize {
    for _ in 0..3 {
        if at == 0 || at >= bytes.len() || bytes[at] & 0xC0 != 0x80 {
            break;
        }
        at -= 1;
    }
    at
}

impl<W: Write> Write for RedactingWriter<W> {
    /// Takes all of `buf`: its whole lines are written, redacted; the rest waits for its
    /// line's end. A line past [`MAX_LINE`] is cut: before [`CUT_CONTEXT`] bytes of its
    /// end and before anything masked that may still be under way there, at a place
    /// where its two parts redact to what it does whole. Where no such place is, more
    /// of it is waited for, up to [`MAX_HELD`] bytes, past which the rest of the line
    /// reads `***`: what cannot be cut safely is masked, never written in two halves
    /// that each look harmless.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = buf.len();
        let mut buf = buf;
        if self.masking_line {
            // The rest of a line no cut could be made in: not written, looked through.
            let end = memchr::memchr(b'\n', buf);
            self.masked
                .extend_from_slice(&buf[..end.unwrap_or(buf.len())]);
            if end.is_some() || self.masked.len() >= MAX_HELD {
                self.look_through_masked(end.is_some());
            }
            match end {
                None => return Ok(written),
                Some(end) => {
                    self.masking_line = false;
                    buf = &buf[end..];
                }
            }
        }
        // `pending` never holds a line's end: only what came now is searched for one.
        match memchr::memrchr(b'\n', buf) {
            // Most reads: their whole lines go out at once, the rest waits.
            Some(last) if self.pending.is_empty() => {
                self.emit(&buf[..=last])?;
                self.pending.extend_from_slice(&buf[last + 1..]);
                self.next_cut = 0;
            }
            Some(last) => {
                self.pending.extend_from_slice(&buf[..=last]);
                let block = std::mem::take(&mut self.pending);
                self.emit(&block)?;
                self.pending = block;
                self.pending.clear();
                self.pending.extend_from_slice(&buf[last + 1..]);
                self.next_cut = 0;
            }
            None => self.pending.extend_from_slice(buf),
        }
        if self.pending.len() > MAX_LINE && self.pending.len() >= self.next_cut {
            self.cut_long_line()?;
        }
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(masks: &Masks, writes: &[&[u8]]) -> Vec<u8> {
        let mut w = RedactingWriter::new(Vec::new(), masks.clone());
        for bytes in writes {
            w.write_all(bytes).unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn a_secret_split_across_writes_is_caught() {
        let masks = Masks::new(Redactor::from_vars([("NPM_TOKEN", "s3cr3t-npm-value")]));
        assert_eq!(
            through(&masks, &[b"npm=s3cr3t-", b"npm-value ok\nnext ", b"line"]),
            b"npm=*** ok\nnext line"
        );
    }

    #[test]
    fn add_mask_masks_from_then_on_in_every_writer_of_the_run() {
        let masks = Masks::default();
        // (Lines of the block the declaration came in are masked too.)
        assert_eq!(
            through(&masks, &[b"::add-mask::x9y8z7\n", b"after x9y8z7\n"]),
            b"::add-mask::***\nafter ***\n"
        );
        // Another check of the same run.
        assert_eq!(through(&masks, &[b"later x9y8z7\n"]), b"later ***\n");
    }

    /// A declared value holding a byte that is not UTF-8 is masked on both sides of
    /// it, in a block and in an over-long line.
    #[test]
    fn a_declared_value_across_bytes_that_are_not_utf8_is_masked_in_its_parts() {
        let masks = Masks::default();
        assert_eq!(
            through(
                &masks,
                &[
                    b"::add-mask::abcdef\xffsecret-tail\n",
                    b"later secret-tail\n"
                ]
            ),
            b"::add-mask::***\xff***\nlater ***\n"
        );
        let masks = Masks::default();
        let mut long = b"::add-mask::abcdef\xffsecret-tail\r".to_vec();
        long.resize(3 * MAX_LINE, b'x');
        long.extend_from_slice(b"\nlater abcdef and secret-tail\n");
        let out = in_reads(&masks, &long, 64 * 1024, MAX_HELD);
        assert!(
            out.ends_with(b"\nlater *** and ***\n"),
            "{:?}",
            &out[out.len() - 40..]
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_are_kept_and_the_rest_is_redacted() {
        let masks = Masks::new(Redactor::from_vars([("API_TOKEN", "abcdef123")]));
        assert_eq!(
            through(&masks, &[b"\xff\xfe abcdef123 \x80\n"]),
            b"\xff\xfe *** \x80\n"
        );
    }

    #[test]
    fn a_private_key_is_masked_through_to_its_end_across_writes() {
        // (OpenPGP's armour names its lines `PRIVATE KEY BLOCK`.)
        for kind in ["RSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK"] {
            let masks = Masks::default();
            let out = through(
                &masks,
                &[
                    format!("key:\n-----BEGIN {kind}-----\nMIIEpAIBAAKCAQEA\n").as_bytes(),
                    b"line two of the key\n",
                    format!("-----END {kind}-----\nafter\n").as_bytes(),
                ],
            );
            let text = String::from_utf8(out).unwrap();
            assert!(
                !text.contains("MIIE") && !text.contains("line two"),
                "{text}"
            );
            assert!(
                text.starts_with("key:\n") && text.ends_with("after\n"),
                "{text}"
            );
        }
    }

    /// `text` through a writer in reads of `read` bytes; what the writer held back
    /// never passed `bound` plus a read.
    fn in_reads(masks: &Masks, text: &[u8], read: usize, bound: usize) -> Vec<u8> {
        let mut w = RedactingWriter::new(Vec::new(), masks.clone());
        for piece in text.chunks(read) {
            w.write_all(piece).unwrap();
            assert!(w.pending.len() <= bound + read, "{}", w.pending.len());
        }
        w.finish().unwrap()
    }

    /// The reads the tests below are cut in: a pipe's page, its default size, the
    /// tool's own read, and one past a line's limit (not a power of two).
    const READS: [usize; 4] = [4096, 64 * 1024, 256 * 1024, MAX_LINE + 4099];

    /// Where the first cut of an over-long line may fall, and either side of it.
    fn near_cuts(read: usize) -> Vec<usize> {
        vec![
            MAX_LINE - CUT_CONTEXT - 7,
            MAX_LINE - CUT_CONTEXT + 3,
            MAX_LINE - 20,
            MAX_LINE + 1,
            MAX_LINE + read - 10,
            2 * MAX_LINE - CUT_CONTEXT - 2,
        ]
    }

    fn longest_run(text: &[u8], of: impl Fn(u8) -> bool) -> usize {
        text.split(|&b| !of(b)).map(<[u8]>::len).max().unwrap_or(0)
    }

    #[test]
    fn a_private_key_across_the_cut_of_an_over_long_line_is_masked() {
        let masks = Masks::default();
        for read in READS {
            for lead in near_cuts(read) {
                let mut text = vec![b'z'; lead];
                text.extend_from_slice(b"-----BEGIN RSA PRIVATE KEY-----");
                text.extend(std::iter::repeat_n(b'A', 2 * MAX_LINE));
                text.extend_from_slice(b"\n-----END RSA PRIVATE KEY-----\nafter\n");
                let out = in_reads(&masks, &text, read, MAX_HELD);
                assert!(!out.contains(&b'A'), "read {read}, lead {lead}");
                assert!(out.ends_with(b"***\nafter\n"), "read {read}, lead {lead}");
                assert_eq!(longest_run(&out, |b| b == b'z'), lead, "{read} {lead}");
            }
        }
    }

    /// Whatever is masked, put across where an over-long line is cut, is masked as it is
    /// in the whole line, in every size of read: values short and longer than the
    /// context kept, tokens whose shape goes on without end (past the context too),
    /// shapes with long runs of spaces inside, a credential in an address, a value
    /// declared on the line itself.
    #[test]
    fn what_straddles_the_cut_of_an_over_long_line_is_masked_as_in_the_whole_line() {
        let long_value: String = (0..100_000)
            .map(|i| char::from(b'a' + (i % 23) as u8))
            .collect();
        let masks = Masks::new(Redactor::from_vars([
            ("NPM_TOKEN", "s3cr3t-npm-value"),
            ("LONG_SECRET", long_value.as_str()),
        ]));
        let alnum = |n: usize| -> String { (0..n).map(|i| char::from(b"Ab3xQ9"[i % 6])).collect() };
        let spaces = " ".repeat(100_000);
        let items = [
            "s3cr3t-npm-value".to_owned(),
            long_value.clone(),
            format!("ghp_{}", alnum(36)),
            format!("npm_{}", alnum(150_000)),
            format!("eyJ{}.eyJ{}.{}", alnum(90_000), alnum(12), alnum(20)),
            format!("aws_secret_access_key{spaces}= {}", alnum(40)),
            format!("Authorization:{spaces}Bearer {}", alnum(30)),
            "https://user:pa55word@example.com/x".to_owned(),
            "::add-mask::d3clared-value\r and d3clared-value again".to_owned(),
        ];
        for (n, item) in items.iter().enumerate() {
            for read in [4096, MAX_LINE + 4099] {
                for lead in near_cuts(read).into_iter().step_by(n % 2 + 1) {
                    let mut line = ".".repeat(lead);
                    line.push_str(item);
                    line.push_str(&" tail,".repeat(40_000));
                    line.push('\n');
                    let whole = Masks::new(masks.snapshot()).redact(&line).into_owned();
                    let masks = Masks::new(masks.snapshot());
                    let out = in_reads(&masks, line.as_bytes(), read, MAX_HELD);
                    assert!(
                        out == whole.as_bytes(),
                        "item {n}, read {read}, lead {lead}: {} bytes, {} whole",
                        out.len(),
                        whole.len()
                    );
                    assert!(
                        whole.len() + 90_000 < line.len() || n != 1,
                        "item {n} masked"
                    );
                }
            }
        }
    }

    #[test]
    fn an_over_long_line_with_no_safe_cut_is_masked_to_its_end() {
        let masks = Masks::default();
        for read in READS {
            // A token's shape that goes on past all that is held.
            let mut text = b"before ".to_vec();
            text.extend_from_slice(b"npm_");
            text.extend((0..MAX_HELD + MAX_LINE).map(|i| b"Ab3"[i % 3]));
            text.extend_from_slice(b"\nafter npm_\n");
            let out = in_reads(&masks, &text, read, MAX_HELD);
            assert_eq!(out, b"before ***\nafter npm_\n", "read {read}");
        }
    }

    /// The part of a line masked to its end is not written, but it is read: a value it
    /// declares is masked from then on, and a private key it begins is masked on the
    /// lines after it. (Dropped unread, both reached the log.)
    #[test]
    fn what_a_masked_line_declares_or_begins_is_masked_after_it() {
        for read in READS {
            let masks = Masks::default();
            let mut w = RedactingWriter::new(Vec::new(), masks.clone());
            let mut first = b"npm_".to_vec();
            first.extend(std::iter::repeat_n(b'A', MAX_HELD + MAX_LINE));
            first.extend_from_slice(
                b" ::add-mask::hunter2-DECLARED\r -----BEGIN RSA PRIVATE KEY-----\n",
            );
            for piece in first.chunks(read) {
                w.write_all(piece).unwrap();
            }
            w.write_all(b"MIIEpAIBAAKCAQEAqXk\nsecond+line/of/the/key\n")
                .unwrap();
            w.write_all(b"-----END RSA PRIVATE KEY-----\nlater: hunter2-DECLARED\n")
                .unwrap();
            let out = String::from_utf8(w.finish().unwrap()).unwrap();
            // (The masked line's end is the key's first line's: `***` twice.)
            assert_eq!(out, "******\n***\n***\nlater: ***\n", "read {read}");
        }
    }

    /// A declared value longer than all that is held is known by its start, and masked
    /// with the rest of its line wherever it is printed: none of it is written.
    #[test]
    fn a_declared_value_longer_than_what_is_held_is_masked_whole_later() {
        let mut next = 0x9E37_79B9_7F4A_7C15u64;
        let value: Vec<u8> = (0..MAX_HELD + MAX_LINE)
            .map(|_| {
                next ^= next << 13;
                next ^= next >> 7;
                next ^= next << 17;
                b"abcdefghijklmnopqrstuvwxyz0123456789"[(next % 36) as usize]
            })
            .collect();
        for (first, second) in [(4096, 256 * 1024), (64 * 1024, 64 * 1024)] {
            let masks = Masks::default();
            let mut w = RedactingWriter::new(Vec::new(), masks.clone());
            let line = [b"::add-mask::".as_slice(), &value, b"\n"].concat();
            for piece in line.chunks(first) {
                w.write_all(piece).unwrap();
            }
            let line = [b"print: ".as_slice(), &value, b" and after\n"].concat();
            for piece in line.chunks(second) {
                w.write_all(piece).unwrap();
            }
            let out = w.finish().unwrap();
            assert!(out.len() < 100, "{first} {second}: {} bytes", out.len());
            assert!(!out.windows(8).any(|w| value.starts_with(w)), "{out:?}");
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_inside_a_private_key_are_masked_with_it() {
        let masks = Masks::default();
        let mut text = b"-----BEGIN RSA PRIVATE KEY-----\nMIIE".to_vec();
        text.extend(0x80..=0xbf_u8);
        text.extend_from_slice(b"\n-----END RSA PRIVATE KEY-----\nafter \xff\n");
        for read in [7, 40, text.len()] {
            let out = in_reads(&masks, &text, read, MAX_LINE);
            assert!(!out.iter().any(|b| (0x80..=0xbf).contains(b)), "{out:?}");
            assert!(out.ends_with(b"after \xff\n"), "{out:?}");
        }
    }

    #[test]
    fn over_long_lines_with_nothing_to_mask_pass_byte_for_byte_in_bounded_memory() {
        let masks = Masks::new(Redactor::from_vars([("API_TOKEN", "abcdef123")]));
        let zeros = vec![0u8; 5 * MAX_LINE + 17];
        let text: Vec<u8> = (0..5 * MAX_LINE + 17)
            .map(|i| {
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/é".as_bytes()
                    [i % 66]
            })
            .collect();
        for read in READS {
            for text in [&zeros, &text] {
                assert!(
                    in_reads(&masks, text, read, MAX_LINE) == *text,
                    "read {read}"
                );
            }
        }
    }

    #[test]
    fn memory_stays_bounded_by_a_line() {
        let masks = Masks::default();
        let mut w = RedactingWriter::new(io::sink(), masks);
        let chunk = vec![b'a'; 64 * 1024];
        for _ in 0..64 {
            w.write_all(&chunk).unwrap();
            assert!(w.pending.len() <= MAX_LINE + chunk.len());
        }
    }

    #[test]
    fn every_way_of_cutting_the_output_gives_the_same_log() {
        let text: &[u8] =
            b"a ghp_abcdefghijklmnopqrstuvwxyz0123 b\nno line end yet, s3cr3t-npm-value \
            then\n\n\xff tail s3cr3t-npm-value";
        let masks = Masks::new(Redactor::from_vars([("NPM_TOKEN", "s3cr3t-npm-value")]));
        let whole = through(&masks, &[text]);
        assert!(!whole.windows(8).any(|w| w == b"s3cr3t-n"), "{whole:?}");
        assert!(!whole.windows(4).any(|w| w == b"abcd"), "{whole:?}");
        for first in 0..text.len() {
            for second in first..text.len() {
                let cut = [&text[..first], &text[first..second], &text[second..]];
                assert_eq!(through(&masks, &cut), whole, "cut at {first} and {second}");
            }
        }
    }
}

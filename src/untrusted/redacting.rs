//! The writer between a check and its log: everything the check prints passes through
//! it before it reaches the disk, so no secret is ever written.
//!
//! Streaming, in bounded memory: text is redacted a block of whole lines at a time (a
//! secret split across two reads is still whole by then), and the end of a line is
//! waited for up to [`MAX_LINE`] bytes. Everything that is not a secret is written byte
//! for byte (bytes that are not UTF-8 included); a secret reads `***`.
//!
//! - `::add-mask::VALUE` printed by a check masks VALUE from then on, in every check of
//!   the run ([`Masks`] is shared by the run), as GitHub does in its console;
//! - a private key block is masked through to its end, however many blocks it spans.

use std::io::{self, Write};
use std::sync::{Arc, LazyLock, RwLock};

use regex::Regex;

use super::redact::{MASK, Redactor};

/// The longest line waited for: a longer one is redacted as it is.
pub const MAX_LINE: usize = 1024 * 1024;

/// `::add-mask::VALUE` at the start of a line's text (after any prefix a tool adds).
static ADD_MASK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"::add-mask::([^\r\n]*)").expect("valid regex"));

static KEY_BEGIN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----").expect("valid regex"));

static KEY_END: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"-----END [A-Z0-9 ]*PRIVATE KEY-----").expect("valid regex"));

/// The secrets of a run: its redactor, to which each check's `::add-mask::` lines add.
#[derive(Debug, Clone, Default)]
pub struct Masks(Arc<RwLock<Redactor>>);

impl Masks {
    pub fn new(redactor: Redactor) -> Masks {
        Masks(Arc::new(RwLock::new(redactor)))
    }

    /// `text` redacted with what is known now (borrowed when nothing was masked).
    pub fn redact<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        match self.0.read() {
            Ok(r) => r.redact(text),
            Err(poisoned) => poisoned.into_inner().redact(text),
        }
    }

    /// Whether `text` is certain to be left as it is (see [`Redactor::leaves`]).
    pub fn leaves(&self, text: &str) -> bool {
        match self.0.read() {
            Ok(r) => r.leaves(text),
            Err(poisoned) => poisoned.into_inner().leaves(text),
        }
    }

    /// The redactor as it is now (for the results written after a check).
    pub fn snapshot(&self) -> Redactor {
        match self.0.read() {
            Ok(r) => r.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn declare(&self, value: &str) {
        let mut r = match self.0.write() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        r.add_declared(value);
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
}

impl<W: Write> RedactingWriter<W> {
    pub fn new(inner: W, masks: Masks) -> RedactingWriter<W> {
        RedactingWriter {
            inner,
            masks,
            pending: Vec::with_capacity(64 * 1024),
            in_key: false,
        }
    }

    /// Writes what is left (a last line without its end) and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        let rest = std::mem::take(&mut self.pending);
        self.emit(&rest)?;
        self.inner.flush()?;
        Ok(self.inner)
    }

    /// Redacts `block` (whole lines, or a line past [`MAX_LINE`]) and writes it: as it
    /// is when nothing in it is a secret (most output), without a copy.
    fn emit(&mut self, block: &[u8]) -> io::Result<()> {
        if block.is_empty() {
            return Ok(());
        }
        if let Ok(text) = std::str::from_utf8(block) {
            let mut out = Vec::new();
            return match self.text(text, &mut out) {
                None => self.inner.write_all(block),
                Some(()) => self.inner.write_all(&out),
            };
        }
        let mut out = Vec::with_capacity(block.len());
        for chunk in block.utf8_chunks() {
            let text = chunk.valid();
            if !text.is_empty() && self.text(text, &mut out).is_none() {
                out.extend_from_slice(text.as_bytes());
            }
            // Bytes that are not UTF-8 hold no secret a redactor knows: kept as they are.
            out.extend_from_slice(chunk.invalid());
        }
        self.inner.write_all(&out)
    }

    /// Redacts `text` into `out`; `None` (and nothing in `out`) when it is to be
    /// written as it is.
    fn text(&mut self, mut text: &str, out: &mut Vec<u8>) -> Option<()> {
        let mut changed = false;
        if self.in_key {
            // The rest of a private key an earlier block began: masked to its end.
            changed = true;
            match KEY_END.find(text) {
                Some(end) => {
                    self.in_key = false;
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
        if !changed && self.masks.leaves(text) {
            // No value, declaration, key or token shape: most output, told in one pass.
            return None;
        }
        let bytes = text.as_bytes();
        if memchr::memmem::find(bytes, b"::add-mask::").is_some() {
            for caps in ADD_MASK.captures_iter(text) {
                if let Some(value) = caps.get(1) {
                    self.masks.declare(value.as_str());
                }
            }
        }
        // A key that begins here and does not end here goes on in the next block.
        if memchr::memmem::find(bytes, b"PRIVATE KEY-----").is_some()
            && let Some(begin) = KEY_BEGIN.find_iter(text).last()
            && !KEY_END.is_match(&text[begin.end()..])
        {
            self.in_key = true;
        }
        match self.masks.redact(text) {
            std::borrow::Cow::Borrowed(_) if !changed => None,
            redacted => {
                out.extend_from_slice(redacted.as_bytes());
                Some(())
            }
        }
    }
}

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // `pending` never holds a line's end: only what came now is searched for one.
        match memchr::memrchr(b'\n', buf) {
            // Most reads: their whole lines go out at once, the rest waits.
            Some(last) if self.pending.is_empty() => {
                self.emit(&buf[..=last])?;
                self.pending.extend_from_slice(&buf[last + 1..]);
            }
            Some(last) => {
                self.pending.extend_from_slice(&buf[..=last]);
                let block = std::mem::take(&mut self.pending);
                self.emit(&block)?;
                self.pending = block;
                self.pending.clear();
                self.pending.extend_from_slice(&buf[last + 1..]);
            }
            None => self.pending.extend_from_slice(buf),
        }
        if self.pending.len() > MAX_LINE {
            let pending = std::mem::take(&mut self.pending);
            self.emit(&pending)?;
            self.pending = pending;
            self.pending.clear();
        }
        Ok(buf.len())
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
        let masks = Masks::default();
        let out = through(
            &masks,
            &[
                b"key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n",
                b"line two of the key\n",
                b"-----END RSA PRIVATE KEY-----\nafter\n",
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

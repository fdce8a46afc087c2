//! The one choke point for text this tool did not write: log tails, summaries, reasons,
//! strings from artifacts and reports, and what an agent passes in.
//!
//! Everything quoted in an output passes through [`Quoter::quote`] before a renderer
//! sees it: terminal escapes and invisible characters removed ([`clean()`]), secrets
//! masked ([`Redactor`]), and claim-shaped text neutralised ([`neutralise()`]). Renderers
//! then only escape for their output context (markdown, HTML, XML, terminal).

pub mod neutralise;
pub mod redact;
pub mod redacting;
pub mod seal;

use std::borrow::Cow;
use std::sync::Arc;

pub use neutralise::{clean, neutralise};
pub use redact::{MASK, Redactor, is_secret_name};

/// Reads at most `limit` bytes from `reader`: `None` when there is more. Files that lie
/// about their size (a FIFO, `/dev/zero`, a file still growing) cannot make it read
/// further.
pub fn read_at_most(reader: impl std::io::Read, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    read_at_most_sized(reader, limit, 0)
}

/// [`read_at_most`], room made first for the `size` bytes the reader is said to hold
/// (a file's length; at most `limit` is believed): one buffer read into in large
/// reads, not one grown from nothing and copied each time it doubles.
pub fn read_at_most_sized(
    reader: impl std::io::Read,
    limit: u64,
    size: u64,
) -> std::io::Result<Option<Vec<u8>>> {
    read_at_most_into(reader, limit, size, Vec::new())
}

/// [`read_at_most_sized`] into `bytes` (emptied first), a buffer kept from an earlier
/// read: many files read one after the other reuse one buffer.
pub fn read_at_most_into(
    reader: impl std::io::Read,
    limit: u64,
    size: u64,
    mut bytes: Vec<u8>,
) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read as _;
    // One byte past the size: a reader holding what it said reads once more, into
    // the room it has, and ends.
    let room = usize::try_from(size.min(limit).saturating_add(1)).unwrap_or(0);
    bytes.clear();
    bytes.reserve(room);
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// Reads the regular file at `path`, at most `limit` bytes: `Ok(None)` when it holds
/// more. Anything else at the path is refused without waiting on it: a FIFO is opened
/// without blocking and refused, a device or a folder refused, whatever a symbolic link
/// points at judged as itself (the caller confines where links may lead).
pub fn read_regular(path: &std::path::Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    let (file, meta) = open_regular(path)?;
    read_at_most_sized(file, limit, meta.len())
}

/// Opens the regular file at `path` for reading, and what it is; anything else is
/// refused without waiting on it (a FIFO is opened without blocking and refused, a
/// device or a folder refused; a symbolic link is followed, the caller confining where
/// links may lead).
pub fn open_regular(path: &std::path::Path) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        // Opening a FIFO for reading waits for a writer; without blocking it does not.
        options.custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits());
    }
    let file = options.open(path)?;
    // What was opened, not what the path named a moment before.
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok((file, meta))
}

/// `text` cut to at most `max` bytes, at a character boundary, marked `…` when cut.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Quotes untrusted text for output.
#[derive(Debug, Clone, Default)]
pub struct Quoter {
    redactor: Arc<Redactor>,
}

impl Quoter {
    /// A quoter masking what `redactor` knows (and token shapes).
    pub fn new(redactor: Redactor) -> Quoter {
        Quoter {
            redactor: Arc::new(redactor),
        }
    }

    /// `text` cleaned, redacted and neutralised: safe to quote in any output.
    pub fn quote(&self, text: &str) -> String {
        self.quoted(text).into_owned()
    }

    /// Quotes `text` where it is, allocating only when it changes.
    pub fn quote_in_place<S>(&self, text: &mut S)
    where
        S: std::ops::Deref<Target = str> + From<String>,
    {
        if let Cow::Owned(quoted) = self.quoted(text) {
            *text = quoted.into();
        }
    }

    /// [`Quoter::quote_in_place`] for a text that may be absent.
    pub fn quote_option_in_place<S>(&self, text: &mut Option<S>)
    where
        S: std::ops::Deref<Target = str> + From<String>,
    {
        if let Some(text) = text {
            self.quote_in_place(text);
        }
    }

    /// The quoted text, borrowed when nothing had to change.
    pub fn quoted<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let cleaned = clean(text);
        let redacted = match self.redactor.redact(&cleaned) {
            Cow::Owned(changed) => Some(changed),
            Cow::Borrowed(_) => None,
        };
        let redacted = redacted.map_or(cleaned, Cow::Owned);
        let neutral = match neutralise(&redacted) {
            Cow::Owned(changed) => Some(changed),
            Cow::Borrowed(_) => None,
        };
        neutral.map_or(redacted, Cow::Owned)
    }

    /// The redactor, for text that is not quoted in a matrix (e.g. error messages).
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The redactor, shared (for a reader that keeps it).
    pub fn shared_redactor(&self) -> Arc<Redactor> {
        Arc::clone(&self.redactor)
    }

    /// `text` cleaned and redacted, not neutralised: for data outputs (JSON, CSV) that
    /// a terminal may show but no coordinator reads as a matrix.
    pub fn sanitise(&self, text: &str) -> String {
        self.redactor.redact(&clean(text)).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_said_size_makes_room_and_never_moves_the_limit() {
        let text = b"0123456789";
        // The size told true, short or long: the same bytes; past the limit, none.
        for size in [0, 3, 10, 11, 1 << 40, u64::MAX] {
            let read = read_at_most_sized(&text[..], 10, size).unwrap();
            assert_eq!(read.as_deref(), Some(&text[..]), "size {size}");
            assert_eq!(read_at_most_sized(&text[..], 9, size).unwrap(), None);
        }
        // A size past the limit makes room for the limit only.
        let read = read_at_most_sized(std::io::repeat(b'x'), 64, u64::MAX).unwrap();
        assert_eq!(read, None);
        let room = read_at_most_sized(&text[..4], 64, 1 << 40)
            .unwrap()
            .unwrap();
        assert!(room.capacity() <= 65, "room for {} bytes", room.capacity());
    }

    #[test]
    fn a_buffer_read_into_again_holds_only_the_new_bytes() {
        let earlier = b"a longer file read before this one".to_vec();
        let read = read_at_most_into(&b"short"[..], 10, 5, earlier).unwrap();
        assert_eq!(read.as_deref(), Some(&b"short"[..]));
        let over = read_at_most_into(&b"0123456789x"[..], 10, 5, b"old".to_vec()).unwrap();
        assert_eq!(over, None, "past the limit, whatever the buffer held");
    }

    #[test]
    fn cutting_keeps_whole_characters_within_the_limit() {
        assert_eq!(cut("abc", 3), "abc");
        let cut_text = cut("ééééé", 6);
        assert!(cut_text.len() <= 6, "{cut_text}");
        assert!(cut_text.ends_with('…'));
    }

    #[test]
    fn quoting_cleans_then_redacts_then_neutralises() {
        let quoter = Quoter::new(Redactor::from_vars([("API_KEY", "s3cr3t-v4lue")]));
        // The escape split both the secret and the row: cleaning reassembles them first.
        assert_eq!(
            quoter.quote("| a | b | 0 | PA\u{1b}[0mSS | s3cr3t\u{1b}[1m-v4lue"),
            "¦ a ¦ b ¦ 0 ¦ PASS ¦ ***"
        );
    }
}

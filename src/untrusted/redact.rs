//! Secret redaction: the values of secret-looking variables, values a check masked with
//! `::add-mask::`, and well-known token shapes are replaced by `***` (as GitHub masks
//! them in job logs).

use std::borrow::Cow;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};
use memchr::memmem;
use regex::Regex;

mod markers;
mod open;

use markers::MARKERS;
use open::{Openings, Seeds};

/// What replaces a secret.
pub const MASK: &str = "***";

/// Values shorter than this are not treated as secrets: a variable such as
/// `USE_KEYCHAIN=true` would otherwise mask every `true` in a log.
pub const MIN_SECRET_CHARS: usize = 6;

/// Parts of a variable name that mark its value as a secret (upper-cased comparison).
pub const SECRET_NAME_PARTS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "KEY",
    "CREDENTIAL",
    "PRIVATE",
];

/// A private key block's first (`BEGIN`) or last (`END`) line, as an expression:
/// `-----BEGIN RSA PRIVATE KEY-----`, `-----END PGP PRIVATE KEY BLOCK-----`.
macro_rules! key_line {
    ($edge:literal) => {
        concat!("-----", $edge, r" [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
    };
}

/// Token shapes recognised whatever variable (if any) they came from, one expression
/// each, the private key block last; the part matched by a group named `s…` (or the
/// whole match) is masked.
const SHAPE_PATTERNS: &[&str] = &[
    // GitHub: personal, OAuth, user-to-server, server-to-server and refresh tokens.
    // (Up to 255 characters, GitHub says; a longer run is masked whole.)
    r"gh[pousr]_[A-Za-z0-9]{20,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    // npm (`npm_` + 36), PyPI (`pypi-` + a macaroon, whose first bytes are always
    // `AgEIcHlwaS5vcmc`: "pypi.org"), GitLab, Slack, Google API keys, Stripe secret
    // and restricted keys (live and test).
    r"npm_[A-Za-z0-9]{30,}",
    r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{40,}",
    // GitLab's tokens: personal, project and group access (`glpat-`), CI/CD job
    // (`glcbt-`), pipeline trigger, deploy, runner, feed, incoming mail, OAuth
    // application secrets and access, agent, feature flag client, SCIM.
    r"gl(?:pat|cbt|ptt|dt|rt|ft|imt|oas|oat|agent|ffct|soat)-[A-Za-z0-9_.-]{20,}",
    r"xox[abposr]-[A-Za-z0-9-]{10,}",
    r"AIza[0-9A-Za-z_-]{35}",
    r"[sr]k_(?:live|test)_[0-9A-Za-z]{16,}",
    // JSON Web Tokens: a base64url header and payload (both JSON objects, `eyJ`), and
    // a signature.
    // (Word boundaries are ASCII ones: a letter of another script beside a token
    // does not make it part of a word.)
    r"(?-u:\b)eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
    // AWS access key ids, and secret keys where they are named.
    r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)",
    r#"(?i:aws_?secret_?access_?key)["']?\s*[:=]\s*["']?(?P<s1>[A-Za-z0-9/+=]{40})"#,
    // Credentials in URLs (the user name may be empty, the password may hold `@`: the
    // last `@` before the host ends it), and authorization headers (in JSON too).
    r"://[^/\s:@]{0,256}:(?P<s2>[^/\s]{1,256})@",
    // (`:` or `=`, `=>` of a Ruby hash, `,` of a call; quoted, escaped quotes too.)
    r#"(?i:authorization)\\?["']?\s*(?:=>|[:=,])\s*\\?["']?(?i:bearer|token|basic)\s+(?P<s3>[A-Za-z0-9._~+/=-]{8,})"#,
    // Private key blocks (OpenPGP's too), also when the tail cut one end off.
    concat!(
        key_line!("BEGIN"),
        r"(?s:.*?)(?:",
        key_line!("END"),
        r"|\z)"
    ),
];

/// What may be under way at the end of a text that goes on: each token shape (without
/// its word boundaries, and its long runs without their upper bound, which only narrow
/// it: the DFA is a twentieth of the size, built in a twentieth of the time), a private
/// key's first and last lines (its body is followed by the redacting writer itself).
/// (`::add-mask::` lines are told apart without it: see [`Redactor::survey`].)
static OPENINGS: LazyLock<Openings> = LazyLock::new(|| {
    let (block, shapes) = SHAPE_PATTERNS.split_last().expect("shapes");
    debug_assert!(block.starts_with("-----BEGIN "));
    let bounded = Regex::new(r"\{(\d+),\d{3}\}").expect("valid regex");
    let mut patterns: Vec<String> = shapes
        .iter()
        .map(|p| {
            bounded
                .replace_all(&p.replace(r"\b", ""), "{$1,}")
                .into_owned()
        })
        .collect();
    patterns.extend([key_line!("BEGIN"), key_line!("END")].map(String::from));
    let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
    Openings::new(&patterns).expect("the token shapes make a DFA")
});

/// The literals a thread of [`OPENINGS`] is started near, besides the markers: every
/// shape has one of them within [`REACH`] bytes of its start (`cret` of `aws_secret`,
/// `riza` of `authorization`, `k_live_` of `sk_live_`; the others at it).
static OPENING_WORDS: LazyLock<[memmem::Finder<'static>; 2]> = LazyLock::new(|| {
    [
        memmem::Finder::new("eyJ"),
        memmem::Finder::new("-----BEGIN "),
    ]
});

/// How far before one of its literals a token shape may begin (`aws_secret`'s `cret`,
/// with `s` written `ſ`, is eight bytes in).
const REACH: usize = 16;

/// The end of a private key block whose start a tail cut off.
pub(super) static KEY_END: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(key_line!("END")).expect("valid regex"));

/// The first line of a private key block.
pub(super) static KEY_BEGIN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(key_line!("BEGIN")).expect("valid regex"));

/// Whether `text` may hold a private key's first or last line: it holds the end of
/// one (`PRIVATE KEY-----`, or OpenPGP's `PRIVATE KEY BLOCK-----`).
pub(super) fn may_hold_key_line(text: &[u8]) -> bool {
    memmem::find_iter(text, b"PRIVATE KEY")
        .any(|at| ends_key_line(&text[at + "PRIVATE KEY".len()..]))
}

/// Whether `rest`, which follows `PRIVATE KEY`, ends a key's line there.
fn ends_key_line(rest: &[u8]) -> bool {
    rest.starts_with(b"-----") || rest.starts_with(b" BLOCK-----")
}

/// Where the values that `::add-mask::VALUE` commands of `text` declare are (GitHub's
/// way for a step to mark a value as a secret): each the rest of its line after the
/// command, to `\r` or `\n`, and whether its line ends in `text`. A command inside
/// another's value declares too (more is masked, never less).
pub(super) fn declarations(
    text: &[u8],
) -> impl Iterator<Item = (std::ops::Range<usize>, bool)> + '_ {
    ADD_MASK_MARK.find_iter(text).map(|at| {
        let start = at + "::add-mask::".len();
        match memchr::memchr2(b'\r', b'\n', &text[start..]) {
            Some(len) => (start..start + len, true),
            None => (start..text.len(), false),
        }
    })
}

/// The literals the checks above begin with, searched for before any regular expression
/// (text is mostly free of them; `str::contains` is several times slower).
static ADD_MASK_MARK: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new("::add-mask::"));
static KEY_END_MARK: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new("-----END "));

/// How many bytes at the end of a text [`Redactor::open_from`] may not see as the
/// start of something under way: a value's key, or a shape's literal and what comes
/// before it.
pub const OPEN_UNSEEN: usize = KEY_BYTES;

// A shape's literal (at most 12 bytes) within its reach of the start, in that tail.
const _: () = assert!(REACH + 12 <= OPEN_UNSEEN);

/// How much of each secret the search looks for: a secret longer than this is found by
/// its first bytes and then compared whole, so the search's size (and its building)
/// grows with the number of secrets, not their length.
const KEY_BYTES: usize = 64;

/// The secrets' search: each secret's first [`KEY_BYTES`] (its key), one search over the
/// distinct keys, and for each key the secrets it begins, longest first.
#[derive(Debug, Clone)]
struct Search {
    finder: Finder,
    by_key: Vec<Vec<usize>>,
}

/// How the keys are found: one of three ways, never none.
#[derive(Debug, Clone)]
enum Finder {
    /// One automaton over the keys (few of them, or one shorter than a print), with the
    /// keys as one vectorised search before it where there are few enough of them (and
    /// the processor has one): text holding none of them is told at memory speed.
    Automaton {
        keys: AhoCorasick,
        few: Option<aho_corasick::packed::Searcher>,
    },
    /// Many keys, each found by the print of its first bytes.
    Prints(Prints),
    /// Each key searched for on its own: slow with many keys, but it cannot fail to be
    /// built, so a set of keys no automaton can hold is still masked, never passed.
    OneByOne(Vec<memmem::Finder<'static>>),
}

impl Finder {
    /// The keys' automaton, with their vectorised search where there are few; `None`
    /// past the limits of its building.
    fn automaton(keys: &[&str]) -> Option<Finder> {
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .prefilter(false)
            .build(keys)
            .ok()?;
        let few = (keys.len() <= FEW_KEYS)
            .then(|| {
                aho_corasick::packed::Config::new()
                    .match_kind(aho_corasick::packed::MatchKind::LeftmostLongest)
                    .builder()
                    .extend(keys)
                    .build()
            })
            .flatten();
        Some(Finder::Automaton {
            keys: automaton,
            few,
        })
    }

    /// Each key's own search.
    fn one_by_one(keys: &[&str]) -> Finder {
        Finder::OneByOne(
            keys.iter()
                .map(|key| memmem::Finder::new(key.as_bytes()).into_owned())
                .collect(),
        )
    }
}

/// The most keys searched by the vectorised search: beyond it, its candidates are
/// too many in random text (a secret's first bytes are everywhere).
const FEW_KEYS: usize = 64;

impl Search {
    /// Whether `text` holds a key.
    fn is_match(&self, text: &[u8]) -> bool {
        match &self.finder {
            Finder::Automaton {
                few: Some(few),
                keys: _,
            } => few.find(text).is_some(),
            Finder::Automaton { keys, few: None } => keys.is_match(text),
            Finder::Prints(prints) => prints.find(text, 0).is_some(),
            Finder::OneByOne(keys) => keys.iter().any(|key| key.find(text).is_some()),
        }
    }

    /// The leftmost key in `text` from `from` (the longest of those that begin there):
    /// where it begins and ends, and which key it is.
    fn find(&self, text: &str, from: usize) -> Option<(usize, usize, usize)> {
        match &self.finder {
            Finder::Prints(prints) => {
                let (at, key) = prints.find(text.as_bytes(), from)?;
                Some((at, at + prints.keys[key].len(), key))
            }
            Finder::Automaton { keys, .. } => {
                let found = keys.find(aho_corasick::Input::new(text).range(from..))?;
                Some((found.start(), found.end(), found.pattern().as_usize()))
            }
            Finder::OneByOne(keys) => {
                let rest = text.as_bytes().get(from..)?;
                // The leftmost start; of the keys there, the longest.
                let (at, len, key) = keys
                    .iter()
                    .enumerate()
                    .filter_map(|(i, key)| Some((key.find(rest)?, key.needle().len(), i)))
                    .min_by_key(|&(at, len, _)| (at, std::cmp::Reverse(len)))?;
                Some((from + at, from + at + len, key))
            }
        }
    }
}

/// How many of a key's first bytes make its print.
const PRINT_BYTES: usize = 6;

/// The most keys one print may have: more, and the automaton searches.
const SHARED_PRINT: usize = 4;

/// Many keys, found without an automaton: at every position of the text, the print of
/// the next [`PRINT_BYTES`] bytes (read as one number) picks a bit of a table, set for
/// the prints of the keys; where it is set, the keys of that print are compared with
/// the text. An automaton over a thousand random keys walks every byte through tables
/// far larger than the processor's caches (measured: 3.3 times the time of the write
/// itself over base64 lines, 256 MiB); the table of bits stays in them, and a position
/// costs a multiplication and one bit. Every key is at least [`PRINT_BYTES`] long (a
/// shorter one goes to the automaton, with all the others).
///
/// Most positions are not looked at (Wu and Manber's skip): the text is read in
/// windows of the shortest key's first bytes (at most [`WINDOW_BYTES`]), and the last
/// [`GRAM_BYTES`] of a window say how far on the next window that could end a key's
/// first bytes ends: nowhere in a key's window, and the window moves on by its length
/// less a gram's. Only a window ending as some key's window does has its start looked
/// at as above. Text that is made of the keys' pieces is looked at everywhere, as
/// before the skip: each position then costs one gram read, multiplied and looked up
/// in the skips' table, more than it did.
#[derive(Debug, Clone)]
struct Prints {
    /// One bit per slot, set where a key's print falls.
    bits: Vec<u64>,
    /// How far a print's product is shifted to give its slot.
    shift: u32,
    /// How many of each key's first bytes a window is: the shortest key's length, at
    /// most [`WINDOW_BYTES`].
    window: usize,
    /// By the slot of a window's last [`GRAM_BYTES`]: how far the window may move on
    /// (0 where a key's window ends so).
    skips: Vec<u8>,
    /// How far a gram's product is shifted to give its slot among `skips`.
    skip_shift: u32,
    /// The keys of each print, longest first.
    by_print: rustc_hash::FxHashMap<u64, Vec<usize>>,
    keys: Vec<Box<str>>,
}

impl Prints {
    /// `None` when a key is shorter than a print, or more than [`SHARED_PRINT`] keys
    /// share one.
    fn new(keys: &[&str]) -> Option<Prints> {
        if keys.iter().any(|k| k.len() < PRINT_BYTES) {
            return None;
        }
        // About a thousand slots a key: one position in a thousand, at most, is compared.
        let log2 = (keys.len().max(1) * 1024)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(12, 23);
        let window = keys
            .iter()
            .map(|k| k.len())
            .min()
            .unwrap_or(PRINT_BYTES)
            .min(WINDOW_BYTES);
        // About eight slots for each gram of the keys' windows, so that most grams of
        // the text not in a window find their slot unset; at most a MiB (past ten
        // thousand keys, the skips shorten, and the search looks at more positions).
        let grams = keys.len().max(1) * (window + 1 - GRAM_BYTES);
        let skip_log2 = (grams * 8)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(12, 20);
        let mut prints = Prints {
            bits: vec![0; (1 << log2) / 64],
            shift: 64 - log2,
            window,
            skips: vec![(window + 1 - GRAM_BYTES) as u8; 1 << skip_log2],
            skip_shift: 64 - skip_log2,
            by_print: rustc_hash::FxHashMap::default(),
            keys: keys.iter().map(|k| Box::from(*k)).collect(),
        };
        for (i, key) in keys.iter().enumerate() {
            let print = print_of(&key.as_bytes()[..PRINT_BYTES]);
            let slot = prints.slot(print);
            prints.bits[slot / 64] |= 1 << (slot % 64);
            prints.by_print.entry(print).or_default().push(i);
            // The gram ending `end` bytes into the key's window lets a window ending
            // there move on only as far as the key's window ends.
            for end in GRAM_BYTES..=window {
                let gram = gram_of(&key.as_bytes()[end - GRAM_BYTES..end]);
                let slot = prints.skip_slot(gram);
                prints.skips[slot] = prints.skips[slot].min((window - end) as u8);
            }
        }
        for same in prints.by_print.values_mut() {
            // Keys that begin alike (a thousand tokens of one header) are compared one
            // after the other wherever their print is: past a few, text made of that
            // print would cost a comparison of each at every position.
            if same.len() > SHARED_PRINT {
                return None;
            }
            same.sort_by_key(|&i| std::cmp::Reverse(keys[i].len()));
        }
        Some(prints)
    }

    #[inline(always)]
    fn slot(&self, print: u64) -> usize {
        slot_of(print, self.shift)
    }

    #[inline(always)]
    fn skip_slot(&self, gram: u32) -> usize {
        slot_of(u64::from(gram), self.skip_shift)
    }

    /// The leftmost position from `from` where a key begins, and the longest key that
    /// begins there.
    ///
    /// A window is never moved past the end of a key's window in the text: where the
    /// last gram lies inside it, that gram's skip is at most the bytes between it and
    /// the key window's end; where it begins before it, the window ends fewer than a
    /// gram's bytes into the key's, and no skip is longer than a window less a gram.
    fn find(&self, text: &[u8], from: usize) -> Option<(usize, usize)> {
        let window = self.window;
        // The end of the window looked at: its start is `end - window`.
        let mut end = from.checked_add(window)?;
        while end <= text.len() {
            let skip = self.skips[self.skip_slot(gram_of(&text[end - GRAM_BYTES..end]))];
            if skip > 0 {
                end += usize::from(skip);
                continue;
            }
            let at = end - window;
            if let Some(key) = self.key_at(text, at, print_of(&text[at..at + PRINT_BYTES])) {
                return Some((at, key));
            }
            end += 1;
        }
        None
    }

    /// The longest key that begins at `at`, whose first bytes' print is `print`: most
    /// prints' bit is not set, told here; the keys are compared out of the loop.
    #[inline(always)]
    fn key_at(&self, text: &[u8], at: usize, print: u64) -> Option<usize> {
        let slot = self.slot(print);
        if self.bits[slot / 64] & (1 << (slot % 64)) == 0 {
            return None;
        }
        self.compare(text, at, print)
    }

    #[inline(never)]
    fn compare(&self, text: &[u8], at: usize, print: u64) -> Option<usize> {
        self.by_print
            .get(&print)?
            .iter()
            .copied()
            .find(|&k| text[at..].starts_with(self.keys[k].as_bytes()))
    }
}

/// The print of [`PRINT_BYTES`] bytes: the number they are, read little-endian.
fn print_of(bytes: &[u8]) -> u64 {
    let mut wide = [0; 8];
    wide[..PRINT_BYTES].copy_from_slice(bytes);
    u64::from_le_bytes(wide)
}

/// The slot of `value` in a table of `2^(64 - shift)` slots: its top bits once it is
/// multiplied by 2^64 over the golden ratio (Fibonacci hashing), so that values alike
/// in their low bytes fall far apart.
#[inline(always)]
fn slot_of(value: u64, shift: u32) -> usize {
    (value.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

/// How many bytes of a window's end say how far it may move on.
const GRAM_BYTES: usize = 4;

/// The most of a key's first bytes a window holds: longer windows move on further,
/// and give each key more grams to set.
const WINDOW_BYTES: usize = 16;

/// The number [`GRAM_BYTES`] bytes are, read little-endian.
fn gram_of(bytes: &[u8]) -> u32 {
    u32::from_le_bytes(bytes.try_into().unwrap_or_default())
}

/// A secret's key: its first [`KEY_BYTES`], cut at a character's end.
fn key_of(value: &str) -> &str {
    if value.len() <= KEY_BYTES {
        return value;
    }
    let mut end = KEY_BYTES;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    &value[..end]
}

/// Replaces secrets in text with [`MASK`].
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Known secret values, each held once (shared with `known`, and with every copy
    /// of the redactor: a run may declare values of megabytes, and each check's
    /// results are redacted with a copy).
    values: Vec<std::sync::Arc<str>>,
    /// The same, to tell a value already known at once (a run may declare thousands).
    known: rustc_hash::FxHashSet<std::sync::Arc<str>>,
    /// The values (by index) known only by their start: each is masked with the rest of
    /// its line.
    open_ended: rustc_hash::FxHashSet<usize>,
    /// All of `values` as one search, the longest match first, so that a secret
    /// containing another is masked whole: built once, when first searched with (not
    /// once per value added, which grows with the square of the secrets).
    search: std::sync::OnceLock<Option<Search>>,
    /// The manifest's own patterns (`redact: { patterns: [...] }`).
    patterns: Vec<Regex>,
    /// The same, as a DFA of their matches' prefixes (see [`Redactor::open_from`]),
    /// built the first time it is needed; `None` when they make none small enough.
    pattern_openings: std::sync::OnceLock<Option<std::sync::Arc<Openings>>>,
}

impl Redactor {
    /// A redactor for the values of the secret-looking variables among `vars` (names
    /// containing one of [`SECRET_NAME_PARTS`]).
    pub fn from_vars<I, K, V>(vars: I) -> Redactor
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut redactor = Redactor::default();
        for (name, value) in vars {
            if is_secret_name(name.as_ref()) {
                redactor.add(value.as_ref());
            }
        }
        redactor
    }

    /// Adds a secret value (ignored when shorter than [`MIN_SECRET_CHARS`] characters).
    /// A value of several lines is masked line by line.
    pub fn add(&mut self, value: &str) {
        for line in value.lines() {
            self.add_value(line, MIN_SECRET_CHARS);
        }
    }

    /// Adds a value a check declared with `::add-mask::` (GitHub masks any; a single
    /// character would mask everything, so at least two).
    pub fn add_declared(&mut self, value: &str) {
        for line in value.lines() {
            self.add_value(line, 2);
        }
    }

    /// Adds a pattern whose every match is masked (validated by the manifest: it never
    /// matches the empty string).
    pub fn add_pattern(&mut self, pattern: Regex) {
        self.patterns.push(pattern);
        self.pattern_openings = std::sync::OnceLock::new();
    }

    /// Adds the start of a value a check declared, whose line went on past what could
    /// be held: wherever it is found, it is masked with the rest of its line.
    pub fn add_declared_start(&mut self, value: &str) {
        let value = value.trim();
        if value.chars().count() < 2 || value.contains(['\r', '\n']) {
            return;
        }
        self.add_value(value, 2);
        if let Some(at) = self.values.iter().position(|v| &**v == value) {
            self.open_ended.insert(at);
        }
    }

    fn add_value(&mut self, value: &str, min_chars: usize) {
        let value = value.trim();
        if value.chars().count() < min_chars || self.known.contains(value) {
            return;
        }
        let value: std::sync::Arc<str> = value.into();
        self.known.insert(value.clone());
        self.values.push(value);
        self.search = std::sync::OnceLock::new();
    }

    /// The one search over every value, built the first time it is needed.
    fn search(&self) -> Option<&Search> {
        self.search
            .get_or_init(|| {
                // No secret: nothing to search for (an automaton of no words still
                // walks every byte).
                if self.values.is_empty() {
                    return None;
                }
                let mut keys: Vec<&str> = Vec::new();
                let mut by_key: Vec<Vec<usize>> = Vec::new();
                let mut index: rustc_hash::FxHashMap<&str, usize> = Default::default();
                for (i, value) in self.values.iter().enumerate() {
                    let key = key_of(value);
                    let at = *index.entry(key).or_insert_with(|| {
                        keys.push(key);
                        by_key.push(Vec::new());
                        keys.len() - 1
                    });
                    by_key[at].push(i);
                }
                for secrets in &mut by_key {
                    secrets.sort_by_key(|&i| std::cmp::Reverse(self.values[i].len()));
                }
                // No prefilter in the automaton: secrets are random letters and
                // digits, whose first bytes are everywhere in a log, so a prefilter
                // of single bytes finds candidates at most bytes and costs more than
                // it skips (measured: twice the time of the automaton alone with 100
                // secrets over base64 lines). Up to 64 keys, the vectorised search of
                // their first three bytes goes first; past them, their prints search
                // alone, unless a key is shorter than a print. Building the automaton
                // only fails past limits far beyond any environment's size; then each
                // key is searched for on its own: slower, and every secret masked.
                let finder = (keys.len() > FEW_KEYS)
                    .then(|| Prints::new(&keys))
                    .flatten()
                    .map(Finder::Prints)
                    .or_else(|| Finder::automaton(&keys))
                    .unwrap_or_else(|| Finder::one_by_one(&keys));
                Some(Search { finder, by_key })
            })
            .as_ref()
    }

    /// Where the known values are in `text`, added to `spans`: each key found is the
    /// whole secret it begins when the rest follows (the longest such), else the key
    /// alone (a secret's first bytes are masked however it goes on). Values that
    /// overlap are each found, but for one that begins more than [`KEY_BYTES`] before
    /// the end of a whole value found before it, or inside a key found alone.
    fn value_spans(&self, text: &str, spans: &mut Vec<(usize, usize)>) {
        let Some(search) = self.search() else {
            return;
        };
        let mut from = 0;
        while from < text.len() {
            let Some((start, key_end, key)) = search.find(text, from) else {
                break;
            };
            let rest = &text[start..];
            let whole = search.by_key[key]
                .iter()
                .find(|&&i| rest.starts_with(&*self.values[i]));
            let end = match whole {
                None => key_end,
                Some(&i) => {
                    let end = start + self.values[i].len();
                    if self.open_ended.contains(&i) {
                        // Known by its start alone: masked to the end of its line.
                        memchr::memchr2(b'\r', b'\n', &text.as_bytes()[end..])
                            .map_or(text.len(), |at| end + at)
                    } else {
                        end
                    }
                }
            };
            push_coalesced(spans, (start, end));
            // Values that overlap a whole one are masked with it: the search goes on
            // from the next byte, or a key's length before its end when that is later
            // (text made of one value over and over costs that much a byte, no more).
            // After a key alone (the first bytes of values, the rest not there), from
            // its end: text that is one key over and over is not compared with every
            // value of that key at every byte.
            from = char_from(
                text,
                match whole {
                    Some(_) => (start + 1).max(end.saturating_sub(KEY_BYTES)),
                    None => key_end,
                },
            );
        }
    }

    /// How many secret values are known.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no secret value is known (token shapes are still masked).
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Whether `text` is certain to be left as it is: no known value, no marker of a
    /// token shape, an `::add-mask::` or a private key where its shape could match, and
    /// none of the manifest's own patterns to try. One search for the values, one for
    /// everything else.
    pub fn leaves(&self, text: &str) -> bool {
        self.look(text).leaves
    }

    /// What [`Redactor::leaves`] says of `text`, with what its markers' pass found,
    /// for [`Redactor::redact_looked`] not to make that pass again.
    pub fn look(&self, text: &str) -> Look {
        if !self.patterns.is_empty() {
            return Look::UNSEEN;
        }
        let may_mask = MARKERS.may_mask(text.as_bytes());
        let leaves = !may_mask
            && !self
                .search()
                .is_some_and(|search| search.is_match(text.as_bytes()));
        Look {
            leaves,
            may_mask: Some(may_mask),
        }
    }

    /// The earliest position of `text` from which something this redactor masks may
    /// still be under way at its end, were the text to go on: a known value that
    /// `text` ends inside, a token shape, an `::add-mask::` line, a private key's first
    /// or last line, or a match of the manifest's patterns. `None` when nothing is.
    ///
    /// Each is seen once its start is in `text`, a value once its first 64 bytes are,
    /// a shape once the literal it is found by is (within 16 bytes of its start): what
    /// begins in the last [`OPEN_UNSEEN`] bytes may be missed. A text cut
    /// before both that tail and the position returned, where nothing already whole
    /// crosses the cut, has nothing masked under way across it, however it goes on.
    /// Patterns too large for a DFA count as under way from the start.
    pub fn open_from(&self, text: &[u8]) -> Option<usize> {
        self.survey(text).open
    }

    /// What [`Redactor::leaves`] and [`Redactor::open_from`] say of `text`, told with
    /// one pass of the markers' search for both; bytes that are not UTF-8 are searched
    /// as they are (the values and markers found can only be more).
    pub fn survey(&self, text: &[u8]) -> Survey {
        let (may_mask, found) = MARKERS.survey(text);
        let leaves = self.patterns.is_empty()
            && !may_mask
            && !self.search().is_some_and(|search| search.is_match(text));
        let mut seeds: Vec<usize> = found
            .into_iter()
            .chain(OPENING_WORDS.iter().flat_map(|word| word.find_iter(text)))
            .flat_map(|at| at.saturating_sub(REACH)..=at)
            .collect();
        seeds.sort_unstable();
        seeds.dedup();
        // A declaration whose line has not ended is open from its command, told
        // without the DFA (which would step through the whole value); nothing that
        // begins after it can be open from earlier.
        let declared = declarations(text)
            .find(|(_, ended)| !ended)
            .map(|(value, _)| value.start - "::add-mask::".len());
        if let Some(declared) = declared {
            seeds.retain(|&seed| seed < declared);
        }
        // (No literal, no shape: the DFA is not even built.)
        let shapes = (!seeds.is_empty())
            .then(|| OPENINGS.earliest(text, Seeds::At(&seeds)))
            .flatten();
        let patterns = if self.patterns.is_empty() {
            None
        } else {
            match self.pattern_openings() {
                Some(openings) => openings.earliest(text, Seeds::Every),
                None => Some(0),
            }
        };
        let open = [shapes, patterns, declared, self.value_open_from(text)]
            .into_iter()
            .flatten()
            .min();
        Survey { leaves, open }
    }

    /// The manifest's patterns' DFA, built the first time it is needed.
    fn pattern_openings(&self) -> Option<&Openings> {
        self.pattern_openings
            .get_or_init(|| {
                let patterns: Vec<&str> = self.patterns.iter().map(Regex::as_str).collect();
                Openings::new(&patterns).map(std::sync::Arc::new)
            })
            .as_deref()
    }

    /// The earliest position where a known value begins whose first bytes `text` ends
    /// with (its key whole, the rest still to come).
    fn value_open_from(&self, text: &[u8]) -> Option<usize> {
        let search = self.search()?;
        let longest = self.values.iter().map(|v| v.len()).max()?;
        // Only a value that begins within its length of the end can be under way there.
        let mut offset = text.len().saturating_sub(longest);
        while offset < text.len() && (text[offset] & 0xC0) == 0x80 {
            offset += 1;
        }
        for chunk in text[offset..].utf8_chunks() {
            let valid = chunk.valid();
            let mut from = 0;
            while let Some((start, _, key)) = search.find(valid, from) {
                let rest = &text[offset + start..];
                let under_way = search.by_key[key].iter().any(|&i| {
                    let value = self.values[i].as_bytes();
                    value.len() > rest.len() && value.starts_with(rest)
                });
                if under_way {
                    return Some(offset + start);
                }
                from = start + 1;
            }
            offset += valid.len() + chunk.invalid().len();
        }
        None
    }

    /// `text` with every known value, every value masked by an `::add-mask::` line of
    /// the text itself, and every token shape replaced by [`MASK`].
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.redact_looked(text, Look::UNSEEN)
    }

    /// [`Redactor::redact`], of a text [`Redactor::look`] has looked at (values may
    /// have been added since: they are searched for afresh).
    pub fn redact_looked<'a>(&self, text: &'a str, look: Look) -> Cow<'a, str> {
        let bytes = text.as_bytes();
        let values = self.search().is_some_and(|search| search.is_match(bytes));
        let others =
            !self.patterns.is_empty() || look.may_mask.unwrap_or_else(|| MARKERS.may_mask(bytes));
        if !values && !others {
            // Nothing could change it (the searches below are each a pass).
            return Cow::Borrowed(text);
        }
        // Everything found in the text as it is, masked at once: what one search finds
        // is not hidden from another by the first one's mask (a value that is a word of
        // a key's first line, or an authorization's scheme; a token whose characters
        // run into a key's first line).
        let mut spans = Vec::new();
        if values {
            self.value_spans(text, &mut spans);
        }
        if others {
            declared_spans(text, &mut spans);
        }
        let known = spans.len();
        if others {
            self.other_spans(text, &mut spans);
        }
        if known > 0 || (!self.patterns.is_empty() && !spans.is_empty()) {
            // Then everything else again, in the text with everything found masked,
            // and what that finds masked in the text as printed: a mask can make a
            // shape whole (an address's password that held a value and a `/`, or a key;
            // an access key id whose letters ran on into a token, given its word's edge).
            let mut found = (spans.len() > known).then(|| spans.clone());
            if known > 0 {
                // With the values alone masked: another mask can take what a shape
                // needs (a pattern's match an address's `@`, a token the start of a JSON
                // Web Token that a value's mask gave its word's edge).
                let mut values = spans[..known].to_vec();
                self.search_masked(text, &mut values, &mut spans);
            }
            if let Some(found) = &mut found {
                self.search_masked(text, found, &mut spans);
            }
        }
        if spans.is_empty() {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(mask_spans(text, &mut spans).0)
        }
    }
}

/// What [`Redactor::look`] tells of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    /// Nothing in it is masked.
    pub leaves: bool,
    /// What the markers' pass said, where it was made.
    may_mask: Option<bool>,
}

impl Look {
    /// Nothing looked at.
    const UNSEEN: Look = Look {
        leaves: false,
        may_mask: None,
    };
}

/// What one pass over a text says of it (see [`Redactor::survey`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Survey {
    /// Nothing in it is masked ([`Redactor::leaves`]).
    pub leaves: bool,
    /// Where something masked may be under way at its end ([`Redactor::open_from`]).
    pub open: Option<usize>,
}

impl Redactor {
    /// Searches `text` with `masks` masked for declared values, private keys, token
    /// shapes and patterns, and adds where they are in `text` as printed to `spans`.
    fn search_masked(
        &self,
        text: &str,
        masks: &mut [(usize, usize)],
        spans: &mut Vec<(usize, usize)>,
    ) {
        let (masked, map) = mask_spans(text, masks);
        let mut more = Vec::new();
        declared_spans(&masked, &mut more);
        self.other_spans(&masked, &mut more);
        spans.extend(more.into_iter().map(|span| map.to_raw(span)));
    }

    /// Where the private keys, token shapes and the manifest's patterns are in
    /// `text` as it is, added to `spans`.
    fn other_spans(&self, text: &str, spans: &mut Vec<(usize, usize)>) {
        let bytes = text.as_bytes();
        if KEY_END_MARK.find(bytes).is_some() {
            // A tail that starts inside a private key: everything up to its end, the
            // last key's last line before any key's first line (a tail can end more
            // than one kind of block's last line).
            let first_begin = KEY_BEGIN.find(text).map_or(text.len(), |m| m.start());
            if let Some(end) = KEY_END.find_iter(&text[..first_begin]).last() {
                spans.push((0, end.end()));
            }
        }
        if MARKERS.may_mask(bytes) {
            spans.extend(shape_secrets(text));
        }
        for pattern in &self.patterns {
            spans.extend(pattern.find_iter(text).map(|m| (m.start(), m.end())));
        }
    }
}

/// Where the values declared by the `::add-mask::` lines of `text` are in it, added to
/// `spans` (GitHub masks these whatever their length; a single character would mask
/// everything, so at least two).
fn declared_spans(text: &str, spans: &mut Vec<(usize, usize)>) {
    // Each value once, however many times it is declared.
    let mut values: Vec<&str> = declarations(text.as_bytes())
        .map(|(value, _)| text[value].trim())
        .filter(|value| value.chars().count() >= 2)
        .collect();
    values.sort_unstable();
    values.dedup();
    for value in values {
        for span in overlapping(text, value) {
            push_coalesced(spans, span);
        }
    }
}

/// Where `value` is in `text`, occurrences that overlap included, but for one that
/// begins more than [`KEY_BYTES`] before the end of the one before (text made of one
/// value over and over costs that much a byte, no more).
fn overlapping<'t>(text: &'t str, value: &'t str) -> impl Iterator<Item = (usize, usize)> + 't {
    let finder = memmem::Finder::new(value.as_bytes());
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from + finder.find(text.as_bytes().get(from..)?)?;
        let end = at + value.len();
        from = char_from(text, (at + 1).max(end.saturating_sub(KEY_BYTES)));
        Some((at, end))
    })
}

/// `at`, moved on to the start of the next character of `text` when it is inside one
/// (where a search goes on from).
fn char_from(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// Adds `span` to `spans`, or widens the last one where `span` overlaps it (masked as
/// one either way: a run of overlapping finds takes one entry, not one a byte).
fn push_coalesced(spans: &mut Vec<(usize, usize)>, (start, end): (usize, usize)) {
    match spans.last_mut() {
        Some((last_start, last_end)) if *last_start <= start && start < *last_end => {
            *last_end = (*last_end).max(end);
        }
        _ => spans.push((start, end)),
    }
}

/// Where the masks of a masked text are: each one's start in it, and the part of the
/// text as printed that it replaced.
struct MaskMap(Vec<(usize, usize, usize)>);

impl MaskMap {
    /// The part of the text as printed that `start..end` of the masked text shows: a
    /// mask it begins or ends inside is taken whole.
    fn to_raw(&self, (start, end): (usize, usize)) -> (usize, usize) {
        let len = MASK.len();
        // `at` after the last of the first `masks` masks (or inside it).
        let raw = |at: usize, masks: usize, inside: fn((usize, usize)) -> usize| match masks
            .checked_sub(1)
            .map(|i| self.0[i])
        {
            None => at,
            Some((mask, _, raw_end)) if at >= mask + len => raw_end + (at - mask - len),
            Some((_, raw_start, raw_end)) => inside((raw_start, raw_end)),
        };
        let before_start = self.0.partition_point(|&(mask, ..)| mask <= start);
        let before_end = self.0.partition_point(|&(mask, ..)| mask < end);
        (
            raw(start, before_start, |(raw_start, _)| raw_start),
            raw(end, before_end, |(_, raw_end)| raw_end),
        )
    }
}

/// `text` with each of `spans` (in any order) replaced by [`MASK`], and where each mask
/// is; spans that overlap are masked as one.
fn mask_spans(text: &str, spans: &mut [(usize, usize)]) -> (String, MaskMap) {
    spans.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut map = Vec::new();
    let mut copied = 0;
    let mut mask = |out: &mut String, (start, end): (usize, usize)| {
        out.push_str(&text[copied..start]);
        map.push((out.len(), start, end));
        out.push_str(MASK);
        copied = end;
    };
    let mut open: Option<(usize, usize)> = None;
    for &(start, end) in spans.iter().filter(|(start, end)| start < end) {
        match &mut open {
            Some((_, open_end)) if start < *open_end => *open_end = (*open_end).max(end),
            _ => {
                if let Some(span) = open.replace((start, end)) {
                    mask(&mut out, span);
                }
            }
        }
    }
    if let Some(span) = open {
        mask(&mut out, span);
    }
    out.push_str(&text[copied..]);
    (out, MaskMap(map))
}

/// Whether a variable named `name` holds a secret, by its name.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|part| upper.contains(part))
}

/// Each token shape's own expression (the private key block last): searched one by
/// one, so that a shape is found wherever it is, also inside another's match.
static EACH_SHAPE: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    SHAPE_PATTERNS
        .iter()
        .map(|p| Regex::new(p).expect("valid token shape"))
        .collect()
});

/// How far back inside a shape's match its next search begins: a token glued to the
/// one before (the same shape twice, `ghp_…ghp_…`) begins inside the match before when
/// that match ran into its first characters. A search goes on from the byte after the
/// match's start, or this many bytes before its end when that is later, so a run of
/// matches costs a pass and this much per match, never the square of a run.
const SHAPE_OVERLAP: usize = 256;

/// Where each token shape's secret is in `text`: the part matched by its group named
/// `s…`, or the whole match (the rest of it, e.g. the `@` of a URL, is kept). Each
/// shape is searched on its own, and each search goes on from inside the match before
/// ([`SHAPE_OVERLAP`]): a token in an address's user name, two tokens glued together,
/// a token running into `Authorization`, are each found.
fn shape_secrets(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for shape in EACH_SHAPE.iter() {
        let mut from = 0;
        while from < text.len() {
            let Some(caps) = shape.captures_at(text, from) else {
                break;
            };
            let whole = caps.get(0).expect("group 0");
            let secret = ["s1", "s2", "s3"]
                .iter()
                .find_map(|name| caps.name(name))
                .unwrap_or(whole);
            push_coalesced(&mut spans, (secret.start(), secret.end()));
            from = char_from(
                text,
                (whole.start() + 1).max(whole.end().saturating_sub(SHAPE_OVERLAP)),
            );
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every token shape, as one expression.
    static SHAPES: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(&SHAPE_PATTERNS.join("|")).expect("valid token shapes"));

    #[test]
    fn secret_looking_variables_are_masked() {
        let r = Redactor::from_vars([
            ("MY_API_KEY", "k3y-value-123"),
            ("NPM_TOKEN", "npm-token-value"),
            ("DB_PASSWORD", "hunter2"),
            ("HOME", "/home/someone"),
            ("USE_KEYCHAIN", "true"),
        ]);
        assert_eq!(r.len(), 3);
        assert_eq!(
            r.redact("key=k3y-value-123 npm=npm-token-value pw=hunter2 home=/home/someone true"),
            "key=*** npm=*** pw=*** home=/home/someone true"
        );
    }

    #[test]
    fn long_secrets_are_found_by_their_first_bytes_and_masked_whole() {
        let long = format!("{}{}", "k".repeat(70), "tail-of-the-first");
        let other = format!("{}{}", "k".repeat(70), "tail-of-the-second-one");
        let mut r = Redactor::default();
        r.add(&long);
        r.add(&other);
        r.add("kkkkkkkk");
        // Each whole, the one present (they share their first 64 bytes).
        assert_eq!(r.redact(&format!("a {long} b")), "a *** b");
        assert_eq!(r.redact(&format!("a {other} b")), "a *** b");
        // A secret's first bytes alone are masked too, however it goes on (the search
        // goes on from their end).
        let start = format!("{}{}", "k".repeat(64), "kkkkkk-not-it");
        assert_eq!(r.redact(&format!("a {start}")), "a ***kkkkkk-not-it");
        // The short secret they begin with, on its own.
        assert_eq!(r.redact("x kkkkkkkk y"), "x *** y");
        // A key's bytes cut at a character's end.
        let wide = "é".repeat(50);
        let mut r = Redactor::default();
        r.add(&wide);
        assert_eq!(r.redact(&format!("<{wide}>")), "<***>");
    }

    #[test]
    fn longer_secrets_win_over_their_prefixes() {
        let mut r = Redactor::default();
        r.add("abcdef");
        r.add("abcdefghij");
        assert_eq!(r.redact("x abcdefghij y abcdef"), "x *** y ***");
    }

    #[test]
    fn token_shapes_are_masked() {
        let r = Redactor::default();
        let ghp = format!("ghp_{}", "a".repeat(36));
        let pat = format!("github_pat_{}", "B1_".repeat(20));
        let npm = format!("npm_{}", "c".repeat(36));
        for (text, want) in [
            (format!("token {ghp} end"), "token *** end".to_owned()),
            (pat.clone(), "***".to_owned()),
            (format!("//registry/:_authToken={npm}"), "//registry/:_authToken=***".to_owned()),
            ("AKIAIOSFODNN7EXAMPLE".to_owned(), "***".to_owned()),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".to_owned(),
                "aws_secret_access_key = ***".to_owned(),
            ),
            (
                "https://user:s3cr3t@example.com/x".to_owned(),
                "https://user:***@example.com/x".to_owned(),
            ),
            (
                "Authorization: Bearer abcdefgh12345".to_owned(),
                "Authorization: Bearer ***".to_owned(),
            ),
            (
                "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----\nz".to_owned(),
                "a\n***\nz".to_owned(),
            ),
            ("x\n-----BEGIN RSA PRIVATE KEY-----\nMIIE".to_owned(), "x\n***".to_owned()),
            ("MIIEabc\n-----END PRIVATE KEY-----\nafter".to_owned(), "***\nafter".to_owned()),
        ] {
            assert_eq!(r.redact(&text), want, "{text}");
        }
    }

    /// The forms credentials take in real logs beyond the plainest: each is masked.
    #[test]
    fn credentials_in_their_real_forms_are_masked() {
        let r = Redactor::default();
        for (text, want) in [
            // A password holding `@` (not percent-encoded), an empty user name.
            (
                "postgres://app:p@ss@db:5432/x",
                "postgres://app:***@db:5432/x",
            ),
            ("redis://:hunter22@cache:6379", "redis://:***@cache:6379"),
            // An authorization header in JSON, or quoted.
            (
                r#"{"Authorization": "Bearer abcdefgh12345"}"#,
                r#"{"Authorization": "Bearer ***"}"#,
            ),
            (
                "'authorization': 'token abcdefgh12345'",
                "'authorization': 'token ***'",
            ),
            // In JSON inside a string, a Ruby hash, a call's arguments.
            (
                r#"{"headers": "{\"Authorization\": \"Bearer abcdefgh12345\"}"}"#,
                r#"{"headers": "{\"Authorization\": \"Bearer ***\"}"}"#,
            ),
            (
                "'Authorization' => 'Bearer abcdefgh12345'",
                "'Authorization' => 'Bearer ***'",
            ),
            (
                r#"req.Header.Set("Authorization", "Bearer abcdefgh12345")"#,
                r#"req.Header.Set("Authorization", "Bearer ***")"#,
            ),
            // An OpenPGP private key, armoured.
            (
                "a\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n=Ab12\n\
                 -----END PGP PRIVATE KEY BLOCK-----\nz",
                "a\n***\nz",
            ),
            ("x\n-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF", "x\n***"),
            (
                "lQOYBF\n-----END PGP PRIVATE KEY BLOCK-----\nafter",
                "***\nafter",
            ),
            // A key's tail, after a certificate whole in the same text.
            (
                "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n\
                 MIIEtail\n-----END RSA PRIVATE KEY-----\nafter",
                "***\nafter",
            ),
            // Word boundaries are ASCII: a letter of another script after an access
            // key id, or before a token, does not make it part of a word.
            ("AKIAIOSFODNN7EXAMPLEé", "***é"),
            (
                "éeyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlMTIz",
                "é***",
            ),
        ] {
            assert_eq!(r.redact(text), want, "{text}");
        }
        // Still not credentials: a port, a path with `@`, an address without one.
        for text in [
            "https://registry.npmjs.org:443/@types/node",
            "ssh://git@github.com:org/repo.git",
            "http://[::1]:8080/x",
            "xAKIAIOSFODNN7EXAMPLE",
        ] {
            assert_eq!(r.redact(text), text);
        }
    }

    /// Few secrets are told apart from text by the vectorised search, many by the
    /// automaton: either way each is masked wherever it is, in a large block too.
    #[test]
    fn few_and_many_secrets_are_each_masked_in_a_large_block() {
        for count in [1, 40, 64, 65, 1000] {
            let values: Vec<String> = (0..count).map(|i| format!("Zq{i:04}x9Kp7Lm2Vb")).collect();
            let r = Redactor::from_vars(
                values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (format!("S_{i}_TOKEN"), v.clone())),
            );
            for (at, value) in [(0, &values[0]), (count - 1, &values[count - 1])] {
                let text = format!("{}{value} at {at}\n", "0123456789abcdef".repeat(64 * 1024));
                let masked = r.redact(&text);
                assert!(!masked.contains(value.as_str()), "{count} secrets: {value}");
                assert!(masked.ends_with(&format!("*** at {at}\n")), "{count}");
            }
            let clean = "0123456789abcdef".repeat(1024);
            assert!(matches!(r.redact(&clean), Cow::Borrowed(_)), "{count}");
        }
    }

    /// Numbers below the one asked for, the same from one run to the next (xorshift64
    /// from `seed`).
    fn below(mut seed: u64) -> impl FnMut(usize) -> usize {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        }
    }

    /// The prints, and each key searched for on its own, find what the automaton finds,
    /// from every position: the same leftmost key, the longest of those beginning
    /// there. Keys of a small alphabet (many share their first bytes, and many begin
    /// others), of several bytes to a character, are looked for in text made of them
    /// and of their pieces.
    #[test]
    fn prints_find_what_the_automaton_finds() {
        let mut next = below(0x2545_F491_4F6C_DD1D);
        let alphabet: Vec<char> = "abAB0é-".chars().collect();
        for round in 0..400 {
            // Half the rounds have keys of a print's length and more; the others keys
            // longer, whose windows skip further.
            let least = if round % 2 == 0 { 6 } else { 6 + next(24) };
            let mut keys: Vec<String> = Vec::new();
            while keys.len() < 65 + next(60) {
                let key: String = match keys.len() {
                    // One in four begins another key, or is the start of one.
                    n if n > 0 && next(4) == 0 => {
                        let other = keys[next(n)].clone();
                        let cut = other.char_indices().nth(6).map_or(other.len(), |(i, _)| i);
                        let tail: String = (0..least - 6 + next(4))
                            .map(|_| alphabet[next(7)])
                            .collect();
                        format!("{}{tail}", &other[..cut])
                    }
                    _ => (0..least + next(8)).map(|_| alphabet[next(7)]).collect(),
                };
                let alike = keys
                    .iter()
                    .filter(|k| k.as_bytes()[..PRINT_BYTES] == key.as_bytes()[..PRINT_BYTES])
                    .count();
                if !keys.contains(&key) && alike < SHARED_PRINT {
                    keys.push(key);
                }
            }
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            let prints = Prints::new(&refs).expect("every key is long enough, and few begin alike");
            let automaton = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&refs)
                .unwrap();
            // The search no building can fail, where the automaton cannot be built.
            let one_by_one = Search {
                finder: Finder::one_by_one(&refs),
                by_key: Vec::new(),
            };
            let mut text = String::new();
            while text.len() < 400 {
                match next(3) {
                    0 => text.push_str(&keys[next(keys.len())]),
                    1 => {
                        let key = &keys[next(keys.len())];
                        let cut = key.char_indices().nth(1 + next(5)).map_or(0, |(i, _)| i);
                        text.push_str(&key[..cut]);
                    }
                    _ => text.push(alphabet[next(7)]),
                }
            }
            for from in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                let expected = automaton
                    .find(aho_corasick::Input::new(&text).range(from..))
                    .map(|m| (m.start(), m.pattern().as_usize()));
                assert_eq!(
                    prints.find(text.as_bytes(), from),
                    expected,
                    "round {round}, from {from}: {text:?}"
                );
                let each = one_by_one.find(&text, from);
                assert_eq!(
                    each.map(|(at, _, key)| (at, key)),
                    expected,
                    "one by one: round {round}, from {from}: {text:?}"
                );
                assert!(each.is_none_or(|(at, end, key)| end - at == refs[key].len()));
                assert_eq!(
                    one_by_one.is_match(&text.as_bytes()[from..]),
                    expected.is_some()
                );
            }
        }
        // A key shorter than a print: the automaton searches.
        assert!(Prints::new(&["abcdef", "abcde"]).is_none());
        // And where many keys begin alike: text made of their first bytes would have
        // each compared at every position.
        let alike: Vec<String> = (0..5).map(|i| format!("eyJhbGci{i:040}")).collect();
        let refs: Vec<&str> = alike.iter().map(String::as_str).collect();
        assert!(Prints::new(&refs).is_none());
        assert!(Prints::new(&refs[..4]).is_some());
    }

    /// With keys enough to fill the skips' table (its slots shared by many grams, the
    /// skips shortened), the prints still find what the automaton finds: 20,000 keys
    /// of 40 letters and digits, as secret-named variables hold them, in text of
    /// their letters, whole keys and the first bytes of keys.
    #[test]
    fn prints_with_a_full_table_find_what_the_automaton_finds() {
        let mut next = below(0x9E37_79B9_7F4A_7C15);
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let keys: Vec<String> = (0..20_000)
            .map(|_| (0..40).map(|_| char::from(alphabet[next(62)])).collect())
            .collect();
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let prints = Prints::new(&refs).expect("random keys seldom begin alike");
        assert_eq!(prints.skips.len(), 1 << 20, "the table at its largest");
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&refs)
            .unwrap();
        let mut text = String::new();
        while text.len() < 200_000 {
            match next(8) {
                0 => text.push_str(&keys[next(keys.len())]),
                1 => text.push_str(&keys[next(keys.len())][..1 + next(39)]),
                _ => text.push(char::from(alphabet[next(62)])),
            }
        }
        let (mut from, mut found) = (0, 0);
        loop {
            let expected = automaton
                .find(aho_corasick::Input::new(&text).range(from..))
                .map(|m| (m.start(), m.pattern().as_usize()));
            assert_eq!(prints.find(text.as_bytes(), from), expected, "from {from}");
            let Some((at, _)) = expected else { break };
            found += 1;
            from = at + 1;
        }
        assert!(found > 1_000, "{found} keys found");
    }

    /// Past the vectorised search's keys, the prints search, and a secret is masked as
    /// the automaton masked it: whole where it all follows, its first bytes where they
    /// alone do, the longer of two that begin alike.
    #[test]
    fn many_secrets_are_masked_as_few_are() {
        let long = format!("{}{}", "k".repeat(70), "tail-of-the-first");
        let values: Vec<String> = (0..100)
            .map(|i| format!("Zq{i:04}x9Kp7Lm2Vb"))
            .chain([long.clone(), "abcdef".into(), "abcdefghij".into()])
            .collect();
        let mut many = Redactor::default();
        for value in &values {
            many.add(value);
        }
        assert!(
            many.search()
                .is_some_and(|s| matches!(s.finder, Finder::Prints(_)))
        );
        // A thousand tokens of one header: the automaton, and the same masks.
        let mut alike = Redactor::default();
        for value in values.iter().chain(
            &(0..1000)
                .map(|i| format!("eyJhbGciOiJIUzI1NiJ9.{i:030}"))
                .collect::<Vec<_>>(),
        ) {
            alike.add(value);
        }
        assert!(
            alike
                .search()
                .is_some_and(|s| matches!(s.finder, Finder::Automaton { .. }))
        );
        let token = format!("eyJhbGciOiJIUzI1NiJ9.{:030}", 999);
        assert_eq!(alike.redact(&format!("a {token} b")), "a *** b");
        let start = format!("{}{}", "k".repeat(64), "kkkkkk-not-it");
        for (text, masked) in [
            (format!("a {long} b"), "a *** b".to_owned()),
            (format!("a {start}"), "a ***kkkkkk-not-it".to_owned()),
            ("x abcdefghij y abcdef".into(), "x *** y ***".into()),
            ("Zq0042x9Kp7Lm2VbZq0099x9Kp7Lm2Vb".into(), "******".into()),
            ("tail Zq0042x9Kp7Lm2V".into(), "tail Zq0042x9Kp7Lm2V".into()),
            ("Zq0042x9Kp7Lm2Vb".into(), "***".into()),
        ] {
            assert_eq!(many.redact(&text), masked);
        }
    }

    /// The two shapes matched in any case are masked in every case their words come in
    /// (the markers that let text reach the shapes hold four letters of each word in
    /// every case).
    #[test]
    fn shapes_matched_in_any_case_are_masked_in_every_case() {
        let r = Redactor::default();
        let cased = |word: &str, upper: u32| -> String {
            word.chars()
                .enumerate()
                .map(|(i, c)| {
                    if upper >> (i % 32) & 1 == 1 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect()
        };
        for upper in [
            0,
            u32::MAX,
            0b1010_1010_1010_1010,
            0b0101_0101_0101_0101,
            0b1110_0001_1100_0011,
        ] {
            let header = format!("{}: Bearer abcdefgh12345678", cased("authorization", upper));
            let masked = r.redact(&header);
            assert!(!masked.contains("abcdefgh12345678"), "{header} → {masked}");
            let aws = format!(
                "{}={}",
                cased("aws_secret_access_key", upper),
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
            );
            let masked = r.redact(&aws);
            assert!(!masked.contains("wJalrXUtnFEMI"), "{aws} → {masked}");
        }
    }

    /// Each token format, from its vendor's documentation of the format: a sample of
    /// the real shape must be masked, and a near miss must not be.
    #[test]
    fn each_token_format_is_caught_and_its_near_miss_is_not() {
        let r = Redactor::default();
        let b = |n: usize| "aB3".repeat(n).chars().take(n).collect::<String>();
        let formats: Vec<(&str, String, String)> = vec![
            (
                "GitHub personal",
                format!("ghp_{}", b(36)),
                format!("ghp_{}", b(10)),
            ),
            (
                "GitHub OAuth",
                format!("gho_{}", b(36)),
                format!("gho-{}", b(36)),
            ),
            (
                "GitHub user-to-server",
                format!("ghu_{}", b(36)),
                format!("ghx_{}", b(36)),
            ),
            (
                "GitHub server-to-server",
                format!("ghs_{}", b(36)),
                format!("ghs_{}", b(8)),
            ),
            (
                "GitHub refresh",
                format!("ghr_{}", b(36)),
                "ghr_".to_owned(),
            ),
            (
                "GitHub fine-grained",
                format!("github_pat_{}_{}", b(22), b(59)),
                "github_pat_short".to_owned(),
            ),
            ("npm", format!("npm_{}", b(36)), format!("npm_{}", b(12))),
            (
                "PyPI",
                format!("pypi-AgEIcHlwaS5vcmc{}", b(60)),
                "pypi-package-name".to_owned(),
            ),
            (
                "AWS access key id",
                "AKIAIOSFODNN7EXAMPLE".to_owned(),
                "AKIAIOSFODNN7EXAMPL".to_owned(),
            ),
            (
                "Slack",
                format!("xoxb-{}-{}", "1234567890", b(24)),
                "xoxo-hugs".to_owned(),
            ),
            (
                "Stripe live",
                format!("sk_live_{}", b(24)),
                "sk_live_short".to_owned(),
            ),
            (
                "Stripe test",
                format!("sk_test_{}", b(24)),
                "sk_test_run".to_owned(),
            ),
            (
                "Google API key",
                format!("AIza{}", b(35)),
                format!("AIza{}", b(20)),
            ),
            ("GitLab", format!("glpat-{}", b(20)), "glpat-x".to_owned()),
            (
                "GitLab job token",
                format!("glcbt-64_{}", b(24)),
                "glcbt-short".to_owned(),
            ),
            (
                "GitLab runner token",
                format!("glrt-{}", b(20)),
                "glrt-x".to_owned(),
            ),
            (
                "JWT",
                format!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.{}", b(43)),
                "eyJhbGciOiJIUzI1NiJ9 only a header".to_owned(),
            ),
            (
                "private key block",
                "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----".to_owned(),
                "-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----".to_owned(),
            ),
        ];
        for (format, sample, near) in formats {
            assert_eq!(
                r.redact(&format!("x {sample} y")),
                "x *** y",
                "{format}: {sample}"
            );
            let line = format!("x {near} y");
            assert_eq!(r.redact(&line), line, "{format}'s near miss: {near}");
        }
    }

    #[test]
    fn declared_values_and_patterns_and_values_of_several_lines() {
        let mut r = Redactor::default();
        r.add_declared("ab");
        r.add("line-one-secret\nline-two-secret");
        r.add_pattern(Regex::new(r"session=[0-9a-f]{8}").unwrap());
        assert_eq!(
            r.redact("ab line-one-secret, line-two-secret session=deadbeef abc"),
            "*** ***, *** *** ***c"
        );
    }

    #[test]
    fn values_masked_by_the_text_itself_are_masked_everywhere() {
        let r = Redactor::default();
        assert_eq!(
            r.redact("::add-mask::xyz\nthe value is xyz\r\n"),
            "::add-mask::***\nthe value is ***\r\n"
        );
    }

    #[test]
    fn text_without_secrets_is_borrowed() {
        let r = Redactor::from_vars([("TOKEN", "abcdefgh")]);
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
    }

    /// The one pass that lets most text through untouched is a necessary condition of
    /// every token shape: over generated text made of the shapes' pieces (markers,
    /// runs of their classes of every length around what each needs, the characters
    /// that end them, Unicode that folds to ASCII), wherever a shape matches, the pass
    /// says the text may be masked.
    #[test]
    fn text_the_markers_pass_lets_through_holds_no_token_shape() {
        let pieces: &[&str] = &[
            "ghp_",
            "gho_",
            "ghu_",
            "ghs_",
            "ghr_",
            "gh",
            "p_",
            "github_pat_",
            "npm_",
            "pypi-",
            "pypi-AgEIcHlwaS5vcmc",
            "glpat-",
            "gldt-",
            "glagent-",
            "glsoat-",
            "xoxb-",
            "xox",
            "xoxr-",
            "AIza",
            "sk_live_",
            "rk_test_",
            "k_live_",
            "_live_",
            "eyJ",
            ".eyJ",
            ".",
            "AKIA",
            "ASIA",
            "aws_secret_access_key=",
            "AWS_SECRET_ACCESS_KEY: ",
            "AwsSecretAccessKey='",
            "AWSSECRETACCESSKEY = \"",
            "aws",
            "_",
            "Se",
            "secret",
            "CrEt",
            "access",
            "key",
            "KEY",
            "=",
            ":",
            "\"",
            "'",
            " ",
            "\n",
            "\t",
            "\u{b}",
            "@",
            "/",
            "://",
            "https://",
            "://user:pw@",
            "://u:p@",
            "://a/b:c@",
            "://a b:c@",
            "://a\u{b}:c@",
            "://ſ:K@",
            "://:p@",
            "://u:@",
            "user",
            "pw",
            "Authorization: Bearer ",
            "authorization=token ",
            "AUTHORIZATION:basic\t",
            "AuThOrIzAtIoN :  BEARER ",
            "autho",
            "riza",
            "tion",
            "Bearer ",
            "-----BEGIN RSA PRIVATE KEY-----",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----",
            "-----BEGIN ",
            "PRIVATE KEY",
            " BLOCK",
            "-----",
            "-----END PGP PRIVATE KEY BLOCK-----",
            "-----END PRIVATE KEY-----",
            "::add-mask::",
            "ſ",
            "K",
            "é",
            "\u{85}",
            "\u{2028}",
            "-",
            "A",
            "z",
            "0",
            "9",
            "eyJ0123456789",
            ".eyJabcdefghij",
            "eyJhbGciOiJIUzI1NiJ9.eyJ",
        ];
        // The classes the shapes' runs are made of, and one wider.
        let classes: &[&[u8]] = &[
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-",
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+=",
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./+=",
        ];
        let mut next = below(0x243F_6A88_85A3_08D3);
        let (mut matched, mut let_through) = (0, 0);
        for _ in 0..60_000 {
            let mut text = String::new();
            for _ in 0..1 + next(6) {
                if next(2) == 0 {
                    text.push_str(pieces[next(pieces.len())]);
                } else {
                    // A run of a shape's class, of a length about what a shape needs.
                    let class = classes[next(classes.len())];
                    let len = [1, 8, 9, 10, 15, 16, 19, 20, 29, 30, 35, 40][next(12)];
                    for _ in 0..len {
                        text.push(char::from(class[next(class.len())]));
                    }
                }
            }
            if SHAPES.is_match(&text) {
                matched += 1;
                assert!(MARKERS.may_mask(text.as_bytes()), "{text:?}");
                shapes_cut_inside_are_open(&text);
            } else if !MARKERS.may_mask(text.as_bytes()) {
                let_through += 1;
            }
        }
        // The longest credential the URL's shape takes: 256 characters of four bytes,
        // either side of the `:`.
        let wide = "\u{1d49c}".repeat(256);
        let longest = format!("x://{wide}:{wide}@host");
        assert!(SHAPES.is_match(&longest) && MARKERS.may_mask(longest.as_bytes()));
        // Both kinds of text were made, many of each.
        assert!(
            matched > 3_000 && let_through > 10_000,
            "{matched} {let_through}"
        );
    }

    /// Each shape that matches in `text`, cut inside past the bytes the openings may
    /// not see, is open from its start or before (a private key's block from the end
    /// of its first line on is the writer's to follow).
    fn shapes_cut_inside_are_open(text: &str) {
        let r = Redactor::default();
        for found in SHAPES.find_iter(text) {
            let first = found.start() + REACH + 12;
            let header = found.as_str().starts_with("-----BEGIN ");
            // Its first cut, its middle, its last byte.
            let cuts = [first, (first + found.end()) / 2, found.end() - 1];
            for cut in cuts
                .into_iter()
                .filter(|&cut| cut >= first && cut < found.end())
            {
                if header && may_hold_key_line(&text.as_bytes()[found.start()..cut]) {
                    // The first line whole: the block's body is the writer's.
                    break;
                }
                let open = r.open_from(&text.as_bytes()[..cut]);
                assert!(
                    open.is_some_and(|at| at <= found.start()),
                    "{text:?} cut at {cut}: {open:?}, the shape from {}",
                    found.start()
                );
            }
        }
    }

    #[test]
    fn what_is_under_way_at_the_end_is_open_from_its_start() {
        // A value that does not begin again inside itself.
        let long = (0..60).map(|i| i.to_string()).collect::<Vec<_>>().join("-");
        let mut r = Redactor::from_vars([("LONG_TOKEN", long.as_str())]);
        let quiet = "x".repeat(1000);
        assert_eq!(r.open_from(quiet.as_bytes()), None);
        // A value the text ends inside, once its key is there.
        for cut in [KEY_BYTES, KEY_BYTES + 1, long.len() - 1] {
            let text = format!("{quiet}{}", &long[..cut]);
            assert_eq!(r.open_from(text.as_bytes()), Some(1000), "{cut}");
        }
        // Whole, it is not under way.
        assert_eq!(r.open_from(format!("{quiet}{long}").as_bytes()), None);
        // Shapes that go on without end, and long runs inside one.
        for open in [
            format!("npm_{}", "A1".repeat(50_000)),
            format!("eyJ{}", "b".repeat(50_000)),
            format!("aws_secret_access_key{}", " ".repeat(50_000)),
            format!("Authorization:{}", "\t".repeat(50_000)),
            format!("-----BEGIN {}", "RSA ".repeat(20_000)),
            format!("::add-mask::{}", "v".repeat(50_000)),
            "://user:pass".to_owned(),
        ] {
            let text = format!("{quiet}{open}");
            assert_eq!(
                r.open_from(text.as_bytes()),
                Some(1000),
                "{}",
                &open[..open.len().min(20)]
            );
        }
        // Over once a byte ends them.
        for over in [
            "npm_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA,",
            "eyJabc ",
            "https://a/b",
        ] {
            let text = format!("{quiet}{over}");
            assert_eq!(r.open_from(text.as_bytes()), None, "{over}");
        }
        // The manifest's own patterns, from wherever they may begin.
        r.add_pattern(Regex::new("session=[0-9a-f]+").unwrap());
        let text = format!("{quiet}session=0123abc");
        assert_eq!(r.open_from(text.as_bytes()), Some(1000));
        assert_eq!(r.open_from(format!("{text};").as_bytes()), None);
    }

    /// What one search masks hides nothing from another: each looks at the text as it
    /// is. (Masked one after the other, each of these was written in clear.)
    #[test]
    fn what_one_search_masks_hides_nothing_from_another() {
        let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAqXk\nsecond/line\n\
                   -----END RSA PRIVATE KEY-----";
        // A token whose characters run into a key's first line.
        for lead in [
            "Authorization: Bearer ",
            "xoxb-1234567890",
            "eyJabcdefghijk.eyJabcdefghijk.",
        ] {
            let out = Redactor::default()
                .redact(&format!("{lead}{key}\nafter"))
                .into_owned();
            assert!(
                !out.contains("MIIE") && !out.contains("second/line"),
                "{out}"
            );
            assert!(out.ends_with("***\nafter"), "{out}");
        }
        // A known value that is a word of a key's first line.
        let r = Redactor::from_vars([("SSH_KEY_TYPE", "OPENSSH")]);
        let out = r.redact(
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n\
             -----END OPENSSH PRIVATE KEY-----\nOPENSSH\n",
        );
        assert_eq!(out, "***\n***\n");
        // A known value that is an authorization's scheme.
        let r = Redactor::from_vars([("TOKEN_TYPE", "Bearer")]);
        assert_eq!(
            r.redact("Authorization: Bearer abcdefgh12345"),
            "Authorization: *** ***"
        );
        // A declared value that holds a known one.
        let r = Redactor::from_vars([("API_TOKEN", "s3cr3tvalue")]);
        assert_eq!(
            r.redact("::add-mask::pre-s3cr3tvalue-post\nprint pre-s3cr3tvalue-post\n"),
            "::add-mask::***\nprint ***\n"
        ); // A pattern's mask does not hide an address that a value's mask makes whole
        // (its password held the value and a `/`).
        let mut r = Redactor::from_vars([("DB_PASSWORD", "/s3cr3tvalue/")]);
        r.add_pattern(Regex::new(r"@[a-z.]+\.internal").unwrap());
        assert_eq!(
            r.redact("postgres://admin:xx/s3cr3tvalue/yyPASSWORDTAIL@db.corp.internal/app"),
            "postgres://admin:******/app"
        );
    }

    /// A span of a text with some parts masked is the part of the text as printed it
    /// shows, a mask it begins or ends inside taken whole.
    #[test]
    fn spans_of_a_masked_text_map_back_to_the_text_as_printed() {
        let text = "aa SECRET bb LONGERSECRET cc";
        let (masked, map) = mask_spans(text, &mut [(3, 9), (13, 25)]);
        assert_eq!(masked, "aa *** bb *** cc");
        for ((start, end), raw) in [
            ((0, 2), "aa"),
            ((3, 6), "SECRET"),
            ((4, 5), "SECRET"),
            ((7, 9), "bb"),
            ((1, 8), "a SECRET b"),
            ((5, 12), "SECRET bb LONGERSECRET"),
            ((10, 13), "LONGERSECRET"),
            ((14, 16), "cc"),
            ((0, 16), text),
        ] {
            let (a, b) = map.to_raw((start, end));
            assert_eq!(&text[a..b], raw, "{:?}", &masked[start..end]);
        }
    }

    /// Tokens that touch, or sit inside another shape, are each found: every shape is
    /// searched on its own, and a search goes on from inside the match before.
    #[test]
    fn tokens_that_touch_or_nest_are_each_masked() {
        let ghp = format!("ghp_{}", "a1B2c3D4e5".repeat(3) + "f6G7h8");
        let ghp2 = format!("ghp_{}", "ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210");
        let npm = format!("npm_{}", "k".repeat(33));
        let aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        for (text, want) in [
            // The same shape twice, glued.
            (format!("x {ghp}{ghp2} y"), "x *** y".to_owned()),
            // A token as an address's user name.
            (
                format!("https://{ghp}:x-oauth-basic@github.com/o/r"),
                "https://***:***@github.com/o/r".to_owned(),
            ),
            // A token whose characters run into the next shape's first word.
            (
                "sk_live_abcdefghijklmnopAuthorization: Bearer SECRETTOKEN123".to_owned(),
                "***: Bearer ***".to_owned(),
            ),
            (
                "xoxb-1234567890-Authorization: Bearer SECRETTOKEN123".to_owned(),
                "***: Bearer ***".to_owned(),
            ),
            (
                format!("{npm}aws_secret_access_key={aws}"),
                "***_secret_access_key=***".to_owned(),
            ),
            // A longer run of a token's characters than any real token: masked whole.
            (format!("{ghp}{}", "q".repeat(300)), "***".to_owned()),
        ] {
            assert_eq!(Redactor::default().redact(&text), want, "{text}");
        }
        // With a known value inside the first token (it broke the token's run in the
        // text as masked, before every search looked at the text as printed).
        let r = Redactor::from_vars([("API_TOKEN", "klmnopqr")]);
        let glued =
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789ghp_ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210";
        assert_eq!(r.redact(glued), "***");
        let r = Redactor::from_vars([("API_TOKEN", "abcdefghijklmnop")]);
        assert_eq!(
            r.redact("sk_live_abcdefghijklmnopAuthorization: Bearer SECRETTOKEN123"),
            "***: Bearer ***"
        );
    }

    /// What a mask makes whole is searched for again: a word's edge after a token, an
    /// address's password joined around a key or a pattern's match, a key's tail after
    /// a key. (Each of these was found by the redactor two builds before, which
    /// searched the text again with everything masked.)
    #[test]
    fn what_masks_make_whole_is_masked_too() {
        let aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlMTIz";
        let r = Redactor::from_vars([("API_TOKEN", "s3cr3tvalue")]);
        for (text, want) in [
            (
                "s3cr3tvalue\nAKIAIOSFODNN7EXAMPLEnpm_abcdefghijklmnopqrstuvwxyz0123456789"
                    .to_owned(),
                "***\n******",
            ),
            (
                "s3cr3tvalue AIzaSyA1234567890abcdefghijklmnopqrstuvAKIAIOSFODNN7EXAMPLE"
                    .to_owned(),
                "*** ******",
            ),
            (
                format!("s3cr3tvalue aws_secret_access_key={aws}{jwt}"),
                "*** aws_secret_access_key=******",
            ),
            (
                format!("s3cr3tvalue https://u:PWHEADaws_secret_access_key={aws}PWTAIL@host/x"),
                "*** https://u:***@host/x",
            ),
            (
                "s3cr3tvalue\n-----BEGIN RSA PRIVATE KEY-----\nAAA\n-----END RSA PRIVATE KEY-----\n\
                 tailOfSecondKey\n-----END RSA PRIVATE KEY-----\nafter"
                    .to_owned(),
                // (A tail is masked from the text's start.)
                "***\nafter",
            ),
        ] {
            assert_eq!(r.redact(&text), want, "{text}");
        }
        // A token running on into a JSON Web Token's first letters, where a value's
        // mask gives the token its word's edge.
        let r = Redactor::from_vars([("A_TOKEN", "sk_live_AAAAAAAAAAAAAAAA")]);
        assert_eq!(
            r.redact(
                "xoxb-BBBBBBBBBBsk_live_AAAAAAAAAAAAAAAAeyJhhhhhhhhhh.eyJPAYLOADSECRET.SIGNATURESECRET"
            ),
            "***"
        );
        // A key's tail that ends more than one kind of block's last line.
        assert_eq!(
            Redactor::default().redact(
                "-----END PGP PRIVATE KEY BLOCK-----SECRETBODY12\n-----END RSA PRIVATE KEY-----\nafter"
            ),
            "***\nafter"
        );
        let mut r = Redactor::default();
        r.add_pattern(Regex::new(r"vault:v1:[A-Za-z0-9+/=]+").unwrap());
        assert_eq!(
            r.redact("https://app:PWHEADvault:v1:abc/def==PWTAIL@db/x"),
            "https://app:***@db/x"
        );
    }

    /// A run of overlapping finds is one span, not one a byte.
    #[test]
    fn overlapping_finds_are_one_span() {
        let r = Redactor::from_vars([("API_TOKEN", "aaaaaaaa")]);
        let text = "a".repeat(100_000);
        let mut spans = Vec::new();
        r.value_spans(&text, &mut spans);
        assert_eq!(spans, [(0, text.len())]);
        let text = format!("::add-mask::abab\n{}", "ab".repeat(50_000));
        let mut spans = Vec::new();
        declared_spans(&text, &mut spans);
        assert_eq!(spans, [(12, 16), (17, text.len())]);
    }

    /// Known values that overlap in the text are masked together, whichever begins
    /// first; so is a declared value that overlaps itself.
    #[test]
    fn overlapping_values_are_masked_together() {
        let r = Redactor::from_vars([("API_TOKEN", "abcdefgh"), ("DB_PASSWORD", "ghijklmnopqrst")]);
        assert_eq!(r.redact("x abcdefghijklmnopqrst y"), "x *** y");
        assert_eq!(r.redact("x ghijklmnopqrst abcdefgh y"), "x *** *** y");
        let mut r = Redactor::default();
        r.add_declared("abab-abab");
        assert_eq!(r.redact("x abab-abab-abab y"), "x *** y");
    }

    /// A manifest's pattern too large for a DFA cannot say where it may be under way:
    /// the text counts as open from its start (an over-long line is held whole, and
    /// masked past what is held), never as closed.
    #[test]
    fn patterns_too_large_for_a_dfa_hold_the_text_open_from_its_start() {
        // (Its DFA has a state for each of the last 20 letters: 2^20 of them.)
        let large = r"[ab]*a[ab]{20}";
        assert!(Openings::new(&[large]).is_none());
        let mut r = Redactor::default();
        r.add_pattern(Regex::new(large).unwrap());
        assert_eq!(r.open_from(b"nothing like it here"), Some(0));
    }

    #[test]
    fn markers_where_no_shape_can_match_let_the_text_through() {
        let r = Redactor::default();
        for text in [
            "test tests::parse_ok ... ok (ghp_1234 is not a token) 0.01s\n",
            "Downloading https://files.pythonhosted.org/packages/ab/x.whl (123 kB)\n",
            "a secret of the trade, sk_live_test, AKIA in name only\n",
            "xoxo-hugs, eyJhbGciOiJIUzI1NiJ9 alone, pypi-package, PRIVATE KEY notes\n",
        ] {
            assert!(r.leaves(text), "{text}");
            assert!(matches!(r.redact(text), Cow::Borrowed(_)), "{text}");
        }
        for text in [
            "::add-mask::abc\n",
            "-----END RSA PRIVATE KEY-----\n",
            "see https://user:pw@host/\n",
        ] {
            assert!(!r.leaves(text), "{text}");
        }
        // The manifest's own patterns are tried on every text.
        let mut r = Redactor::default();
        r.add_pattern(Regex::new("session=[0-9a-f]{8}").unwrap());
        assert!(!r.leaves("nothing here"));
    }
}

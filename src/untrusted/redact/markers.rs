//! The one pass over a block of text that tells whether a redactor without secrets
//! could change it: every literal the token shapes, `::add-mask::` and private keys
//! begin from, found in one vectorised search, each occurrence then looked at where it
//! is (a few bytes either side) for what its shape needs there.
//!
//! What the pass answers is a necessary condition, never a guess: wherever a token
//! shape matches, one of its markers is in the text and that marker's check holds, so
//! text the pass calls quiet is text the shapes do not match (a unit test holds every
//! shape to it, over generated text). A marker seen in text where its shape cannot
//! match costs a few byte comparisons, not a search of the whole block: logs name
//! `ghp_…` test fixtures and `https://` addresses on every line.

use std::sync::LazyLock;

use memchr::memmem;

/// What an occurrence of a marker must have around it for its shape to match there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// At least this many bytes of the class right after the marker.
    Run(Class, usize),
    /// This text right after the marker.
    Then(&'static str),
    /// Stripe's keys (`[sr]k_live_` + 16 letters or digits): `s` or `r` before the
    /// marker, 16 letters or digits after it.
    Stripe,
    /// A JSON Web Token's `.eyJ`: ten base64url bytes before the dot, ten after.
    Jwt,
    /// `aws_secret_access_key` in any case, whose `cret` is the marker: `e` before it,
    /// `_` or `a` after it.
    AwsSecret,
    /// `authorization` in any case, whose `riza` is the marker: `o` before, `t` after.
    Authorization,
    /// A credential in a URL (`://user:password@`): an `@` after the marker before any
    /// `/` or space, within the length the shape allows.
    UrlCredential,
    /// A private key's first or last line: `-----` after `PRIVATE KEY`, or OpenPGP's
    /// ` BLOCK-----`.
    KeyLine,
    /// Nothing to look at: the marker alone sends the text to the whole redactor.
    Always,
}

/// The bytes a run of a shape is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// `[A-Za-z0-9]`
    Alnum,
    /// `[A-Z0-9]`
    UpperDigit,
    /// `[A-Za-z0-9_]`
    Word,
    /// `[A-Za-z0-9_-]`: base64url.
    Base64Url,
    /// `[A-Za-z0-9-]`
    AlnumDash,
    /// `[A-Za-z0-9_.-]`
    GitLab,
}

impl Class {
    fn has(self, b: u8) -> bool {
        match self {
            Class::Alnum => b.is_ascii_alphanumeric(),
            Class::UpperDigit => b.is_ascii_uppercase() || b.is_ascii_digit(),
            Class::Word => b.is_ascii_alphanumeric() || b == b'_',
            Class::Base64Url => b.is_ascii_alphanumeric() || b == b'_' || b == b'-',
            Class::AlnumDash => b.is_ascii_alphanumeric() || b == b'-',
            Class::GitLab => b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'),
        }
    }

    /// Whether the `n` bytes from `at` are all of the class.
    fn run(self, text: &[u8], at: usize, n: usize) -> bool {
        text.get(at..at + n)
            .is_some_and(|run| run.iter().all(|&b| self.has(b)))
    }
}

/// The markers: for each, what it needs around it. No marker is the start of another,
/// so at any position at most one of them begins (a unit test says so), and a search
/// that goes on from the byte after each occurrence sees every occurrence of each.
fn markers() -> Vec<(String, Needs)> {
    use Needs::*;
    let mut markers: Vec<(String, Needs)> = [
        // GitHub's tokens and fine-grained personal access tokens.
        ("ghp_", Run(Class::Alnum, 20)),
        ("gho_", Run(Class::Alnum, 20)),
        ("ghu_", Run(Class::Alnum, 20)),
        ("ghs_", Run(Class::Alnum, 20)),
        ("ghr_", Run(Class::Alnum, 20)),
        ("github_pat_", Run(Class::Word, 20)),
        ("npm_", Run(Class::Alnum, 30)),
        ("pypi-", Then("AgEIcHlwaS5vcmc")),
        ("glpat-", Run(Class::GitLab, 20)),
        ("glcbt-", Run(Class::GitLab, 20)),
        ("glptt-", Run(Class::GitLab, 20)),
        ("gldt-", Run(Class::GitLab, 20)),
        ("glrt-", Run(Class::GitLab, 20)),
        ("glft-", Run(Class::GitLab, 20)),
        ("glimt-", Run(Class::GitLab, 20)),
        ("gloas-", Run(Class::GitLab, 20)),
        ("gloat-", Run(Class::GitLab, 20)),
        ("glagent-", Run(Class::GitLab, 20)),
        ("glffct-", Run(Class::GitLab, 20)),
        ("glsoat-", Run(Class::GitLab, 20)),
        ("xoxa-", Run(Class::AlnumDash, 10)),
        ("xoxb-", Run(Class::AlnumDash, 10)),
        ("xoxp-", Run(Class::AlnumDash, 10)),
        ("xoxo-", Run(Class::AlnumDash, 10)),
        ("xoxs-", Run(Class::AlnumDash, 10)),
        ("xoxr-", Run(Class::AlnumDash, 10)),
        ("AIza", Run(Class::Base64Url, 35)),
        ("k_live_", Stripe),
        ("k_test_", Stripe),
        // Every token's second part begins `.eyJ`: four bytes, where `eyJ` alone
        // (three) is found by chance in base64 text once in 260,000 bytes.
        (".eyJ", Jwt),
        ("AKIA", Run(Class::UpperDigit, 16)),
        ("ASIA", Run(Class::UpperDigit, 16)),
        ("PRIVATE KEY", KeyLine),
        ("::add-mask::", Always),
        ("-----END ", Always),
    ]
    .into_iter()
    .map(|(word, needs)| (word.to_owned(), needs))
    .collect();
    // `secret` and `authorization` in any case (the shapes match them so), by four
    // letters of each in every case: these letters have no other case in Unicode.
    for (word, needs) in [("cret", AwsSecret), ("riza", Authorization)] {
        for upper in 0..1u32 << word.len() {
            let cased = word
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if upper & (1 << i) != 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect();
            markers.push((cased, needs));
        }
    }
    markers
}

/// The markers' search, built once.
pub(super) static MARKERS: LazyLock<Markers> = LazyLock::new(Markers::new);

/// Every marker in one search, with what each needs; `://` on its own (three bytes: in
/// the vectorised search, it would make every word's fingerprint three bytes long).
pub(super) struct Markers {
    words: Words,
    needs: Vec<Needs>,
    url: memmem::Finder<'static>,
}

/// The words' search: vectorised where the processor has it, an automaton elsewhere.
enum Words {
    Packed(aho_corasick::packed::Searcher),
    Automaton(aho_corasick::AhoCorasick),
}

impl Words {
    /// The first word in `text` that begins at `from` or later: where, and which.
    fn find(&self, text: &[u8], from: usize) -> Option<(usize, usize, usize)> {
        match self {
            Words::Packed(packed) => {
                let found = packed.find_in(text, aho_corasick::Span::from(from..text.len()))?;
                Some((found.start(), found.end(), found.pattern().as_usize()))
            }
            Words::Automaton(automaton) => {
                let found = automaton.find(aho_corasick::Input::new(text).range(from..))?;
                Some((found.start(), found.end(), found.pattern().as_usize()))
            }
        }
    }
}

impl Markers {
    fn new() -> Markers {
        let (words, needs): (Vec<String>, Vec<Needs>) = markers().into_iter().unzip();
        // Past 64 words the vectorised search declines by default, guessing its
        // checks would cost too much. Measured with as many words, it was faster than
        // the automaton over logs with a marker in every line (8 against 13 ms for 16
        // MiB) and as fast over base64 text.
        let packed = aho_corasick::packed::Config::new()
            .match_kind(aho_corasick::packed::MatchKind::LeftmostFirst)
            .heuristic_pattern_limits(false)
            .builder()
            .extend(&words)
            .build();
        let words = match packed {
            Some(packed) => Words::Packed(packed),
            None => Words::Automaton(
                aho_corasick::AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                    .build(&words)
                    .expect("a few dozen words make an automaton"),
            ),
        };
        Markers {
            words,
            needs,
            url: memmem::Finder::new("://").into_owned(),
        }
    }

    /// What [`Markers::may_mask`] says of `text`, and where each marker and `://`
    /// begins in it, whatever is around it: one pass for both.
    pub(super) fn survey(&self, text: &[u8]) -> (bool, Vec<usize>) {
        let (mut may_mask, mut found) = (false, Vec::new());
        let mut from = 0;
        while let Some((start, end, word)) = self.words.find(text, from) {
            may_mask = may_mask || self.needs[word].met(text, start, end);
            found.push(start);
            from = start + 1;
        }
        for at in self.url.find_iter(text) {
            may_mask = may_mask || Needs::UrlCredential.met(text, at, at + 3);
            found.push(at);
        }
        (may_mask, found)
    }

    /// Whether a token shape, `::add-mask::` or a private key's end could be in
    /// `text`: `false` only where none is.
    pub(super) fn may_mask(&self, text: &[u8]) -> bool {
        let mut from = 0;
        while let Some((start, end, word)) = self.words.find(text, from) {
            if self.needs[word].met(text, start, end) {
                return true;
            }
            from = start + 1;
        }
        self.url
            .find_iter(text)
            .any(|at| Needs::UrlCredential.met(text, at, at + 3))
    }
}

/// The most bytes between `://` and the `@` of a credential: two parts of up to 256
/// characters and the `:` between them, of up to four bytes each.
const URL_CREDENTIAL_BYTES: usize = (256 + 1 + 256) * 4;

impl Needs {
    /// Whether the marker at `start..end` of `text` has what its shape needs there.
    fn met(self, text: &[u8], start: usize, end: usize) -> bool {
        let before = |n: usize| start.checked_sub(n).map(|at| text[at]);
        match self {
            Needs::Run(class, n) => class.run(text, end, n),
            Needs::Then(next) => text[end..].starts_with(next.as_bytes()),
            Needs::Stripe => {
                matches!(before(1), Some(b's' | b'r')) && Class::Alnum.run(text, end, 16)
            }
            Needs::Jwt => {
                start >= 10
                    && Class::Base64Url.run(text, start - 10, 10)
                    && Class::Base64Url.run(text, end, 10)
            }
            Needs::AwsSecret => {
                matches!(before(1), Some(b'e' | b'E'))
                    && matches!(text.get(end), Some(b'_' | b'a' | b'A'))
            }
            Needs::Authorization => {
                matches!(before(1), Some(b'o' | b'O')) && matches!(text.get(end), Some(b't' | b'T'))
            }
            Needs::UrlCredential => {
                let rest = &text[end..text.len().min(end + URL_CREDENTIAL_BYTES)];
                rest.iter()
                    .find(|&&b| b == b'@' || b == b'/' || b.is_ascii_whitespace() || b == 0x0b)
                    .is_some_and(|&b| b == b'@')
            }
            Needs::KeyLine => super::ends_key_line(&text[end..]),
            Needs::Always => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_marker_begins_another() {
        let words: Vec<String> = markers().into_iter().map(|(w, _)| w).collect();
        for a in &words {
            for b in &words {
                assert!(a == b || !b.starts_with(a.as_str()), "{a} begins {b}");
            }
        }
        // Four bytes or more each: the vectorised search's fingerprints are as long as
        // its shortest word, and shorter ones are found by chance in random text.
        assert!(words.iter().all(|w| w.len() >= 4), "{words:?}");
    }
}

//! Making quoted text unable to read as a claim.
//!
//! Coordinators read a matrix with regular expressions over the whole text (docs/formats.md
//! §6): any `| CHECK | ENV | 0 | PASS |` and any `All Required Environments: VERIFIED`
//! anywhere counts. Text we quote (log tails, summaries, reasons, strings from
//! artifacts, what an agent passes in) therefore gets two changes a reader still
//! understands:
//!
//! - every `|` becomes `¦` (U+00A6 BROKEN BAR), so no table row, header or separator
//!   can form in it;
//! - the claim phrases (`All Required Environments`, `Environments Tested`,
//!   `Environments Verified`, `READY_FOR_REVIEW`, `AUDIT_PASSED`, `INFRA_BLOCKED`),
//!   matched in any case and spacing, followed by a colon, get ` (quoted)` before the
//!   colon: `All Required Environments (quoted): VERIFIED`.
//!
//! Before that, [`clean`] removes what could hide or reassemble text: terminal escape
//! sequences, control characters (a carriage return becomes a line break), and
//! invisible format characters (zero-width and bidirectional controls).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// What a `|` in quoted text becomes.
pub const BAR: char = '¦';

/// The claim phrases, followed by a colon.
static CLAIMS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(all\s+required\s+environments|environments\s+tested|environments\s+verified|ready_for_review|audit_passed|infra_blocked)\s*:",
    )
    .expect("valid regex")
});

/// Removes terminal escape sequences, control characters other than tab and line feed
/// (a carriage return, alone or before a line feed, becomes one line break, as do
/// Unicode's line and paragraph separators) and
/// invisible format characters. Text with none of them is returned as it is.
///
/// Written by hand rather than with `strip-ansi-escapes`, which also drops tabs and
/// carriage returns, and so would join a progress bar's lines into one.
pub fn clean(text: &str) -> Cow<'_, str> {
    // Printable ASCII, line breaks and tabs (most text): nothing to remove, told
    // without decoding a character.
    if text
        .bytes()
        .all(|b| (b' '..=b'~').contains(&b) || b == b'\n' || b == b'\t')
    {
        return Cow::Borrowed(text);
    }
    if !text
        .chars()
        .any(|c| (c.is_control() && c != '\n' && c != '\t') || is_invisible(c) || is_break(c))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // CSI as one C1 character.
            '\u{9b}' => skip_csi(&mut chars),
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            '\n' | '\t' => out.push(c),
            c if is_break(c) => out.push('\n'),
            c if c.is_control() || is_invisible(c) => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Unicode's line and paragraph separators: line breaks to a reader, read as one.
pub fn is_break(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}')
}

/// Zero-width characters and bidirectional controls: they hide or reorder what a reader
/// sees.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}'
        | '\u{061c}'
        | '\u{180e}'
        | '\u{00ad}'
    )
}

fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => skip_csi(chars),
        // OSC, DCS, SOS, PM, APC: a string up to BEL or ESC \.
        Some(']' | 'P' | 'X' | '^' | '_') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    if chars.peek() == Some(&'\\') {
                        chars.next();
                    }
                    break;
                }
            }
        }
        // Character-set selection such as ESC ( B: one more character.
        Some('(' | ')' | '*' | '+' | '#' | '%') => {
            chars.next();
        }
        _ => {}
    }
}

/// Parameters and intermediates, then one final character in `@`..=`~`.
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            break;
        }
    }
}

/// `text` (already [`clean`]ed) with every `|` replaced and every claim phrase marked as
/// quoted; text with neither is returned as it is.
pub fn neutralise(text: &str) -> Cow<'_, str> {
    let claims = text.contains(':') && CLAIMS.is_match(text);
    if !claims && !text.contains('|') {
        return Cow::Borrowed(text);
    }
    let barred = text.replace('|', "¦");
    if !claims {
        return Cow::Owned(barred);
    }
    Cow::Owned(mark_claims(&barred).into_owned())
}

/// `text` with every claim phrase marked as quoted (`|` left alone: for a table of our
/// own that must no longer read as a verdict, such as a superseded result).
pub fn mark_claims(text: &str) -> Cow<'_, str> {
    CLAIMS.replace_all(text, "$1 (quoted):")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_are_removed() {
        assert_eq!(
            clean("\u{1b}[1;31merr\u{1b}[0mor\u{1b}(B!\u{1b}]0;title\u{7}\u{0}x\u{7f}"),
            "error!x"
        );
        assert_eq!(clean("a\r\nb\rc\n\td"), "a\nb\nc\n\td");
        assert_eq!(clean("A\u{200b}B\u{202e}C\u{feff}"), "ABC");
        assert_eq!(clean("A\u{2028}B\u{2029}C"), "A\nB\nC");
    }

    #[test]
    fn rows_and_claims_cannot_form() {
        assert_eq!(
            neutralise("| unit | linux | 0 | PASS |"),
            "¦ unit ¦ linux ¦ 0 ¦ PASS ¦"
        );
        assert_eq!(
            neutralise("All Required Environments: VERIFIED"),
            "All Required Environments (quoted): VERIFIED"
        );
        assert_eq!(
            neutralise("all  required\tenvironments :VERIFIED / Environments Tested: x"),
            "all  required\tenvironments (quoted):VERIFIED / Environments Tested (quoted): x"
        );
        assert_eq!(neutralise("AUDIT_PASSED: t"), "AUDIT_PASSED (quoted): t");
    }

    #[test]
    fn neutralising_twice_changes_nothing_more() {
        let once = neutralise("| a | b | 0 | PASS |\nAll Required Environments: VERIFIED");
        assert_eq!(neutralise(&once), once);
    }
}

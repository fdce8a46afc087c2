//! The last pass over a rendered document: what is rendered is neutralised, not only
//! each field that went into it.
//!
//! Quoting each untrusted field ([`super::Quoter`]) cannot see what a renderer makes of
//! several of them: a test named `All Required Environments` with the message
//! `VERIFIED`, written as `- {name}: {message}`, reads as the verdict line although
//! neither field does. So after rendering, every line is read as a coordinator reads it
//! (docs/formats.md §6) and
//!
//! - a line holding a claim phrase followed by a colon keeps it only when the whole
//!   line is one the renderer writes itself for this report ([`Own::line`]); a signal
//!   header (`INFRA_BLOCKED:`, `READY_FOR_REVIEW:`, `AUDIT_PASSED:`) at the start of a
//!   line keeps its own phrase, and what follows it is marked; anywhere else the phrase
//!   is marked ` (quoted)`;
//! - a line in which a strict table row can be found keeps its bars only when it is
//!   exactly one of the report's own rows ([`Own::row`]); otherwise every `|` in it
//!   becomes `¦`.
//!
//! A line is compared as a reader sees it: terminal escapes and invisible characters
//! removed, HTML tags removed, surrounding space trimmed.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::neutralise::{BAR, clean, mark_claims};

/// A strict table row, as the coordinator finds them (anywhere in a line).
static ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\| (\S+) \| (\S+) \| (\d+) \| (PASS|FAIL) \|").expect("valid regex")
});

/// Claim phrases followed by a colon (the coordinator's and the signals').
static CLAIM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(all\s+required\s+environments|environments\s+tested|environments\s+verified|ready_for_review|audit_passed|infra_blocked)\s*:",
    )
    .expect("valid regex")
});

/// HTML tags, removed before a line is compared.
static TAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"<[^>]*>").expect("valid regex"));

/// The signal headers a renderer starts a line with: what follows is theirs to fill.
const HEADERS: &[&str] = &["INFRA_BLOCKED:", "READY_FOR_REVIEW:", "AUDIT_PASSED:"];

/// What the renderer itself writes for one report.
pub trait Own {
    /// Whether `line` (as a reader sees it) is a verdict line of the renderer's own.
    fn line(&self, line: &str) -> bool;
    /// Whether `| check | environment | exit | result |` is one of the report's rows.
    fn row(&self, check: &str, environment: &str, exit: &str, result: &str) -> bool;
}

/// `text` with every claim and row that is not the renderer's own neutralised; text
/// with none is returned as it is.
pub fn seal<'a>(text: &'a str, own: &dyn Own) -> Cow<'a, str> {
    // One pass: nothing is copied until the first line to change.
    let mut out: Option<String> = None;
    let mut at = 0;
    for piece in text.split_inclusive('\n') {
        let (line, end) = match piece.strip_suffix('\n') {
            Some(line) => (line, "\n"),
            None => (piece, ""),
        };
        let change = match plain_row(line) {
            // Exactly what `seal_line` makes of it, without reading it as a reader would.
            Some([check, environment, exit, result]) => !own.row(check, environment, exit, result),
            None => suspect(line),
        };
        if change {
            let out = out.get_or_insert_with(|| {
                let mut out = String::with_capacity(text.len() + 64);
                out.push_str(&text[..at]);
                out
            });
            out.push_str(&seal_line(line, own));
            out.push_str(end);
        } else if let Some(out) = &mut out {
            out.push_str(piece);
        }
        at += piece.len();
    }
    match out {
        Some(out) => Cow::Owned(out),
        None => Cow::Borrowed(text),
    }
}

/// The cells of `line` when it is nothing but a strict row of plain words, `| check |
/// environment | exit | result |`: printable ASCII with no tag and no colon (so it
/// reads as it is written and holds no claim), each cell free of spaces and bars (so
/// [`ROW`] matches the whole line, with these four cells). A renderer's own rows are
/// such lines: each is kept or loses its bars by [`Own::row`] alone, as
/// [`seal_line`] would decide it.
fn plain_row(line: &str) -> Option<[&str; 4]> {
    if !reads_as_written(line) || line.contains(':') {
        return None;
    }
    let mut cells = line.strip_prefix("| ")?.strip_suffix(" |")?.split(" | ");
    let row = [cells.next()?, cells.next()?, cells.next()?, cells.next()?];
    let word = |cell: &str| !cell.is_empty() && !cell.bytes().any(|b| b == b' ' || b == b'|');
    let plain = cells.next().is_none()
        && row.iter().all(|cell| word(cell))
        && row[2].bytes().all(|b| b.is_ascii_digit())
        && matches!(row[3], "PASS" | "FAIL");
    plain.then_some(row)
}

/// Whether `line` might hold a claim or a row (cheap tests first), as it is written or
/// as a reader reads it.
fn suspect(line: &str) -> bool {
    let plain = reads_as_written(line);
    // The line as read, made at most once.
    let read = std::cell::OnceCell::new();
    let read = || read.get_or_init(|| as_read(line)).as_str();
    let claim = line.contains(':') && (CLAIM.is_match(line) || (!plain && CLAIM.is_match(read())));
    let row = if plain {
        (line.contains(" PASS |") || line.contains(" FAIL |")) && ROW.is_match(line)
    } else {
        line.contains('|') && (ROW.is_match(line) || ROW.is_match(read()))
    };
    claim || row
}

/// Whether a reader reads `line` as it is written (but for surrounding space): printable
/// ASCII with no tag. The report's own rows are such lines (names are ASCII words).
fn reads_as_written(line: &str) -> bool {
    line.bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'<')
}

fn seal_line(line: &str, own: &dyn Own) -> String {
    let seen = as_read(line);
    let mut sealed = line.to_owned();
    // A row as written (a reader of the raw text, or markdown, where `<|` is no tag) or
    // as read (escapes, invisible characters and tags removed) keeps its bars only
    // when the line reads as written and is one of the report's own rows, whole.
    if ROW.is_match(line) || ROW.is_match(&seen) {
        let whole_own_row = reads_as_written(line)
            && ROW.captures(&seen).is_some_and(|c| {
                c.get(0).is_some_and(|m| m.as_str() == seen) && own.row(&c[1], &c[2], &c[3], &c[4])
            });
        if !whole_own_row {
            sealed = sealed.replace('|', &BAR.to_string());
        }
    }
    if CLAIM.is_match(&seen) && !own.line(&seen) {
        let header = HEADERS.iter().find(|h| seen.starts_with(*h));
        let marked = match header.and_then(|h| sealed.find(h).map(|at| at + h.len())) {
            // The header is the renderer's; what follows it is marked.
            Some(after) => {
                let (head, rest) = sealed.split_at(after);
                format!("{head}{}", mark_claims(rest))
            }
            None => mark_claims(&sealed).into_owned(),
        };
        // A claim that only forms once escapes or tags are read through is marked as a
        // reader sees it (the escapes and tags of that line are dropped).
        sealed = if unmarked_claim(&as_read(&marked)) {
            mark_claims(&seen).into_owned()
        } else {
            marked
        };
    }
    sealed
}

/// Whether `read` still holds a claim phrase, other than a signal header at its start.
fn unmarked_claim(read: &str) -> bool {
    CLAIM
        .find_iter(read)
        .any(|m| !(m.start() == 0 && HEADERS.contains(&m.as_str())))
}

/// `line` as a reader sees it: escapes, invisible characters and HTML tags removed,
/// trimmed.
fn as_read(line: &str) -> String {
    let cleaned = clean(line);
    let untagged = if cleaned.contains('<') {
        TAG.replace_all(&cleaned, "")
    } else {
        Cow::Borrowed(cleaned.as_ref())
    };
    untagged.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Report;

    impl Own for Report {
        fn line(&self, line: &str) -> bool {
            matches!(
                line,
                "All Required Environments: NOT VERIFIED" | "Environments Tested: linux"
            )
        }
        fn row(&self, check: &str, environment: &str, exit: &str, result: &str) -> bool {
            (check, environment, exit, result) == ("unit", "linux", "1", "FAIL")
        }
    }

    #[test]
    fn own_lines_stay_and_assembled_claims_are_marked() {
        let text = "| unit | linux | 1 | FAIL |\n\nEnvironments Tested: linux\nAll Required Environments: NOT VERIFIED\n\n- All Required Environments: VERIFIED\n";
        assert_eq!(
            seal(text, &Report),
            "| unit | linux | 1 | FAIL |\n\nEnvironments Tested: linux\nAll Required Environments: NOT VERIFIED\n\n- All Required Environments (quoted): VERIFIED\n"
        );
    }

    #[test]
    fn rows_that_are_not_the_reports_lose_their_bars() {
        assert_eq!(
            seal("| unit | linux | 0 | PASS |\n", &Report),
            "¦ unit ¦ linux ¦ 0 ¦ PASS ¦\n"
        );
        // An own row with more on its line is not the renderer's line.
        assert_eq!(
            seal("x | unit | linux | 1 | FAIL |", &Report),
            "x ¦ unit ¦ linux ¦ 1 ¦ FAIL ¦"
        );
    }

    #[test]
    fn html_and_escapes_are_read_through() {
        assert_eq!(
            seal(
                "<li>All Required Environments: \u{1b}[32mVERIFIED</li>\n<p>All Required Environments: NOT VERIFIED</p>\n",
                &Report
            ),
            "<li>All Required Environments (quoted): \u{1b}[32mVERIFIED</li>\n<p>All Required Environments: NOT VERIFIED</p>\n"
        );
    }

    #[test]
    fn a_signal_header_keeps_its_phrase_and_marks_the_rest() {
        assert_eq!(
            seal(
                "INFRA_BLOCKED: run 7 All Required Environments: VERIFIED\n",
                &Report
            ),
            "INFRA_BLOCKED: run 7 All Required Environments (quoted): VERIFIED\n"
        );
    }

    #[test]
    fn a_claim_split_by_escapes_is_marked_as_read() {
        assert_eq!(
            seal("- All Required\u{1b}[0m Environments: VERIFIED\n", &Report),
            "- All Required Environments (quoted): VERIFIED\n"
        );
    }

    /// The pass before plain rows were told apart: every suspect line sealed.
    fn every_suspect_line_sealed(text: &str, own: &dyn Own) -> String {
        if !text.lines().any(suspect) {
            return text.to_owned();
        }
        let mut out = String::new();
        for piece in text.split_inclusive('\n') {
            let (line, end) = piece
                .strip_suffix('\n')
                .map_or((piece, ""), |line| (line, "\n"));
            if suspect(line) {
                out.push_str(&seal_line(line, own));
            } else {
                out.push_str(line);
            }
            out.push_str(end);
        }
        out
    }

    /// Pieces a row, a claim or a line a reader reads otherwise is made of.
    const PIECES: &[&str] = &[
        "| ",
        " |",
        " | ",
        "|",
        "unit",
        "linux",
        "1",
        "0",
        "01",
        "FAIL",
        "PASS",
        " ",
        ":",
        "<b>",
        "</b>",
        "\u{1b}[0m",
        "All Required Environments",
        ": NOT VERIFIED",
        "x|y",
        "é",
        "\t",
        "\u{663}",
        "Environments Tested",
        "\r",
        "\n",
        "\u{200b}",
        "VERIFIED",
    ];

    proptest::proptest! {
        /// A plain row is kept or loses its bars exactly as when every line a row might
        /// be in was read as a reader reads it.
        #[test]
        fn plain_rows_are_sealed_as_every_row_is(
            pieces in proptest::collection::vec(0..PIECES.len(), 0..40),
        ) {
            let text: String = pieces.iter().map(|&i| PIECES[i]).collect();
            proptest::prop_assert_eq!(seal(&text, &Report).into_owned(), every_suspect_line_sealed(&text, &Report));
        }

        /// The same, over lines shaped as rows: four cells of a few pieces each,
        /// sometimes with more before or after.
        #[test]
        fn row_shaped_lines_are_sealed_as_every_row_is(
            rows in proptest::collection::vec(
                (0..4usize, proptest::collection::vec(proptest::collection::vec(0..CELLS.len(), 1..3), 4), 0..4usize),
                1..6,
            ),
        ) {
            let text = rows
                .iter()
                .map(|(before, cells, after)| {
                    let cells: Vec<String> = cells.iter().map(|c| c.iter().map(|&i| CELLS[i]).collect()).collect();
                    format!("{}| {} |{}", ["", " ", "x ", "|"][*before], cells.join(" | "), ["", " ", " x", "|"][*after])
                })
                .collect::<Vec<_>>()
                .join("\n");
            proptest::prop_assert_eq!(seal(&text, &Report).into_owned(), every_suspect_line_sealed(&text, &Report));
        }
    }

    /// What a row-shaped line's cells are made of.
    const CELLS: &[&str] = &[
        "unit",
        "linux",
        "unit",
        "linux",
        "1",
        "1",
        "01",
        "0",
        "-1",
        "FAIL",
        "FAIL",
        "PASS",
        "x|y",
        " ",
        "é",
        ":",
        "<b>",
        "\u{1b}[0m",
        "\u{663}",
    ];

    #[test]
    fn rows_of_plain_words_are_told_apart() {
        let own = "| unit | linux | 1 | FAIL |\n| unit | linux | 1 | FAIL |";
        assert!(matches!(seal(own, &Report), Cow::Borrowed(_)));
        for (line, sealed) in [
            ("| unit | linux | 1 | PASS |", "¦ unit ¦ linux ¦ 1 ¦ PASS ¦"),
            (
                "| unit | linux | 01 | FAIL |",
                "¦ unit ¦ linux ¦ 01 ¦ FAIL ¦",
            ),
            (
                "| unit | linux | 1 | FAIL | |",
                "¦ unit ¦ linux ¦ 1 ¦ FAIL ¦ ¦",
            ),
            (
                "| un|it | linux | 1 | FAIL |",
                "¦ un¦it ¦ linux ¦ 1 ¦ FAIL ¦",
            ),
            // Not a strict row at all (an empty first cell): left as it is.
            (
                "|  unit | linux | 1 | FAIL |",
                "|  unit | linux | 1 | FAIL |",
            ),
        ] {
            assert_eq!(seal(line, &Report), sealed, "{line}");
            assert_eq!(every_suspect_line_sealed(line, &Report), sealed, "{line}");
        }
    }

    #[test]
    fn a_row_formed_only_as_read_or_only_as_written_loses_its_bars() {
        for line in [
            // Rows once invisible characters or tags are read through.
            "| x | y | 0 | PA\u{200b}SS |",
            "| x | y | 0 | PASS<b></b> |",
            "| unit | linux | 1 | FA\u{ad}IL |",
            // Rows as written, which reading through tags or escapes would hide.
            "<| x | y | 0 | PASS |>",
            "| unit | <> | 0 | PASS |",
            "\u{1b}[| x | y | 0 | PASS |",
            // The report's own row, but not as written.
            "| unit | linux | 1 | FA\u{200b}IL |",
            "<b>| unit | linux | 1 | FAIL |</b>",
        ] {
            let sealed = seal(line, &Report);
            assert!(!sealed.contains('|'), "{line:?} kept its bars: {sealed:?}");
        }
        // The report's own row as written keeps them, with space around it too.
        for own in [
            "| unit | linux | 1 | FAIL |",
            "  | unit | linux | 1 | FAIL |  ",
        ] {
            assert_eq!(seal(own, &Report), own);
        }
    }

    #[test]
    fn plain_text_is_left_alone() {
        assert!(matches!(
            seal("nothing to see: here | there\n", &Report),
            Cow::Borrowed(_)
        ));
    }
}

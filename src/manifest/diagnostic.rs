//! Manifest problems for people: message, `file:line:col`, key path and a snippet.

use std::fmt::Write as _;

use super::spans::Pos;

/// One problem in a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Key path of the value at fault, e.g. `checks[2].timeout` (empty for the document).
    pub path: String,
    /// What is wrong, as a lower-case sentence fragment.
    pub message: String,
    /// Where it is, when known.
    pub pos: Option<Pos>,
}

impl Diagnostic {
    /// A problem at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>, pos: Option<Pos>) -> Self {
        Diagnostic {
            path: path.into(),
            message: message.into(),
            pos,
        }
    }
}

/// Renders every problem with its snippet, rustc-style:
///
/// ```text
/// error: timeout must be greater than zero
///   --> verify-matrix.yml:7:14 (checks[0].timeout)
///    |
///  7 |     timeout: 0s
///    |              ^^
/// ```
pub fn render(file: &str, text: &str, diagnostics: &[Diagnostic]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for d in diagnostics {
        let _ = writeln!(out, "error: {}", d.message);
        let at = if d.path.is_empty() {
            String::new()
        } else {
            // A key may hold control characters (`"A\0B":`): show them escaped.
            let path: String = d
                .path
                .chars()
                .map(|c| {
                    if c.is_control() {
                        c.escape_default().to_string()
                    } else {
                        c.to_string()
                    }
                })
                .collect();
            format!(" ({path})")
        };
        match d.pos {
            Some(pos) if pos.line >= 1 && pos.line <= lines.len() => {
                let number = pos.line.to_string();
                let pad = " ".repeat(number.len());
                let _ = writeln!(out, "{pad}--> {file}:{}:{}{at}", pos.line, pos.col);
                let _ = writeln!(out, "{pad} |");
                let (source, start) = snippet(lines[pos.line - 1], pos.col.saturating_sub(1));
                let _ = writeln!(out, "{number} | {source}");
                let width = source.chars().count();
                let start = start.min(width);
                let len = pos.len.clamp(1, (width - start).max(1));
                let _ = writeln!(out, "{pad} | {}{}", " ".repeat(start), "^".repeat(len));
            }
            Some(pos) => {
                let _ = writeln!(out, " --> {file}:{}:{}{at}", pos.line, pos.col);
            }
            None => {
                let _ = writeln!(out, " --> {file}{at}");
            }
        }
        out.push('\n');
    }
    let count = diagnostics.len();
    let _ = writeln!(
        out,
        "error: `{file}` has {count} problem{}; nothing was run",
        if count == 1 { "" } else { "s" }
    );
    out
}

/// The widest snippet shown, in characters: a longer line is cut around the column.
const SNIPPET_CHARS: usize = 100;

/// The source line to show (tabs as spaces, cut to [`SNIPPET_CHARS`] around `col`, a
/// 0-based character column) and where `col` falls in it.
fn snippet(line: &str, col: usize) -> (String, usize) {
    let chars: Vec<char> = line
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    if chars.len() <= SNIPPET_CHARS {
        return (chars.into_iter().collect(), col);
    }
    let from = col.saturating_sub(SNIPPET_CHARS / 2).min(chars.len());
    let to = (from + SNIPPET_CHARS).min(chars.len());
    let mut shown = String::new();
    if from > 0 {
        shown.push('…');
    }
    shown.extend(&chars[from..to]);
    if to < chars.len() {
        shown.push('…');
    }
    (shown, col - from + usize::from(from > 0))
}

/// Rewrites serde's messages into the manifest's vocabulary ("key", not "field") and
/// adds a suggestion for a misspelt key or value.
pub fn humanize_serde_message(message: &str) -> String {
    // serde_json appends " at line L column C" for JSON input; positions come from spans.
    let message = match message.find(" at line ") {
        Some(i) => &message[..i],
        None => message,
    };
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (name, expected) = split_name_and_expected(rest);
        return with_suggestion(format!("unknown key `{name}`"), name, &expected);
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let (name, expected) = split_name_and_expected(rest);
        let list = expected.join(", ");
        return with_suggestion(
            format!("unknown value `{name}`; expected one of: {list}"),
            name,
            &expected,
        );
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        let name = rest.trim_end_matches('`');
        return format!("missing key `{name}`");
    }
    let message = message.replace("invalid type: ", "wrong type: found ");
    let message = message.replace("invalid value: ", "wrong value: found ");
    [
        ("expected i32", "expected a whole number"),
        ("expected u32", "expected a whole number, 0 or more"),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
        ("expected a sequence", "expected a list"),
        ("expected a map", "expected a mapping"),
    ]
    .iter()
    .fold(message, |m, (from, to)| m.replace(from, to))
}

fn split_name_and_expected(rest: &str) -> (&str, Vec<String>) {
    let name_end = rest.find('`').unwrap_or(rest.len());
    let name = &rest[..name_end];
    let expected = rest[name_end..]
        .split('`')
        .skip(2)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    (name, expected)
}

fn with_suggestion(message: String, name: &str, candidates: &[String]) -> String {
    match did_you_mean(name, candidates.iter().map(String::as_str)) {
        Some(best) => format!("{message} (did you mean `{best}`?)"),
        None => message,
    }
}

/// ` (did you mean `NAME`?)` when one of `candidates` is close to `name`, else nothing:
/// for messages about a name given on the command line.
pub fn suggestion<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    did_you_mean(name, candidates)
        .map_or_else(String::new, |best| format!(" (did you mean `{best}`?)"))
}

/// The candidate closest to `name`, when it is close enough to be a likely typo.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_field_becomes_unknown_key_with_suggestion() {
        let m = humanize_serde_message(
            "unknown field `timout`, expected one of `id`, `timeout`, `retries`",
        );
        assert_eq!(m, "unknown key `timout` (did you mean `timeout`?)");
    }

    #[test]
    fn unknown_variant_lists_the_choices() {
        let m = humanize_serde_message(
            "unknown variant `zsh`, expected one of `bash`, `sh`, `pwsh`, `cmd`, `none`",
        );
        assert_eq!(
            m,
            "unknown value `zsh`; expected one of: bash, sh, pwsh, cmd, none"
        );
    }

    #[test]
    fn render_points_at_the_column() {
        let text = "a: 1\nb:   oops\n";
        let d = Diagnostic::new(
            "b",
            "bad value",
            Some(Pos {
                line: 2,
                col: 6,
                len: 4,
            }),
        );
        let out = render("f.yml", text, &[d]);
        assert!(out.contains(" --> f.yml:2:6 (b)\n"), "{out}");
        assert!(out.contains("2 | b:   oops\n  |      ^^^^\n"), "{out}");
        assert!(out.ends_with("error: `f.yml` has 1 problem; nothing was run\n"));
    }
}

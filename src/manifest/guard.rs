//! Checks on a manifest's bytes before any parser sees them: a manifest comes from the
//! repository, so in a pull request it is as untrusted as the code.
//!
//! - at most [`MAX_MANIFEST_BYTES`], read no further;
//! - UTF-8, or an error at the first bad byte (offset, line and column);
//! - a UTF-8 byte-order mark is dropped;
//! - nesting at most [`MAX_NESTING`] deep, measured by a linear scan, so that a
//!   100,000-deep document is refused at once instead of after seconds of parsing.

use std::path::Path;

use super::diagnostic::Diagnostic;
use super::error::ManifestError;
use super::spans::Pos;

/// The largest manifest read (16 MiB): far beyond any real one.
pub const MAX_MANIFEST_BYTES: u64 = 16 * 1024 * 1024;

/// The deepest nesting of mappings and lists accepted; a real manifest needs about ten.
pub const MAX_NESTING: usize = 64;

/// Reads the manifest at `path`: bounded, UTF-8, without a byte-order mark.
pub fn read_text(path: &Path) -> Result<String, ManifestError> {
    let io = |source| ManifestError::Read {
        path: path.to_path_buf(),
        source,
    };
    // A regular file only: a FIFO would hold every command that loads the manifest.
    let bytes = crate::untrusted::read_regular(path, MAX_MANIFEST_BYTES)
        .map_err(io)?
        .ok_or_else(|| ManifestError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_MANIFEST_BYTES,
        })?;
    text_of(path, bytes)
}

/// `bytes` (read from `path`, or from a commit's copy of it) as text: UTF-8, or an
/// error at the first bad byte (offset, line and column).
pub fn text_of(path: &Path, bytes: Vec<u8>) -> Result<String, ManifestError> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let before = String::from_utf8_lossy(&e.as_bytes()[..offset]);
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            Err(ManifestError::NotUtf8 {
                path: path.to_path_buf(),
                offset,
                line,
                col,
            })
        }
    }
}

/// `text` without a leading UTF-8 byte-order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Refuses YAML nested deeper than [`MAX_NESTING`], pointing at where the limit is
/// passed. Block nesting is measured by indentation (and `- - ` runs), flow nesting by
/// brackets outside quotes and comments; block scalars (`|`, `>`) are skipped.
pub fn check_nesting(text: &str) -> Result<(), Diagnostic> {
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    let mut quote: Option<char> = None;
    let mut block_scalar_above: Option<usize> = None;
    for (number, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let content = &line[indent..];
        if let Some(above) = block_scalar_above {
            if content.trim().is_empty() || indent > above {
                continue;
            }
            block_scalar_above = None;
        }
        if quote.is_none() && flow == 0 {
            if content.is_empty() || content.starts_with('#') {
                continue;
            }
            block_levels(&mut indents, indent, content);
        }
        let mut previous = ' ';
        let mut escaped = false;
        // A `'` inside single quotes ends them unless another `'` follows (`''`).
        let mut closing = false;
        for (i, c) in line.char_indices() {
            if closing {
                closing = false;
                if c == '\'' {
                    previous = c;
                    continue;
                }
                quote = None;
            }
            if let Some(q) = quote {
                if escaped {
                    escaped = false;
                } else if q == '"' && c == '\\' {
                    escaped = true;
                } else if c == '"' && q == '"' {
                    quote = None;
                } else if c == '\'' && q == '\'' {
                    closing = true;
                }
                previous = c;
                continue;
            }
            let opens_quote = matches!(c, '"' | '\'')
                && (i == 0 || matches!(previous, ' ' | '\t' | '[' | '{' | ',' | ':' | '-'));
            match c {
                '#' if i == 0 || matches!(previous, ' ' | '\t') => break,
                _ if opens_quote => quote = Some(c),
                '[' | '{' if flow > 0 || token_start_at(line, i) => flow += 1,
                ']' | '}' if flow > 0 => flow -= 1,
                _ => {}
            }
            if indents.len() + flow > MAX_NESTING {
                return Err(too_deep(number + 1, line[..i].chars().count() + 1));
            }
            previous = c;
        }
        if closing {
            quote = None;
        }
        if indents.len() > MAX_NESTING {
            return Err(too_deep(number + 1, indent + 1));
        }
        if quote.is_none() && flow == 0 && opens_block_scalar(content) {
            block_scalar_above = Some(indent);
        }
    }
    Ok(())
}

/// The block levels open at a line indented by `indent` whose text is `content`: those
/// indented less stay, this one is added, and `- - - x` opens one more list per dash.
fn block_levels(indents: &mut Vec<usize>, indent: usize, content: &str) {
    while indents.last().is_some_and(|&i| i >= indent) {
        indents.pop();
    }
    indents.push(indent);
    let mut rest = content;
    let mut col = indent;
    while let Some(after) = rest.strip_prefix("- ") {
        let skipped = after.len() - after.trim_start().len();
        col += 2 + skipped;
        rest = after.trim_start();
        if rest.starts_with("- ") {
            indents.push(col);
        }
    }
}

/// Whether the `[` or `{` at byte `i` of `line` starts a value (after `key:`, `- `, or
/// at the start of the line), rather than sitting inside a plain scalar (`echo [x]`).
fn token_start_at(line: &str, i: usize) -> bool {
    let before = line[..i].trim_end();
    before.is_empty() || before.ends_with(':') || before.ends_with('-') || before.ends_with('?')
}

/// Whether a line ends in a block scalar indicator: `key: |`, `- >-`, `run: |2`.
fn opens_block_scalar(content: &str) -> bool {
    let code = match content.find(" #") {
        Some(i) => &content[..i],
        None => content,
    };
    let last = code.trim_end().rsplit([' ', '\t']).next().unwrap_or("");
    let mut chars = last.chars();
    let code = code.trim_end();
    matches!(chars.next(), Some('|' | '>'))
        && chars.all(|c| matches!(c, '-' | '+' | '1'..='9'))
        && (code == last
            || code.ends_with(&format!(": {last}"))
            || code.ends_with(&format!("- {last}")))
}

fn too_deep(line: usize, col: usize) -> Diagnostic {
    Diagnostic::new(
        "",
        format!("the manifest nests deeper than {MAX_NESTING} levels"),
        Some(Pos { line, col, len: 1 }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_manifests_are_shallow_enough() {
        let text = "version: 1\nenvironments:\n  - name: linux\n    detect: { os: linux, env: { CI: \"[\" } }\nchecks:\n  - id: a\n    run: |\n      if [ -f x ]; then echo {; fi\n      [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n  - id: b\n    run: echo [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n  - { id: c, run: 'echo ''[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['' }\n";
        assert_eq!(check_nesting(text), Ok(()));
    }

    #[test]
    fn deep_flow_and_block_nesting_are_refused_where_they_pass_the_limit() {
        let flow = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let err = check_nesting(&flow).unwrap_err();
        assert_eq!(err.pos.map(|p| (p.line, p.col)), Some((1, 67)));
        let block: String = (0..200).map(|i| format!("{}a:\n", " ".repeat(i))).collect();
        assert_eq!(check_nesting(&block).unwrap_err().pos.unwrap().line, 65);
        let dashes = format!("x:\n{}1\n", "- ".repeat(100));
        assert!(check_nesting(&dashes).is_err());
    }
}

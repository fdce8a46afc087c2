//! Making untrusted text safe for markdown, and reading log tails.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

/// Escapes text for a markdown table cell or line: no table breaks, no HTML, no code
/// spans, no `@mentions`.
pub fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' => out.push_str("\\`"),
            '*' | '[' | ']' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '@' => out.push_str("&#64;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A code fence longer than any run of backticks inside `content` (at least three).
pub fn fence_for(content: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// Resolves a result's `log_path` inside `root`; `None` for absolute paths or `..`.
pub fn resolve_log(root: &Path, log_path: &str) -> Option<PathBuf> {
    let relative = Path::new(log_path);
    let safe = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    safe.then(|| root.join(relative))
}

/// The last `max_lines` lines of the file, read from its end (at most `max_bytes`), so
/// a huge log is never loaded whole.
pub fn tail(path: &Path, max_lines: usize, max_bytes: u64) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(max_bytes);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.take(max_bytes).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if start > 0 && !lines.is_empty() {
        lines.remove(0); // a partial first line
    }
    let from = lines.len().saturating_sub(max_lines);
    Some(strip_ansi(&lines[from..].join("\n")))
}

/// Removes ANSI escape sequences (colours, cursor movement) from log text.
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // CSI: parameters and intermediates, then one final byte in @..~
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // Character-set selection such as ESC ( B: one more byte.
            Some('(' | ')') => {
                chars.next();
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markdown_specials() {
        assert_eq!(
            escape_markdown("a|b <x> `c` @me"),
            "a\\|b &lt;x&gt; \\`c\\` &#64;me"
        );
    }

    #[test]
    fn fence_is_longer_than_content_runs() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a ```` b"), "`````");
    }

    #[test]
    fn log_paths_stay_inside_the_root() {
        assert!(resolve_log(Path::new("out"), "logs/a/b.log").is_some());
        assert!(resolve_log(Path::new("out"), "../etc/passwd").is_none());
        assert!(resolve_log(Path::new("out"), "/etc/passwd").is_none());
    }

    #[test]
    fn strips_ansi() {
        assert_eq!(strip_ansi("\u{1b}[1;31merror\u{1b}[0m\u{1b}(B!"), "error!");
    }
}

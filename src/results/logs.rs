//! Reading check logs safely: paths kept inside their folder, tails read from the end of
//! the file (a 5 GB log is never loaded), ANSI escapes removed.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

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

//! Reading check logs safely: paths kept inside their folder, tails read from the end of
//! the file (a 5 GB log is never loaded), ANSI escapes removed.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The folder a report's log paths are relative to. A log path is resolved inside it with
/// every link followed, when it is a plain relative path (nothing absolute, no `..`) to
/// something that exists and stays inside the folder once resolved; never otherwise: a
/// report's log paths and the files beside it may come from anywhere, and a link among
/// them leading out (to a key, to `/proc/self/environ`) is never read. Each folder on
/// the paths' way is looked at once: a report's failed checks share a few folders.
#[derive(Debug)]
pub struct LogRoot {
    root: PathBuf,
    /// `root` resolved; `None` when it does not resolve (nothing is then inside).
    canonical: Option<PathBuf>,
    /// By a folder's path relative to the root: where it is, when it is a folder
    /// inside the root once its links are followed.
    folders: Mutex<HashMap<PathBuf, Option<PathBuf>>>,
}

impl LogRoot {
    /// The folder `root`, resolved once.
    pub fn new(root: &Path) -> LogRoot {
        LogRoot {
            root: root.to_path_buf(),
            canonical: std::fs::canonicalize(root).ok(),
            folders: Mutex::new(HashMap::new()),
        }
    }

    /// The folder as it was given.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where `log_path` is, inside this folder; `None` when it is not.
    pub fn resolve(&self, log_path: &str) -> Option<PathBuf> {
        let root = self.canonical.as_deref()?;
        // A plain relative path: its names, nothing absolute and no `..` among them.
        let mut names = Vec::new();
        for component in Path::new(log_path).components() {
            match component {
                Component::Normal(name) => names.push(name),
                Component::CurDir => {}
                _ => return None,
            }
        }
        let file = names.pop()?;
        let mut at = root.to_path_buf();
        let mut key = PathBuf::new();
        let mut folders = self.folders.lock().unwrap_or_else(PoisonError::into_inner);
        for name in names {
            key.push(name);
            let found = match folders.get(&key) {
                Some(known) => known.clone(),
                None => {
                    let found = inside(root, at.join(name))
                        .filter(|(_, kind)| kind.is_dir())
                        .map(|(path, _)| path);
                    folders.insert(key.clone(), found.clone());
                    found
                }
            };
            at = found?;
        }
        drop(folders);
        inside(root, at.join(file)).map(|(path, _)| path)
    }

    /// The last `max_lines` lines of the log at `log_path`, as [`tail`] reads them,
    /// when it resolves inside this folder and the file opened is still inside it (a
    /// folder or file swapped for a link leading out, between the two, is not read).
    pub fn tail(&self, log_path: &str, max_lines: usize, max_bytes: u64) -> Option<String> {
        let root = self.canonical.as_deref()?;
        let path = self.resolve(log_path)?;
        let (file, meta) = crate::untrusted::open_regular(&path).ok()?;
        if !opened_inside(root, &path, &file) {
            return None;
        }
        tail_of(file, meta.len(), max_lines, max_bytes)
    }
}

/// Whether `file`, opened by `path`, is a file inside `root` (canonical): where the
/// system says the open file is (Linux, where `/proc` is mounted), or else the path
/// resolved again and found to be the same file (Unix) or inside `root` (Windows).
#[cfg(unix)]
fn opened_inside(root: &Path, path: &Path, file: &std::fs::File) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::fd::AsRawFd;
        if let Ok(opened) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            return opened.starts_with(root);
        }
    }
    resolved_again_inside(root, path, file)
}

/// Whether `path`, resolved again, is inside `root` and is the file `file` (the same
/// device and inode): a path swapped for a link since `file` was opened is not.
#[cfg(unix)]
fn resolved_again_inside(root: &Path, path: &Path, file: &std::fs::File) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(opened) = file.metadata() else {
        return false;
    };
    std::fs::canonicalize(path).is_ok_and(|real| {
        real.starts_with(root)
            && std::fs::metadata(&real)
                .is_ok_and(|m| m.dev() == opened.dev() && m.ino() == opened.ino())
    })
}

#[cfg(windows)]
fn opened_inside(root: &Path, path: &Path, _file: &std::fs::File) -> bool {
    std::fs::canonicalize(path).is_ok_and(|real| real.starts_with(root))
}

impl Clone for LogRoot {
    /// The same folder, its folders looked at again.
    fn clone(&self) -> LogRoot {
        LogRoot {
            root: self.root.clone(),
            canonical: self.canonical.clone(),
            folders: Mutex::new(HashMap::new()),
        }
    }
}

/// `path`, whose folder is `root` or resolved inside it: itself when it exists and is
/// not a link, else where the link leads when that is inside `root`; with what it is.
fn inside(root: &Path, path: PathBuf) -> Option<(PathBuf, std::fs::FileType)> {
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.file_type().is_symlink() {
        return Some((path, meta.file_type()));
    }
    let target = std::fs::canonicalize(&path).ok()?;
    let kind = std::fs::metadata(&target).ok()?.file_type();
    target.starts_with(root).then_some((target, kind))
}

/// The last `max_lines` lines of the file, read from its end (at most `max_bytes`), so
/// a huge log is never loaded whole; `None` for anything but a regular file (a FIFO an
/// artifact holds is never waited on).
pub fn tail(path: &Path, max_lines: usize, max_bytes: u64) -> Option<String> {
    let (file, meta) = crate::untrusted::open_regular(path).ok()?;
    tail_of(file, meta.len(), max_lines, max_bytes)
}

/// [`tail`] of a file opened, `len` bytes long.
fn tail_of(file: std::fs::File, len: u64, max_lines: usize, max_bytes: u64) -> Option<String> {
    let (start, bytes) = last_bytes(file, len, 0, max_bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if start > 0 && !lines.is_empty() {
        lines.remove(0); // a partial first line
    }
    let from = lines.len().saturating_sub(max_lines);
    Some(strip_ansi(&lines[from..].join("\n")))
}

/// The last `max_bytes` of a file opened, `len` bytes long, from `from` on at the
/// earliest, and where they begin.
pub(crate) fn last_bytes(
    mut file: std::fs::File,
    len: u64,
    from: u64,
    max_bytes: u64,
) -> Option<(u64, Vec<u8>)> {
    let start = from.max(len.saturating_sub(max_bytes));
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.take(max_bytes).read_to_end(&mut bytes).ok()?;
    Some((start, bytes))
}

/// Removes ANSI escape sequences (colours, cursor movement) from log text.
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    strip_ansi_into(text, &mut out);
    out
}

/// [`strip_ansi`], appending to `out` (a buffer used again and again).
pub fn strip_ansi_into(mut text: &str, out: &mut String) {
    // The text between escapes goes over whole.
    // The escape is one byte, never inside a character's.
    while let Some(at) = memchr::memchr(0x1b, text.as_bytes()) {
        out.push_str(&text[..at]);
        text = &text[at..];
        let mut chars = text.chars();
        chars.next();
        skip_escape(&mut chars);
        text = chars.as_str();
    }
    out.push_str(text);
}

/// Skips what follows an escape's first character.
fn skip_escape(chars: &mut std::str::Chars<'_>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_paths_stay_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("out");
        std::fs::create_dir_all(root.join("logs/a")).unwrap();
        std::fs::write(root.join("logs/a/b.log"), "inside").unwrap();
        std::fs::write(dir.path().join("secret"), "outside").unwrap();
        let inside = LogRoot::new(&root).resolve("logs/a/b.log").unwrap();
        assert_eq!(std::fs::read_to_string(inside).unwrap(), "inside");
        assert!(LogRoot::new(&root).resolve("./logs/a/b.log").is_some());
        for refused in ["../secret", "logs/../../secret", "", "logs/a/missing.log"] {
            assert_eq!(LogRoot::new(&root).resolve(refused), None, "{refused:?}");
        }
        let absolute = dir.path().join("secret");
        assert_eq!(
            LogRoot::new(&root).resolve(absolute.to_str().unwrap()),
            None
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            // A link leading out, a folder linked out, a loop: never resolved.
            symlink(dir.path().join("secret"), root.join("logs/out.log")).unwrap();
            symlink(dir.path(), root.join("logs/up")).unwrap();
            symlink("loop", root.join("logs/loop")).unwrap();
            for refused in ["logs/out.log", "logs/up/secret", "logs/loop"] {
                assert_eq!(LogRoot::new(&root).resolve(refused), None, "{refused:?}");
            }
            // A link that stays inside resolves to what it leads to.
            symlink("a/b.log", root.join("logs/near.log")).unwrap();
            let near = LogRoot::new(&root).resolve("logs/near.log").unwrap();
            assert_eq!(std::fs::read_to_string(near).unwrap(), "inside");
            // One root resolving many paths answers each as alone, folders looked at once.
            let many = LogRoot::new(&root);
            for _ in 0..2 {
                assert!(many.resolve("logs/a/b.log").is_some());
                assert!(many.resolve("logs/near.log").is_some());
                assert_eq!(many.resolve("logs/up/secret"), None);
                assert_eq!(many.resolve("logs/out.log"), None);
                assert_eq!(many.resolve("logs/a/b.log/x"), None);
            }
            // A folder linked inside is followed; one linked out is not, by a root that
            // has already looked at the folders beside it.
            symlink("a", root.join("logs/alias")).unwrap();
            assert!(many.resolve("logs/alias/b.log").is_some());
            symlink(dir.path(), root.join("logs/b")).unwrap();
            assert_eq!(many.resolve("logs/b/secret"), None);
            // A log swapped for a link leading out after it was resolved (a race with
            // whatever changes the folder) is not read; the log itself is.
            let swapped = LogRoot::new(&root);
            let log = root.join("logs/a/b.log");
            assert_eq!(
                swapped.tail("logs/a/b.log", 5, 1024).as_deref(),
                Some("inside")
            );
            assert_eq!(
                swapped.resolve("logs/a/b.log"),
                Some(std::fs::canonicalize(&log).unwrap())
            );
            std::fs::rename(&log, root.join("logs/a/kept.log")).unwrap();
            symlink(dir.path().join("secret"), &log).unwrap();
            let opened = crate::untrusted::open_regular(&log).unwrap().0;
            let canonical = std::fs::canonicalize(&root).unwrap();
            assert!(!opened_inside(&canonical, &log, &opened));
            assert!(!resolved_again_inside(&canonical, &log, &opened));
            // The file opened before the swap is where it was, by either way of telling.
            let kept = root.join("logs/a/kept.log");
            let before = crate::untrusted::open_regular(&kept).unwrap().0;
            assert!(opened_inside(&canonical, &kept, &before));
            assert!(resolved_again_inside(&canonical, &kept, &before));
            // A path inside that leads to another file than the one opened is not it.
            let other = root.join("logs/a/other.log");
            std::fs::write(&other, "inside too").unwrap();
            assert!(!resolved_again_inside(&canonical, &other, &before));
            std::fs::remove_file(&other).unwrap();
            assert_eq!(swapped.tail("logs/a/b.log", 5, 1024), None);
            std::fs::remove_file(&log).unwrap();
            std::fs::rename(root.join("logs/a/kept.log"), &log).unwrap();
            // A root that is itself a link is the folder it leads to.
            symlink(&root, dir.path().join("linked")).unwrap();
            assert!(
                LogRoot::new(&dir.path().join("linked"))
                    .resolve("logs/a/b.log")
                    .is_some()
            );
        }
    }

    /// Stripping into a buffer is stripping character by character, as it was done.
    #[test]
    fn stripping_into_a_buffer_is_stripping_by_character() {
        fn by_character(text: &str) -> String {
            let mut out = String::new();
            let mut chars = text.chars();
            while let Some(c) = chars.next() {
                if c == '\u{1b}' {
                    skip_escape(&mut chars);
                } else {
                    out.push(c);
                }
            }
            out
        }
        let pieces = [
            "a", "\u{1b}", "[", "1;3", "m", "(", ")", "B", "é", "ℹ", "~", "\n", " ",
        ];
        let mut seed = 7u64;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..(seed % 12) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            let mut out = String::from("kept:");
            strip_ansi_into(&text, &mut out);
            assert_eq!(out, format!("kept:{}", by_character(&text)), "{text:?}");
            seed = seed.wrapping_add(1);
        }
    }

    #[test]
    fn strips_ansi() {
        assert_eq!(strip_ansi("\u{1b}[1;31merror\u{1b}[0m\u{1b}(B!"), "error!");
    }
}

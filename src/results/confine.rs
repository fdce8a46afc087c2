//! Confining log paths to the folder their result file came from.
//!
//! A result file names each check's log by a path relative to its own folder. The path
//! is kept only when it resolves inside that folder: no `..`, nothing absolute, and no
//! symbolic link leading out. Resolving each path with `canonicalize` costs a system
//! call per component per log, which at GitHub's largest matrices (256 environments ×
//! 1,000 checks) was most of a merge; instead each folder on the way is listed once and
//! a path whose every component is a plain folder and whose last one is a plain file is
//! inside by construction. Anything else (a symbolic link, a name the listing lacks, a
//! folder that cannot be listed) is resolved the slow, exact way.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// What a folder listing says an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    File,
    Folder,
    /// A symbolic link, or anything the listing cannot type: resolved exactly.
    Other,
}

/// The folder one result file came from, and the listings read in it so far.
pub struct Confined {
    dir: PathBuf,
    /// `dir`, canonical; `None` when it cannot be resolved (nothing is then inside).
    canonical: Option<PathBuf>,
    /// Listings of `dir` and its subfolders, by their path relative to `dir` (empty
    /// for `dir` itself); `None` when the folder could not be listed. The names are an
    /// artifact's, so they are hashed with the standard library's keyed hash: names
    /// made to collide cannot make a listing slow.
    listings: HashMap<PathBuf, Option<Arc<Listing>>>,
    /// The key of the folder being looked in, rebuilt for each path in one buffer: a
    /// matrix's thousands of logs are looked up with no allocation each.
    at: PathBuf,
    /// The text before the last `/` of the last path whose every folder was a plain
    /// one listed, and that folder's key: the next path with the same text before its
    /// last `/` is in the same folder (the same text is the same components), and
    /// only its name is looked up.
    last: Option<(String, Arc<Listing>)>,
}

/// A folder's entries by name.
type Listing = HashMap<OsString, Entry>;

impl Confined {
    /// The folder `dir`.
    pub fn new(dir: &Path) -> Confined {
        Confined {
            dir: dir.to_path_buf(),
            canonical: std::fs::canonicalize(dir).ok(),
            listings: HashMap::new(),
            at: PathBuf::new(),
            last: None,
        }
    }

    /// The canonical folder, when it resolves.
    pub fn canonical(&self) -> Option<&Path> {
        self.canonical.as_deref()
    }

    /// Whether `relative` (a log path as a result file names it) is a plain relative
    /// path that resolves to something inside the folder.
    pub fn contains(&mut self, relative: &str) -> bool {
        // A result's logs are mostly in one folder: the next log of the last one's
        // folder is a plain file of its listing, or is looked at whole.
        if let Some((folder, name)) = relative.rsplit_once('/')
            && plain_name(name)
            && let Some((last, listing)) = &self.last
            && last == folder
            && listing.get(OsStr::new(name)) == Some(&Entry::File)
        {
            return true;
        }
        let path = Path::new(relative);
        let plain = !relative.is_empty()
            && path
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !plain || self.canonical.is_none() {
            return false;
        }
        let Some(listing) = self.listed(path) else {
            return self.resolves_inside(path);
        };
        if let Some((folder, name)) = relative.rsplit_once('/')
            && plain_name(name)
            && self.last.as_ref().is_none_or(|(last, _)| last != folder)
        {
            // The folder `listed` found the name in, every folder on its way plain:
            // the same text before a name is the same folder.
            self.last = Some((folder.to_owned(), listing));
        }
        true
    }

    /// The listing of the folder holding `path` when `path` is a plain file reached
    /// through plain folders (inside by construction); `None` when only an exact
    /// resolution can tell.
    fn listed(&mut self, path: &Path) -> Option<Arc<Listing>> {
        let mut at = std::mem::take(&mut self.at);
        at.clear();
        let mut names = path.components().filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        });
        let mut name = names.next()?;
        let answer = loop {
            let Some(listing) = self.listing(&at) else {
                break None;
            };
            match (listing.get(name), names.next()) {
                (Some(Entry::File), None) => break Some(listing),
                (Some(Entry::Folder), Some(next)) => {
                    at.push(name);
                    name = next;
                }
                _ => break None,
            }
        };
        self.at = at;
        answer
    }

    /// The listing of `folder` (relative to the root), read the first time it is asked
    /// for; `None` when it could not be listed.
    fn listing(&mut self, folder: &Path) -> Option<Arc<Listing>> {
        // Looked up before any key is made: a matrix's logs are a few folders' files.
        if let Some(listing) = self.listings.get(folder) {
            return listing.clone();
        }
        let listing = list(&self.dir.join(folder)).map(Arc::new);
        self.listings.insert(folder.to_path_buf(), listing.clone());
        listing
    }

    /// The exact answer: the path resolved, links followed, and compared with the root.
    fn resolves_inside(&self, path: &Path) -> bool {
        self.canonical.as_ref().is_some_and(|root| {
            std::fs::canonicalize(self.dir.join(path)).is_ok_and(|target| target.starts_with(root))
        })
    }
}

/// A name that is one plain component wherever it stands after a `/`: not empty, not
/// `.` or `..`, and holding no other separator (`\\` is one on Windows).
fn plain_name(name: &str) -> bool {
    !matches!(name, "" | "." | "..") && !name.contains('\\')
}

/// A folder's entries with their types as the listing gives them (no `stat` per entry).
fn list(folder: &Path) -> Option<Listing> {
    let entries = std::fs::read_dir(folder).ok()?;
    let mut listing = HashMap::new();
    for entry in entries {
        let entry = entry.ok()?;
        let kind = match entry.file_type() {
            Ok(t) if t.is_file() => Entry::File,
            Ok(t) if t.is_dir() => Entry::Folder,
            _ => Entry::Other,
        };
        listing.insert(entry.file_name(), kind);
    }
    Some(listing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_files_inside_links_out_and_odd_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("art");
        let outside = tmp.path().join("secret.txt");
        std::fs::write(&outside, "s").unwrap();
        std::fs::create_dir_all(root.join("logs/a")).unwrap();
        std::fs::write(root.join("logs/a/x.log"), "x").unwrap();
        std::fs::create_dir_all(root.join("inner")).unwrap();
        std::fs::write(root.join("inner/y.log"), "y").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&outside, root.join("logs/a/out.log")).unwrap();
            std::os::unix::fs::symlink(root.join("inner/y.log"), root.join("logs/a/in.log"))
                .unwrap();
            std::os::unix::fs::symlink(tmp.path(), root.join("up")).unwrap();
        }
        let mut confined = Confined::new(&root);
        assert!(confined.contains("logs/a/x.log"));
        assert!(confined.contains("./logs/./a/x.log"));
        assert!(!confined.contains("logs/a/missing.log"));
        assert!(!confined.contains("../secret.txt"));
        assert!(!confined.contains("logs/../../secret.txt"));
        assert!(!confined.contains(outside.to_str().unwrap()));
        assert!(!confined.contains(""));
        assert!(
            confined.contains("logs/a"),
            "a folder inside resolves inside"
        );
        #[cfg(unix)]
        {
            assert!(!confined.contains("logs/a/out.log"), "a link leading out");
            assert!(confined.contains("logs/a/in.log"), "a link staying inside");
            assert!(
                !confined.contains("up/secret.txt"),
                "a folder link leading out"
            );
            assert!(confined.contains("up/art/inner/y.log"), "out and back in");
        }
        assert!(!Confined::new(&tmp.path().join("nowhere")).contains("x.log"));
    }

    /// After a plain file, the next name of the same folder is looked up in its
    /// listing alone; anything but a plain file there is answered the whole way.
    #[test]
    fn the_folder_of_the_last_log_answers_only_for_its_plain_files() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("art");
        std::fs::create_dir_all(root.join("logs/a/sub")).unwrap();
        std::fs::write(root.join("logs/a/x.log"), "x").unwrap();
        std::fs::write(root.join("logs/a/y.log"), "y").unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "s").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(tmp.path().join("secret.txt"), root.join("logs/a/out.log"))
            .unwrap();
        let mut confined = Confined::new(&root);
        assert!(confined.contains("logs/a/x.log"));
        assert!(confined.last.as_ref().is_some_and(|(f, _)| f == "logs/a"));
        assert!(confined.contains("logs/a/y.log"));
        for outside in [
            "logs/a/..",
            "logs/a/missing.log",
            "logs/a/../../../secret.txt",
        ] {
            assert!(!confined.contains(outside), "{outside}");
        }
        for folder in ["logs/a/.", "logs/a/", "logs/a/sub"] {
            assert!(
                confined.contains(folder),
                "a folder inside, resolved whole: {folder}"
            );
        }
        #[cfg(unix)]
        assert!(!confined.contains("logs/a/out.log"), "a link leading out");
        // Written after the folder was listed: found the exact way.
        std::fs::write(root.join("logs/a/z.log"), "z").unwrap();
        assert!(confined.contains("logs/a/z.log"));
        assert!(confined.contains("logs/a/x.log"));
    }
}

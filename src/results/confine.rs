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
//!
//! The walk that finds the result files lists every folder of the artifacts already: it
//! keeps the listings of the large ones ([`Prelisted`]), and each is taken, once, by the
//! first result whose logs are in it. A listing is what the folder held when it was
//! listed, as it always was: a name gone since is still taken as a plain file (its log
//! then reads as missing), and a name the listing lacks is resolved exactly.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What a folder listing says an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    File,
    Folder,
    /// A symbolic link: resolved exactly.
    Link,
    /// Anything else, or what the listing cannot type: resolved exactly.
    Other,
}

/// The folder one result file came from, and the listings read in it so far.
pub struct Confined {
    dir: PathBuf,
    /// `dir`, canonical; `None` when it cannot be resolved (nothing is then inside).
    canonical: Option<PathBuf>,
    /// Listings of `dir` and its subfolders, by their path relative to `dir` (empty
    /// for `dir` itself); `None` when the folder could not be listed. The paths are an
    /// artifact's, so they are hashed with the standard library's keyed hash: names
    /// made to collide cannot make a lookup slow.
    listings: HashMap<PathBuf, Option<Arc<Listing>>>,
    /// Listings made as the artifacts were walked, taken rather than listed again.
    listed: Option<Arc<Prelisted>>,
    /// The key of the folder being looked in, rebuilt for each path in one buffer: a
    /// matrix's thousands of logs are looked up with no allocation each.
    at: PathBuf,
    /// The text before the last `/` of the last path whose every folder was a plain
    /// one listed, and that folder's key: the next path with the same text before its
    /// last `/` is in the same folder (the same text is the same components), and
    /// only its name is looked up.
    last: Option<(String, Arc<Listing>)>,
}

/// A folder's entries, sorted by name: one buffer of names, found by a binary search
/// (the names are an artifact's: there is no hash for them to be made to collide in).
/// A folder of a thousand logs is some 13 KB.
#[derive(Debug, Default)]
pub struct Listing {
    /// The names, one after the other, in order.
    names: Vec<u8>,
    /// Where each name ends in `names`.
    ends: Vec<u32>,
    kinds: Vec<Entry>,
    /// Whether every entry of the folder was read (a listing that is not is never
    /// kept for another to use).
    whole: bool,
}

impl Listing {
    /// What `name` is in the folder, if it is there.
    fn get(&self, name: &OsStr) -> Option<Entry> {
        let name = name.as_encoded_bytes();
        let (mut low, mut high) = (0, self.ends.len());
        while low < high {
            let mid = low + (high - low) / 2;
            match self.name(mid).cmp(name) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return self.kinds.get(mid).copied(),
            }
        }
        None
    }

    fn name(&self, i: usize) -> &[u8] {
        let start = match i.checked_sub(1) {
            Some(before) => self.ends[before] as usize,
            None => 0,
        };
        &self.names[start..self.ends[i] as usize]
    }

    /// How many entries it has.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The bytes it holds.
    fn bytes(&self) -> usize {
        std::mem::size_of::<Listing>()
            + self.names.capacity()
            + self.ends.capacity() * std::mem::size_of::<u32>()
            + self.kinds.capacity()
    }
}

/// Listings of large folders made as the artifacts were walked (a folder of a result's
/// logs, mostly), by the folder's path as the walk reached it, each taken by the one
/// [`Confined`] that asks for it: the thousands of logs beside a result are listed once,
/// not once to find the results and again to confine their paths.
#[derive(Debug, Default)]
pub struct Prelisted(Mutex<Kept>);

/// The listings kept, and the bytes they hold.
#[derive(Debug, Default)]
struct Kept {
    listings: HashMap<PathBuf, Listing>,
    bytes: usize,
}

/// The fewest entries a folder has for the walk to keep its listing: smaller ones are
/// listed again at little cost.
pub const PRELISTED_FROM: usize = 64;

/// The most bytes the walk keeps listings in, in all (a thousand logs' folder is some
/// 13 KB, so some two thousand of them; names an artifact makes long count as long):
/// past it, folders are listed again.
const PRELISTED_BYTES: usize = 32 << 20;

/// The most bytes one folder's listing may take to be kept (a hundred thousand logs'),
/// and the most the walk holds while it lists one: a larger folder is listed again.
const PRELISTED_FOLDER_BYTES: usize = 4 << 20;

impl Prelisted {
    /// Keeps `listings` (each whole) while the total stays within 32 MiB.
    pub fn keep(&self, listings: impl IntoIterator<Item = (PathBuf, Listing)>) {
        self.keep_within(listings, PRELISTED_BYTES);
    }

    fn keep_within(&self, listings: impl IntoIterator<Item = (PathBuf, Listing)>, at_most: usize) {
        let mut kept = self.kept();
        for (folder, listing) in listings {
            let bytes = listing.bytes();
            if listing.whole && kept.bytes + bytes <= at_most {
                kept.bytes += bytes;
                if let Some(before) = kept.listings.insert(folder, listing) {
                    kept.bytes -= before.bytes();
                }
            }
        }
    }

    /// The bytes the next folder's listing may take to be kept.
    pub fn room(&self) -> usize {
        PRELISTED_BYTES
            .saturating_sub(self.kept().bytes)
            .min(PRELISTED_FOLDER_BYTES)
    }

    /// The listing of `folder`, taken: the next to ask lists it again.
    fn take(&self, folder: &Path) -> Option<Listing> {
        let mut kept = self.kept();
        let listing = kept.listings.remove(folder)?;
        kept.bytes -= listing.bytes();
        Some(listing)
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One set of listings is only itself (a [`Held`](super::merge::Held) result compares
/// equal to itself read again).
impl PartialEq for Prelisted {
    fn eq(&self, other: &Prelisted) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Confined {
    /// The folder `dir`, taking the listings of `listed` rather than listing again.
    pub fn with(dir: &Path, listed: Option<Arc<Prelisted>>) -> Confined {
        Confined {
            dir: dir.to_path_buf(),
            canonical: std::fs::canonicalize(dir).ok(),
            listings: HashMap::new(),
            listed,
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
            && listing.get(OsStr::new(name)) == Some(Entry::File)
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
        let path = self.dir.join(folder);
        let listing = match self.listed.as_ref().and_then(|l| l.take(&path)) {
            Some(walked) => Some(walked),
            None => list(&path).filter(|l| l.whole),
        }
        .map(Arc::new);
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

/// A folder's entries with their types as the listing gives them (no `stat` per
/// entry); `None` when it cannot be listed. An entry that cannot be read is left out,
/// and the listing is then not `whole`.
pub fn list(folder: &Path) -> Option<Listing> {
    list_each(folder, usize::MAX, |_, _, _| {})
}

/// [`list`], each entry also given to `each` as it is read; past `at_most` bytes of
/// names (and their places), no more are kept, and the listing is not `whole`.
pub fn list_each(
    folder: &Path,
    at_most: usize,
    mut each: impl FnMut(&std::fs::DirEntry, &OsStr, Entry),
) -> Option<Listing> {
    let mut whole = true;
    // The names one after the other as they are read, and where each is.
    let mut read: Vec<u8> = Vec::new();
    let mut places: Vec<(usize, usize, Entry)> = Vec::new();
    for entry in std::fs::read_dir(folder).ok()? {
        let Ok(entry) = entry else {
            whole = false;
            continue;
        };
        let kind = match entry.file_type() {
            Ok(t) if t.is_file() => Entry::File,
            Ok(t) if t.is_dir() => Entry::Folder,
            Ok(t) if t.is_symlink() => Entry::Link,
            _ => Entry::Other,
        };
        let name = entry.file_name();
        each(&entry, &name, kind);
        let bytes = name.as_encoded_bytes();
        let held = read.len() + bytes.len() + (places.len() + 1) * PLACE_BYTES;
        // A folder's names past 4 GiB cannot be placed in a listing either.
        if !whole || held > at_most || u32::try_from(read.len() + bytes.len()).is_err() {
            whole = false;
            continue;
        }
        places.push((read.len(), bytes.len(), kind));
        read.extend_from_slice(bytes);
    }
    let name = |&(at, len, _): &(usize, usize, Entry)| &read[at..at + len];
    places.sort_unstable_by(|a, b| name(a).cmp(name(b)));
    let mut listing = Listing {
        names: Vec::with_capacity(read.len()),
        ends: Vec::with_capacity(places.len()),
        kinds: Vec::with_capacity(places.len()),
        whole,
    };
    for place in &places {
        listing.names.extend_from_slice(name(place));
        // Within 4 GiB, as each name was checked to be when it was read.
        listing
            .ends
            .push(u32::try_from(listing.names.len()).unwrap_or(u32::MAX));
        listing.kinds.push(place.2);
    }
    Some(listing)
}

/// What each entry's place costs while a folder is listed.
const PLACE_BYTES: usize = std::mem::size_of::<(usize, usize, Entry)>();

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
        let mut confined = Confined::with(&root, None);
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
        assert!(!Confined::with(&tmp.path().join("nowhere"), None).contains("x.log"));
    }

    /// A folder the walk listed is taken from its listing once: the next `Confined` to
    /// ask lists it again. A link in it is resolved exactly, as in a folder listed
    /// anew, and the walk keeps no more entries than it may.
    #[test]
    fn a_folder_the_walk_listed_is_taken_once_and_its_links_still_resolved() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("art");
        let logs = root.join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "s").unwrap();
        for name in ["a.log", "b.log", "gone.log"] {
            std::fs::write(logs.join(name), name).unwrap();
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(tmp.path().join("secret.txt"), logs.join("out.log")).unwrap();
        let walked = Arc::new(Prelisted::default());
        walked.keep([(logs.clone(), list(&logs).unwrap())]);
        // Gone since the walk: the walk's listing answers, and only once.
        std::fs::remove_file(logs.join("gone.log")).unwrap();
        let mut first = Confined::with(&root, Some(walked.clone()));
        assert!(first.contains("logs/a.log"));
        assert!(
            first.contains("logs/gone.log"),
            "the walk's listing is used"
        );
        #[cfg(unix)]
        assert!(!first.contains("logs/out.log"), "a link leading out");
        assert!(!first.contains("logs/missing.log"));
        let mut second = Confined::with(&root, Some(walked.clone()));
        assert!(second.contains("logs/b.log"));
        assert!(!second.contains("logs/gone.log"), "listed again");

        // Within the most entries kept, in all; a listing not read whole is never kept.
        let kept = Prelisted::default();
        let (one, two) = (list(&logs).unwrap(), list(&logs).unwrap());
        let (room, other) = (one.bytes() + 1, root.join("other"));
        kept.keep_within([(logs.clone(), one), (other.clone(), two)], room);
        assert!(kept.take(&logs).is_some() && kept.take(&other).is_none());
        let mut partial = list(&logs).unwrap();
        partial.whole = false;
        kept.keep([(logs.clone(), partial)]);
        assert!(kept.take(&logs).is_none());

        // A folder listed within fewer bytes than its names is not listed whole, and
        // every entry is still given to the walk.
        let mut seen = 0;
        let short = list_each(&logs, 40, |_, _, _| seen += 1).unwrap();
        assert!(
            !short.whole && short.len() < seen,
            "{} of {seen}",
            short.len()
        );
        assert_eq!(seen, list(&logs).unwrap().len());
    }

    /// Every name of a listing is found as what it is, and no other name is.
    #[test]
    fn a_listing_finds_each_name_it_holds_and_no_other() {
        let tmp = tempfile::tempdir().unwrap();
        let mut names: Vec<String> = (0..300)
            .map(|i| format!("c{}.log", i * 7919 % 1000))
            .collect();
        names.extend(["é.log", "a", "ab", "b", "ℹ"].map(String::from));
        for name in &names {
            std::fs::write(tmp.path().join(name), "x").unwrap();
        }
        std::fs::create_dir(tmp.path().join("sub")).unwrap();
        let listing = list(tmp.path()).unwrap();
        assert!(listing.whole);
        assert_eq!(listing.len(), names.len() + 1);
        for name in &names {
            assert_eq!(listing.get(OsStr::new(name)), Some(Entry::File), "{name}");
        }
        assert_eq!(listing.get(OsStr::new("sub")), Some(Entry::Folder));
        for absent in ["", "c1000.log", "c.log", "aa", "é", "sub/", "zzz", "\0"] {
            assert_eq!(listing.get(OsStr::new(absent)), None, "{absent}");
        }
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
        let mut confined = Confined::with(&root, None);
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

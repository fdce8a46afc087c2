//! Where a failing test is in the code: the report's own `file` and `line`, else the
//! first frame of its stack trace that points at a file of the repository (Python's
//! innermost frame, since its traces read outermost first; .NET's `in File.cs:line
//! 12`; a path written on another machine, Windows' `C:\…` too, found by its end).
//! Dependencies' files (`node_modules`, `site-packages`, the cargo registry, Go's module
//! cache) are passed over.

use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

use compact_str::CompactString;
use regex::Regex;

/// `File "/repo/tests/test_x.py", line 12` (Python tracebacks).
static PYTHON_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"File "([^"\n]{1,500})", line (\d{1,9})"#).expect("valid regex"));

/// `at Ns.Class.Method() in C:\src\Tests\ClassTests.cs:line 27` (.NET stack traces,
/// whose paths may hold spaces).
static DOTNET_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|\s)in ((?:[A-Za-z]:)?[^:\n]{1,500}\.[A-Za-z0-9]{1,10}):line (\d{1,9})")
        .expect("valid regex")
});

/// `src/lib.rs:42:5`, `tests/test_x.py:12: AssertionError`, `(/repo/sum.test.js:5:17)`,
/// `at file:///repo/a.test.ts:3:9`, `sum_test.go:12:`.
static FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:file://)?((?:[A-Za-z]:)?[^\s:()\[\]<>'`]{1,500}\.[A-Za-z0-9]{1,10}):(\d{1,9})")
        .expect("valid regex")
});

/// Parts of a path that mark a dependency's file, not the repository's.
const NOT_OURS: &[&str] = &[
    "node_modules",
    "site-packages",
    "dist-packages",
    ".cargo",
    ".rustup",
    "pkg/mod",
    "/rustc/",
    "internal/process",
];

/// The most trailing parts of a foreign absolute path tried as a repository path.
const MAX_SUFFIX_PARTS: usize = 6;

/// The most candidate frames looked at for one failure.
const MAX_CANDIDATES: usize = 16;

/// Finds failures' places relative to the manifest's folder.
#[derive(Debug, Clone)]
pub struct Locator {
    /// The manifest's folder, canonical.
    root: PathBuf,
    /// The check's folder.
    cwd: PathBuf,
}

impl Locator {
    pub fn new(root: &Path, cwd: &Path) -> Locator {
        Locator {
            root: root.to_path_buf(),
            cwd: std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf()),
        }
    }

    /// `text` (a test's suite or name) with the repository's absolute path taken out
    /// (`/home/runner/work/r/r/test/a.test.js` is `test/a.test.js`): a test is named
    /// the same wherever the repository was checked out.
    pub fn unrooted<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        let Some(root) = self.root.to_str().filter(|r| r.len() > 1) else {
            return text.into();
        };
        let root = root.trim_end_matches(['/', '\\']);
        if !text.contains(root) {
            return text.into();
        }
        let mut out = text.to_owned();
        for separator in ['/', '\\'] {
            out = out.replace(&format!("file://{root}{separator}"), "");
            out = out.replace(&format!("{root}{separator}"), "");
        }
        out.into()
    }

    /// The file (relative to the manifest's folder, `/`-separated) and line of a
    /// failure: the report's `file`, at the line of the failure's first frame in that
    /// file (where the assertion failed: the line a report gives is often the test's
    /// declaration — pytest's, PHPUnit's, GoogleTest's), else at the report's `line`;
    /// else the first frame in `texts` that names a file of the repository. `package` is
    /// a Go import path, whose last parts name the folder of the file names Go prints.
    pub fn locate(
        &self,
        file: Option<&str>,
        line: Option<u32>,
        texts: &[&str],
        package: Option<&str>,
    ) -> Option<(CompactString, Option<u32>)> {
        if let Some(file) = file
            && let Some(found) = self.resolve(file, package)
        {
            let failed_at = Path::new(file)
                .file_name()
                .and_then(|name| name.to_str())
                .and_then(|name| {
                    texts
                        .iter()
                        .flat_map(|t| FRAME.captures_iter(t).take(MAX_CANDIDATES))
                        .find(|c| c[1].ends_with(name))
                        .and_then(|c| c[2].parse().ok())
                });
            let line = failed_at.or(line);
            return Some((found, line));
        }
        for text in texts {
            let mut frames: Vec<(String, u32)> = PYTHON_FRAME
                .captures_iter(text)
                .take(64)
                .filter_map(|c| Some((c[1].to_owned(), c[2].parse().ok()?)))
                .collect();
            // Python prints the innermost frame last.
            frames.reverse();
            frames.extend(
                DOTNET_FRAME
                    .captures_iter(text)
                    .take(MAX_CANDIDATES)
                    .filter_map(|c| Some((c[1].to_owned(), c[2].parse().ok()?))),
            );
            frames.extend(
                FRAME
                    .captures_iter(text)
                    .take(MAX_CANDIDATES)
                    .filter_map(|c| Some((c[1].to_owned(), c[2].parse().ok()?))),
            );
            for (path, line) in frames.into_iter().take(2 * MAX_CANDIDATES) {
                if let Some(found) = self.resolve(&path, package) {
                    return Some((found, Some(line)));
                }
            }
        }
        None
    }

    /// `path` as a file of the repository, relative to its root, if it is one.
    fn resolve(&self, path: &str, package: Option<&str>) -> Option<CompactString> {
        let path = path.trim().replace('\\', "/");
        if path.is_empty() || NOT_OURS.iter().any(|part| path.contains(part)) {
            return None;
        }
        let given = Path::new(&path);
        let mut tries: Vec<PathBuf> = Vec::new();
        // `C:/…` is absolute where it was written, whatever it is here.
        let drive = path.as_bytes().get(1) == Some(&b':')
            && path.as_bytes()[0].is_ascii_alphabetic()
            && path.as_bytes().get(2) == Some(&b'/');
        if given.is_absolute() || drive {
            if given.is_absolute() {
                tries.push(given.to_path_buf());
            }
            // Written elsewhere (a container, another checkout): the longest end of the
            // path that names a file here.
            let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
            for start in parts.len().saturating_sub(MAX_SUFFIX_PARTS)..parts.len() {
                let end = parts[start..].join("/");
                tries.push(self.cwd.join(&end));
                tries.push(self.root.join(&end));
            }
        } else {
            tries.push(self.cwd.join(given));
            tries.push(self.root.join(given));
            // Go prints a file's name relative to its package's folder: the package's
            // path ends with that folder's path below the module root.
            if let Some(package) = package {
                let parts: Vec<&str> = package.split('/').collect();
                for start in (1..parts.len()).rev() {
                    tries.push(self.cwd.join(parts[start..].join("/")).join(given));
                }
            }
        }
        for candidate in tries.iter().take(2 + 2 * MAX_SUFFIX_PARTS) {
            if let Some(relative) = self.inside(candidate) {
                return Some(relative);
            }
        }
        None
    }

    /// `candidate`, an existing file under the root, relative to the root.
    fn inside(&self, candidate: &Path) -> Option<CompactString> {
        let real = std::fs::canonicalize(candidate).ok()?;
        if !real.is_file() {
            return None;
        }
        let relative = real.strip_prefix(&self.root).ok()?;
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
        {
            return None;
        }
        let text = relative.to_str()?.replace('\\', "/");
        Some(text.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// .NET's frames (`in <path>:line N`), innermost first, written on Windows or under
    /// a deterministic `/_/` root, are found by the end of their path.
    #[test]
    fn dotnet_frames_written_elsewhere_are_found_by_their_end() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for file in ["App/Calc.cs", "App.Tests/Calc Tests.cs"] {
            std::fs::create_dir_all(root.join(file).parent().unwrap()).unwrap();
            std::fs::write(root.join(file), "class C {}\n").unwrap();
        }
        let locator = Locator::new(&root, &root);
        let trace = concat!(
            "   at System.Int32.Parse(String s)\n",
            "   at App.Calc.Div(Int32 a, Int32 b) in C:\\ci\\w\\App\\Calc.cs:line 9\n",
            "   at App.Tests.CalcTests.Divides() in C:\\ci\\w\\App.Tests\\Calc Tests.cs:line 33\n",
        );
        assert_eq!(
            locator.locate(None, None, &[trace], None),
            Some(("App/Calc.cs".into(), Some(9)))
        );
        let deterministic =
            "   at App.Tests.CalcTests.Adds() in /_/App.Tests/Calc Tests.cs:line 27";
        assert_eq!(
            locator.locate(None, None, &[deterministic], None),
            Some(("App.Tests/Calc Tests.cs".into(), Some(27)))
        );
        let elsewhere = "   at Lib.Thing() in D:\\a\\lib\\Thing.cs:line 4";
        assert_eq!(locator.locate(None, None, &[elsewhere], None), None);
    }
}

//! Checks that are not commands: files present or absent, a clean git tree, and groups
//! of items. Each reports exit code 0 (pass) or 1 (fail) and writes its evidence to the
//! check's log.

use std::path::{Path, PathBuf};
use std::process::Command;

use globset::{Glob, GlobMatcher};
use walkdir::WalkDir;

use super::CheckError;

/// The outcome of a non-command check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    pub passed: bool,
    /// One line for the summary.
    pub summary: String,
    /// The full evidence, for the log.
    pub detail: String,
}

/// Folders never searched: version control internals.
const SKIP_DIRS: &[&str] = &[".git", ".hg", ".svn"];

/// Paths under `root` matching `pattern` (relative to `root`), sorted; `exclude`
/// (absolute) is never entered.
pub fn matches(
    root: &Path,
    pattern: &str,
    exclude: Option<&Path>,
) -> Result<Vec<String>, CheckError> {
    let pattern = pattern.trim_start_matches("./");
    let has_glob = pattern.contains(['*', '?', '[', '{']);
    if !has_glob {
        return Ok(if root.join(pattern).exists() {
            vec![pattern.to_owned()]
        } else {
            Vec::new()
        });
    }
    let matcher: GlobMatcher = Glob::new(pattern)
        .map_err(|e| format!("invalid glob `{pattern}`: {e}"))?
        .compile_matcher();
    // Walk only below the pattern's literal prefix (`dist/**/*.map` → `dist`).
    let prefix: PathBuf = Path::new(pattern)
        .components()
        .take_while(|c| {
            !c.as_os_str()
                .to_string_lossy()
                .contains(['*', '?', '[', '{'])
        })
        .collect();
    let start = root.join(&prefix);
    let exclude = exclude.and_then(|e| std::fs::canonicalize(e).ok());
    let mut found = Vec::new();
    let walker = WalkDir::new(&start)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            let skipped =
                e.depth() > 0 && e.file_type().is_dir() && SKIP_DIRS.contains(&name.as_ref());
            let excluded = exclude
                .as_ref()
                .is_some_and(|x| std::fs::canonicalize(e.path()).is_ok_and(|p| p == *x));
            !skipped && !excluded
        });
    for entry in walker.filter_map(Result::ok) {
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let text = relative.to_string_lossy().replace('\\', "/");
        if !text.is_empty() && matcher.is_match(&text) {
            found.push(text);
        }
    }
    found.sort();
    Ok(found)
}

/// `file:` — passes when the pattern matches something in one of the `search` folders
/// (tried in turn; default the check's folder).
pub fn file(cwd: &Path, pattern: &str, search: &[String]) -> Result<Evidence, CheckError> {
    let folders: Vec<String> = if search.is_empty() {
        vec![".".to_owned()]
    } else {
        search.to_vec()
    };
    let mut detail = String::new();
    for folder in &folders {
        let root = cwd.join(folder);
        let found = matches(&root, pattern, None)?;
        detail.push_str(&format!(
            "{folder}: {} match(es) for `{pattern}`\n",
            found.len()
        ));
        for path in &found {
            detail.push_str(&format!("  {path}\n"));
        }
        if let Some(first) = found.first() {
            let shown = display_join(folder, first);
            let more = if found.len() > 1 {
                format!(" (+{} more)", found.len() - 1)
            } else {
                String::new()
            };
            return Ok(Evidence {
                passed: true,
                summary: format!("found {shown}{more}"),
                detail,
            });
        }
    }
    Ok(Evidence {
        passed: false,
        summary: format!("no match for `{pattern}` in {}", folders.join(", ")),
        detail,
    })
}

/// `not-file:` — passes when nothing matches; on failure the matches are listed.
pub fn not_file(cwd: &Path, pattern: &str, exclude: Option<&Path>) -> Result<Evidence, CheckError> {
    let found = matches(cwd, pattern, exclude)?;
    let mut detail = format!("{} match(es) for `{pattern}`\n", found.len());
    for path in &found {
        detail.push_str(&format!("  {path}\n"));
    }
    Ok(match found.as_slice() {
        [] => Evidence {
            passed: true,
            summary: format!("nothing matches `{pattern}`"),
            detail,
        },
        some => Evidence {
            passed: false,
            summary: format!(
                "{} match(es) for `{pattern}`: {}",
                some.len(),
                some.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
            ),
            detail,
        },
    })
}

/// `git-clean:` — no uncommitted changes and no untracked, non-ignored files under
/// `path`; `exclude` (this run's output folder) is not counted.
pub fn git_clean(cwd: &Path, path: &str, exclude: Option<&Path>) -> Result<Evidence, CheckError> {
    let output = Command::new("git")
        .args([
            "status",
            "--porcelain=v1",
            "--untracked-files=all",
            "--",
            path,
        ])
        .current_dir(cwd)
        .output()
        .map_err(|e| {
            if cwd.is_dir() {
                format!("cannot run git: {e}")
            } else {
                format!("working directory `{}` does not exist", cwd.display())
            }
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let reason = stderr
            .lines()
            .next()
            .unwrap_or("git status failed")
            .trim_start_matches("fatal: ");
        return Err(format!(
            "`{}` is not a clean-checkable git tree: {reason}",
            cwd.join(path).display()
        )
        .into());
    }
    let top = Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .current_dir(cwd)
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let excluded = exclude
        .and_then(|e| std::fs::canonicalize(e).ok())
        .zip(top.and_then(|t| std::fs::canonicalize(t).ok()))
        .and_then(|(e, t)| {
            e.strip_prefix(&t)
                .ok()
                .map(|r| r.to_string_lossy().replace('\\', "/"))
        })
        .filter(|r| !r.is_empty());
    let mut changed: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| l.len() > 3)
        .filter(|l| {
            excluded
                .as_ref()
                .is_none_or(|x| !l[3..].trim_matches('"').starts_with(&format!("{x}/")))
        })
        .map(str::to_owned)
        .collect();
    changed.sort_by(|a, b| a[3..].cmp(&b[3..]));
    let detail = if changed.is_empty() {
        "git status: clean\n".to_owned()
    } else {
        format!("git status --porcelain:\n{}\n", changed.join("\n"))
    };
    Ok(match changed.as_slice() {
        [] => Evidence {
            passed: true,
            summary: format!("`{path}` is clean"),
            detail,
        },
        some => {
            let paths: Vec<&str> = some.iter().take(3).map(|l| l[3..].trim()).collect();
            Evidence {
                passed: false,
                summary: format!(
                    "{} uncommitted or untracked path(s): {}",
                    some.len(),
                    paths.join(", ")
                ),
                detail,
            }
        }
    })
}

fn display_join(folder: &str, path: &str) -> String {
    if folder == "." {
        path.to_owned()
    } else {
        format!("{}/{path}", folder.trim_end_matches('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        dir
    }

    #[test]
    fn globs_match_below_their_literal_prefix() {
        let dir = tree(&["dist/a.js", "dist/maps/a.js.map", "src/b.rs", ".git/x.map"]);
        assert_eq!(
            matches(dir.path(), "dist/**/*.map", None).unwrap(),
            ["dist/maps/a.js.map"]
        );
        assert_eq!(
            matches(dir.path(), "**/*.map", None).unwrap(),
            ["dist/maps/a.js.map"]
        );
        assert_eq!(matches(dir.path(), "src/b.rs", None).unwrap(), ["src/b.rs"]);
        assert!(matches(dir.path(), "nope/*.rs", None).unwrap().is_empty());
    }

    #[test]
    fn file_tries_search_folders_in_turn() {
        let dir = tree(&["src/README.md"]);
        let e = file(dir.path(), "README.md", &[".".into(), "src".into()]).unwrap();
        assert!(e.passed);
        assert_eq!(e.summary, "found src/README.md");
        let e = file(dir.path(), "missing.md", &[]).unwrap();
        assert!(!e.passed);
        assert_eq!(e.summary, "no match for `missing.md` in .");
    }

    #[test]
    fn not_file_lists_what_it_found() {
        let dir = tree(&["dist/a.map", "dist/b.map"]);
        let e = not_file(dir.path(), "dist/*.map", None).unwrap();
        assert!(!e.passed);
        assert_eq!(
            e.summary,
            "2 match(es) for `dist/*.map`: dist/a.map, dist/b.map"
        );
        assert!(not_file(dir.path(), "*.exe", None).unwrap().passed);
    }
}

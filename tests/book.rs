//! The book (`docs/`, an mdBook) and README, as a reader meets them: the book builds
//! with mdBook (which `scripts/test.sh` installs under `target/tools`), every link and
//! anchor of the built pages and of README resolves, and every example works against
//! the binary — each manifest plans, each workflow's use of the Action names only inputs
//! `action.yml` has, every other YAML block parses, and every `cargo verify-matrix`
//! command line parses with the binary's own argument parser.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_cargo-verify-matrix")
}

/// README and the book's chapters, by path relative to the repository.
fn pages() -> Vec<(String, String)> {
    let mut pages = vec![(
        "README.md".to_owned(),
        std::fs::read_to_string(root().join("README.md")).unwrap(),
    )];
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    for path in chapters {
        let name = format!("docs/{}", path.file_name().unwrap().to_str().unwrap());
        pages.push((name, std::fs::read_to_string(&path).unwrap()));
    }
    pages
}

/// The fenced code blocks of `text` with their info string (`yaml`, `sh`, ``).
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // (fence, its indentation, info, body)
    let mut open: Option<(String, String, String, String)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                let ticks = trimmed.chars().take_while(|&c| c == '`').count();
                if ticks >= 3 {
                    let indent = line[..line.len() - trimmed.len()].to_owned();
                    let info = trimmed[ticks..].trim().to_owned();
                    open = Some(("`".repeat(ticks), indent, info, String::new()));
                }
            }
            Some((fence, indent, info, body)) => {
                if trimmed.starts_with(fence.as_str()) && trimmed.trim_matches('`').is_empty() {
                    out.push((info.clone(), std::mem::take(body)));
                    open = None;
                } else {
                    // A block inside a list item is indented as its fence is.
                    body.push_str(line.strip_prefix(indent.as_str()).unwrap_or(line));
                    body.push('\n');
                }
            }
        }
    }
    out
}

/// The mdbook program: on PATH (scripts/test.sh puts target/tools/mdbook/bin there).
fn mdbook() -> PathBuf {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("mdbook"))
        .find(|path| path.is_file());
    found.unwrap_or_else(|| {
        panic!("`mdbook` is not on PATH: scripts/test.sh installs it under target/tools/mdbook")
    })
}

/// Every `id="…"` of each HTML page under `dir`.
fn ids_of(dir: &Path) -> HashMap<PathBuf, BTreeSet<String>> {
    let id = regex::Regex::new(r#"id="([^"]+)""#).unwrap();
    let mut out = HashMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                let text = std::fs::read_to_string(&path).unwrap();
                let ids = id.captures_iter(&text).map(|c| c[1].to_owned()).collect();
                out.insert(path, ids);
            }
        }
    }
    out
}

/// `&amp;` and the like in an attribute, as a browser reads it.
fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[test]
fn the_book_builds_and_every_link_and_anchor_in_it_resolves() {
    let out_dir = tempfile::tempdir().unwrap();
    let built = Command::new(mdbook())
        .arg("build")
        .arg(root().join("docs"))
        .arg("--dest-dir")
        .arg(out_dir.path())
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "mdbook build failed: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ids = ids_of(out_dir.path());
    let chapters = [
        "index.html",
        "getting-started.html",
        "configuration.html",
        "github-actions.html",
        "local-use.html",
        "agents.html",
        "output-formats.html",
        "formats.html",
        "security.html",
        "benchmarks.html",
        "real-projects.html",
        "development.html",
    ];
    for chapter in chapters {
        assert!(
            ids.contains_key(&out_dir.path().join(chapter)),
            "no {chapter}"
        );
    }
    let link = regex::Regex::new(r#"(?:href|src)="([^"]+)""#).unwrap();
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in ids.keys() {
        let name = page.file_name().unwrap().to_str().unwrap();
        // mdBook's own pages: the print page repeats every chapter.
        if matches!(name, "print.html" | "404.html" | "toc.html") {
            continue;
        }
        let text = std::fs::read_to_string(page).unwrap();
        for captures in link.captures_iter(&text) {
            let target = unescape(&captures[1]);
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let file = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            let Ok(file) = file.canonicalize() else {
                broken.push(format!("{name}: {target}: no such file"));
                continue;
            };
            if !fragment.is_empty() && file.extension().is_some_and(|e| e == "html") {
                let known = ids
                    .iter()
                    .find(|(p, _)| p.canonicalize().ok().as_ref() == Some(&file))
                    .map(|(_, ids)| ids.contains(fragment));
                if known != Some(true) {
                    broken.push(format!("{name}: {target}: no such anchor"));
                }
            }
        }
    }
    assert!(checked > 300, "only {checked} links checked");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_relative_link_of_readme_and_the_chapters_names_a_file_that_exists() {
    let link = regex::Regex::new(r#"\]\(([^)\s]+)\)|src="([^"]+)""#).unwrap();
    let mut broken = Vec::new();
    for (page, text) in pages() {
        let dir = root().join(&page).parent().unwrap().to_path_buf();
        let text = prose(&text);
        for captures in link.captures_iter(&text) {
            let target = captures.get(1).or(captures.get(2)).unwrap().as_str();
            if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
                continue;
            }
            let path = target.split('#').next().unwrap();
            if !dir.join(path).exists() {
                broken.push(format!("{page}: {target}"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// `text` without its code: fenced blocks and inline code spans, where a link is an
/// example, not a link.
fn prose(text: &str) -> String {
    let span = regex::Regex::new(r"(`+)[^`]*?(`+)").unwrap();
    let mut out = String::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|&c| c == '`').count();
        match &fence {
            None if ticks >= 3 => fence = Some("`".repeat(ticks)),
            None => {
                out.push_str(&span.replace_all(line, ""));
                out.push('\n');
            }
            Some(open)
                if trimmed.starts_with(open.as_str()) && trimmed.trim_matches('`').is_empty() =>
            {
                fence = None;
            }
            Some(_) => {}
        }
    }
    out
}

/// The inputs `action.yml` declares.
fn action_inputs() -> BTreeSet<String> {
    let action: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(root().join("action.yml")).unwrap()).unwrap();
    action["inputs"]
        .as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_owned())
        .collect()
}

/// Each step of `workflow` that uses the Action: its `with:` keys.
fn uses_of_the_action(workflow: &serde_yaml::Value) -> Vec<BTreeSet<String>> {
    let mut out = Vec::new();
    let Some(jobs) = workflow.get("jobs").and_then(|j| j.as_mapping()) else {
        return out;
    };
    for job in jobs.values() {
        for step in job
            .get("steps")
            .and_then(|s| s.as_sequence())
            .into_iter()
            .flatten()
        {
            let uses = step.get("uses").and_then(|u| u.as_str()).unwrap_or("");
            if uses.starts_with("verify-matrix/cargo-verify-matrix@") || uses == "./" {
                let keys = step
                    .get("with")
                    .and_then(|w| w.as_mapping())
                    .map(|w| w.keys().map(|k| k.as_str().unwrap().to_owned()).collect())
                    .unwrap_or_default();
                out.push(keys);
            }
        }
    }
    out
}

/// The files an example manifest's ways in name, as its repository would have them: a
/// Compose file defining the service, a dev container's configuration.
fn write_what_the_ways_in_name(manifest: &serde_yaml::Value, dir: &std::path::Path) {
    let environments = manifest.get("environments").and_then(|e| e.as_sequence());
    for enter in environments
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("enter"))
    {
        if let Some(compose) = enter.get("compose") {
            let file = compose
                .get("file")
                .and_then(|f| f.as_str())
                .unwrap_or("compose.yaml");
            let service = compose.get("service").and_then(|s| s.as_str()).unwrap();
            std::fs::write(
                dir.join(file),
                format!("services:\n  {service}:\n    image: debian:12\n"),
            )
            .unwrap();
        }
        if let Some(folder) = enter.get("devcontainer").and_then(|d| d.as_str()) {
            let config = dir.join(folder).join(".devcontainer");
            std::fs::create_dir_all(&config).unwrap();
            std::fs::write(config.join("devcontainer.json"), "{}\n").unwrap();
        }
    }
}

#[test]
fn every_yaml_example_is_a_manifest_that_plans_a_workflow_that_uses_real_inputs_or_valid_yaml() {
    let inputs = action_inputs();
    let (mut manifests, mut workflows, mut others) = (0, 0, 0);
    let mut failures = Vec::new();
    for (page, text) in pages() {
        // The formats reference checks its own manifest example (tests/formats_doc.rs).
        if page == "docs/formats.md" {
            continue;
        }
        for (n, (info, body)) in blocks(&text).into_iter().enumerate() {
            if info != "yaml" && info != "yml" {
                continue;
            }
            let value: serde_yaml::Value = match serde_yaml::from_str(&body) {
                Ok(value) => value,
                Err(e) => {
                    failures.push(format!("{page}, block {n}: not YAML: {e}\n{body}"));
                    continue;
                }
            };
            if value.get("version").is_some() && value.get("checks").is_some() {
                manifests += 1;
                let dir = tempfile::tempdir().unwrap();
                std::fs::write(dir.path().join("verify-matrix.yml"), &body).unwrap();
                std::fs::create_dir(dir.path().join(".git")).unwrap();
                write_what_the_ways_in_name(&value, dir.path());
                let out = Command::new(bin())
                    .arg("plan")
                    .current_dir(dir.path())
                    .output()
                    .unwrap();
                if !out.status.success() {
                    failures.push(format!(
                        "{page}, block {n}: the manifest does not plan: {}\n{body}",
                        String::from_utf8_lossy(&out.stderr)
                    ));
                }
            } else if value.get("jobs").is_some() {
                workflows += 1;
                for keys in uses_of_the_action(&value) {
                    let unknown: Vec<&String> = keys.difference(&inputs).collect();
                    if !unknown.is_empty() {
                        failures.push(format!(
                            "{page}, block {n}: the Action has no input {unknown:?}\n{body}"
                        ));
                    }
                }
            } else {
                others += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(manifests >= 2, "{manifests} manifests");
    assert!(workflows >= 2, "{workflows} workflows");
    assert!(others >= 1, "{others} other blocks");
}

/// The arguments of a documented command line, when it runs the tool: after
/// `cargo verify-matrix`, `cargo-verify-matrix`, or `cargo run … --`, up to the first
/// pipe, redirection or `&&`.
fn tool_arguments(line: &str) -> Option<Vec<String>> {
    let words = shlex::split(line)?;
    let start = if words.starts_with(&["cargo".to_owned(), "verify-matrix".to_owned()]) {
        2
    } else if words.first().is_some_and(|w| w == "cargo-verify-matrix") {
        1
    } else if words.starts_with(&["cargo".to_owned(), "run".to_owned()]) {
        words.iter().position(|w| w == "--")? + 1
    } else {
        return None;
    };
    // A synopsis's optional parts (`[--against REPORT]`) are read as given.
    let args: Vec<String> = words[start..]
        .iter()
        .take_while(|w| !matches!(w.as_str(), "|" | "&&" | "||" | ";" | ">" | "2>" | ">>"))
        .filter(|w| !w.starts_with('>'))
        .map(|w| w.trim_start_matches('[').trim_end_matches(']').to_owned())
        .filter(|w| !w.is_empty() && w != "…")
        .collect();
    Some(args)
}

#[test]
fn every_command_example_parses_with_the_binarys_own_arguments() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (page, text) in pages() {
        for (info, body) in blocks(&text) {
            if !matches!(info.as_str(), "sh" | "bash" | "console" | "shell") {
                continue;
            }
            // Lines continued with a backslash are one command.
            let joined = body.replace("\\\n", " ");
            for line in joined.lines() {
                let line = line.trim().trim_start_matches("$ ");
                let Some(args) = tool_arguments(line) else {
                    continue;
                };
                checked += 1;
                // Parsed as the binary parses them, then help instead of running: an
                // unknown command, flag or value fails before `--help` is reached. The
                // help goes before a `--` (what follows is a check's own command), and
                // the line runs in an empty folder: if it ran for real, it says no
                // `Usage:` and fails here without touching the repository.
                let mut args = args;
                let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
                args.insert(at, "--help".to_owned());
                let folder = tempfile::tempdir().unwrap();
                let out = Command::new(bin())
                    .args(&args)
                    .current_dir(folder.path())
                    .env("NO_COLOR", "1")
                    .env_remove("GITHUB_ACTIONS")
                    .output()
                    .unwrap();
                if !out.status.success() || !String::from_utf8_lossy(&out.stdout).contains("Usage:")
                {
                    failures.push(format!(
                        "{page}: `{line}`: {}",
                        String::from_utf8_lossy(&out.stderr).trim()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 20, "only {checked} commands checked");
}

/// The subcommands a `--help` text lists under `Commands:` (`help` aside).
fn subcommands(help: &str) -> Vec<String> {
    let Some(start) = help.find("\nCommands:\n") else {
        return Vec::new();
    };
    help[start + "\nCommands:\n".len()..]
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// `--help` of the binary for `path` (`["history", "add"]`), as a reader sees it.
fn help_of(path: &[String]) -> String {
    let out = Command::new(bin())
        .args(path)
        .arg("--help")
        .env_remove("GITHUB_ACTIONS")
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert!(out.status.success(), "{path:?} --help: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The command reference (`docs/commands.md`) is each command's own `--help`, so it
/// cannot say what the binary does not: regenerated with `UPDATE_GOLDEN=1`.
#[test]
fn the_command_reference_is_each_commands_own_help() {
    let mut page = String::from(
        "# Command reference\n\n\
         Each command's own `--help`, as the binary prints it (this page is checked against \
         the binary, so it says what the installed version does). How the commands fit \
         together is in [Local use](local-use.md) and [GitHub Actions](github-actions.md); \
         what a message means, in [Common errors](common-errors.md).\n",
    );
    let mut queue: Vec<Vec<String>> = subcommands(&help_of(&[]))
        .into_iter()
        .map(|c| vec![c])
        .collect();
    let mut index = 0;
    while index < queue.len() {
        let path = queue[index].clone();
        let help = help_of(&path);
        let deeper: Vec<Vec<String>> = subcommands(&help)
            .into_iter()
            .map(|sub| {
                let mut deeper = path.clone();
                deeper.push(sub);
                deeper
            })
            .collect();
        queue.splice(index + 1..index + 1, deeper);
        let heading = "#".repeat(path.len() + 1);
        page.push_str(&format!(
            "\n{heading} `cargo verify-matrix {}`\n\n```text\n{}\n```\n",
            path.join(" "),
            help.trim_end()
        ));
        index += 1;
    }
    let path = root().join("docs/commands.md");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &page).unwrap();
    }
    let written = std::fs::read_to_string(&path).expect("docs/commands.md");
    assert!(
        written == page,
        "docs/commands.md is not the binary's help: regenerate it with UPDATE_GOLDEN=1 cargo test --test book"
    );
}

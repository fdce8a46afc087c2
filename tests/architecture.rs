//! The pipeline's shape, checked: each stage imports only the stages before it, and each
//! command of the CLI stands alone. Reads every `crate::…` and `super::…` path in `src/`
//! (in `use` lines and inline), resolves it to the top-level module it names, and fails
//! on an import the layering forbids.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The stages a stage must not import. A module not listed may import anything but the
/// CLI; nothing but the CLI imports the CLI.
const FORBIDDEN: &[(&str, &[&str])] = &[
    // Leaves: used by everyone, using no stage.
    (
        "shell",
        &[
            "manifest",
            "plan",
            "run",
            "results",
            "render",
            "publish",
            "untrusted",
        ],
    ),
    (
        "untrusted",
        &["manifest", "plan", "run", "results", "render", "publish"],
    ),
    (
        "actions_env",
        &["manifest", "plan", "run", "results", "render", "publish"],
    ),
    (
        "gitlab_env",
        &["manifest", "plan", "run", "results", "render", "publish"],
    ),
    (
        "exit_code",
        &["manifest", "plan", "run", "results", "render", "publish"],
    ),
    (
        "manifest",
        &["plan", "run", "results", "render", "publish", "history"],
    ),
    ("plan", &["run", "results", "render", "publish", "history"]),
    ("results", &["run", "render", "publish", "history"]),
    ("run", &["render", "publish", "history"]),
    // The history keeps reports and draws its dashboard: it reads results and renders,
    // never runs or publishes.
    ("history", &["run", "publish"]),
    ("render", &["run", "publish"]),
    ("publish", &["run"]),
];

/// One source file: its module path (`render::cell`) and its text.
struct Source {
    module: Vec<String>,
    path: String,
    text: String,
}

fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_owned());
    }
    parts
}

fn read_tree(root: &Path) -> Vec<Source> {
    let mut sources = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(root).unwrap();
                sources.push(Source {
                    module: module_path(relative),
                    path: relative.display().to_string(),
                    text: std::fs::read_to_string(&path).unwrap(),
                });
            }
        }
    }
    sources.sort_by(|a, b| a.path.cmp(&b.path));
    sources
}

/// The code of `text` without comments (a doc comment's path is not an import).
fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The module paths a file names (`use` lines and inline paths), each as the absolute
/// path from the crate root, at most three segments deep (`cli::commands::plan`, which
/// is as deep as the rules look).
fn imports(source: &Source) -> BTreeSet<Vec<String>> {
    let code = code(&source.text);
    let mut found = BTreeSet::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let boundary = i == 0 || !is_ident(bytes[i - 1] as char) && bytes[i - 1] != b':';
        let (base, after) = if boundary && rest.starts_with("crate::") {
            (Vec::new(), i + "crate::".len())
        } else if boundary && rest.starts_with("super::") {
            let mut ups = 0;
            let mut at = i;
            while code[at..].starts_with("super::") {
                ups += 1;
                at += "super::".len();
            }
            let keep = source.module.len().saturating_sub(ups);
            (source.module[..keep].to_vec(), at)
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        for tail in tails(&code[after..]) {
            let mut path = base.clone();
            path.extend(tail);
            path.truncate(3);
            if !path.is_empty() {
                found.insert(path);
            }
        }
        i = after;
    }
    found
}

/// The paths a `use` tree names: `a::b` gives `[a, b]`; `{a::b, c}` gives `[a, b]` and
/// `[c]`; `a::{b, c::d}` gives `[a, b]` and `[a, c, d]`.
fn tails(text: &str) -> Vec<Vec<String>> {
    let ident: String = text.chars().take_while(|c| is_ident(*c)).collect();
    if !ident.is_empty() {
        let rest = &text[ident.len()..];
        let below = match rest.strip_prefix("::") {
            Some(next) => tails(next),
            None => Vec::new(),
        };
        if below.is_empty() {
            return vec![vec![ident]];
        }
        return below
            .into_iter()
            .map(|tail| std::iter::once(ident.clone()).chain(tail).collect())
            .collect();
    }
    let Some(group) = text.strip_prefix('{') else {
        return Vec::new();
    };
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..at]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    items
        .into_iter()
        .flat_map(|item| tails(item.trim_start()))
        .collect()
}

fn violations(sources: &[Source]) -> Vec<String> {
    // The command files: `cli/commands/x.rs` is the command `x`.
    let commands: BTreeSet<&str> = sources
        .iter()
        .filter(|s| s.module.len() == 3 && s.module[..2] == ["cli", "commands"])
        .map(|s| s.module[2].as_str())
        .collect();
    let mut found = Vec::new();
    for source in sources {
        let Some(stage) = source.module.first() else {
            continue;
        };
        let forbidden: &[&str] = FORBIDDEN
            .iter()
            .find(|(name, _)| name == stage)
            .map_or(&[], |(_, list)| list);
        let imports = imports(source);
        // A stage and the module in it are what a stage rule names.
        let modules: BTreeSet<&[String]> = imports.iter().map(|p| &p[..p.len().min(2)]).collect();
        for path in modules {
            let target = &path[0];
            if target == stage {
                // Inside one stage; the CLI's commands are kept apart below.
                continue;
            }
            if target == "cli" || forbidden.contains(&target.as_str()) {
                found.push(format!(
                    "{}: stage `{stage}` imports `{}`",
                    source.path,
                    path.join("::")
                ));
            }
        }
        found.extend(command_imports(source, &imports, &commands));
    }
    found
}

/// A file of `cli/commands/` that imports another one: `super::x` from
/// `cli/commands/y.rs` is `cli::commands::x`, as is `crate::cli::commands::x`.
fn command_imports(
    source: &Source,
    imports: &BTreeSet<Vec<String>>,
    commands: &BTreeSet<&str>,
) -> Vec<String> {
    let own = &source.module;
    if own.len() != 3 || own[..2] != ["cli", "commands"] {
        return Vec::new();
    }
    imports
        .iter()
        .filter(|path| {
            path.len() == 3
                && path[..2] == ["cli", "commands"]
                && path[2] != own[2]
                && commands.contains(path[2].as_str())
        })
        .map(|path| {
            format!(
                "{}: command `{}` imports command `{}`",
                source.path, own[2], path[2]
            )
        })
        .collect()
}

fn synthetic(files: &[(&str, &str)]) -> Vec<Source> {
    files
        .iter()
        .map(|(path, text)| Source {
            module: module_path(Path::new(path)),
            path: (*path).to_owned(),
            text: (*text).to_owned(),
        })
        .collect()
}

#[test]
fn every_stage_imports_only_the_stages_before_it() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let sources = read_tree(&root);
    assert!(sources.len() > 40, "read {} files", sources.len());
    let found = violations(&sources);
    assert!(
        found.is_empty(),
        "imports the layering forbids:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_finds_each_kind_of_forbidden_import() {
    let sources = synthetic(&[
        // A grouped import of a later stage.
        (
            "manifest/validate.rs",
            "use crate::{untrusted::Quoter, run::words};\n",
        ),
        // An inline path, through `super::super`.
        (
            "render/cell.rs",
            "fn f() { super::super::run::check::format_duration(d) }\n",
        ),
        // The CLI from a stage.
        ("publish/mod.rs", "use crate::cli::Error;\n"),
        // Two commands.
        ("cli/commands/plan.rs", "use super::run::forward_signals;\n"),
        (
            "cli/commands/run.rs",
            "use crate::cli::commands::{plan::pretty, Settings};\n",
        ),
        // Allowed: a command using the CLI's shared parts, a stage using an earlier one,
        // a path in a comment, a stage's own modules.
        (
            "cli/commands/merge.rs",
            "use super::super::settings::Settings;\nuse crate::results::Report;\n",
        ),
        (
            "render/mod.rs",
            "// crate::run::x is only mentioned\nuse crate::results::{Report, schema::Row};\nuse super::cell;\n",
        ),
    ]);
    let found = violations(&sources);
    let expected = [
        "manifest/validate.rs: stage `manifest` imports `run::words`",
        "render/cell.rs: stage `render` imports `run::check`",
        "publish/mod.rs: stage `publish` imports `cli::Error`",
        "cli/commands/plan.rs: command `plan` imports command `run`",
        "cli/commands/run.rs: command `run` imports command `plan`",
    ];
    for line in expected {
        assert!(
            found.iter().any(|f| f == line),
            "missing `{line}` in:\n{}",
            found.join("\n")
        );
    }
    assert_eq!(found.len(), expected.len(), "{}", found.join("\n"));
}

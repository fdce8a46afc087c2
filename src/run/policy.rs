//! Refusals before running: background execution, long-lived watch/dev commands, and
//! the manifest's `policy.deny` patterns. A refused command is never spawned.

use crate::manifest::{Policy, Shell};

use crate::shell::lexer::{SimpleCommand, lex, simple_commands};

/// Command words that detach a process from the check.
const DETACHERS: &[&str] = &["nohup", "disown", "setsid"];
/// Commands that run the next word as the command (so `exec nohup x` is still nohup).
const WRAPPERS: &[&str] = &["exec", "command", "builtin", "env", "nice", "sudo", "time"];

/// Why `cmd` must not run under `shell`, or `None` when it may. POSIX shells' commands
/// are read by the shell lexer; cmd.exe's and PowerShell's by their own separators
/// (`&` separates commands in cmd.exe; `start` is how it runs one apart).
pub fn refusal(cmd: &str, shell: Shell, policy: &Policy) -> Option<String> {
    for pattern in &policy.deny {
        if pattern.is_match(cmd) {
            return Some(format!(
                "matches policy.deny pattern `{}`",
                pattern.as_str()
            ));
        }
    }
    let commands: Vec<Vec<String>> = match shell {
        Shell::Bash | Shell::Sh | Shell::None => {
            let commands = simple_commands(&lex(cmd));
            if let Some(reason) = background(&commands) {
                return Some(reason);
            }
            commands.into_iter().map(|c| c.words).collect()
        }
        Shell::Cmd | Shell::Pwsh | Shell::Powershell => {
            let commands = windows_commands(cmd);
            if let Some(reason) = windows_background(&commands, shell) {
                return Some(reason);
            }
            commands
        }
    };
    if !policy.allow_watch
        && let Some(what) = commands.iter().find_map(|words| watch(words))
    {
        return Some(format!(
            "`{what}` is a long-lived watch/dev command that never exits; set `policy.allow-watch: true` to run it anyway"
        ));
    }
    None
}

/// Background execution: a standalone `&`, or a detaching command word.
pub fn background(commands: &[SimpleCommand]) -> Option<String> {
    for command in commands {
        if command.terminator == Some("&") {
            let shown = command.words.join(" ");
            return Some(format!(
                "`{shown} &` runs in the background; a check must not leave processes behind"
            ));
        }
        if let Some(word) = command_name(&command.words).filter(|w| DETACHERS.contains(w)) {
            return Some(format!(
                "`{word}` detaches a process from the check; a check must not leave processes behind"
            ));
        }
    }
    None
}

/// A cmd.exe or PowerShell command line's commands (split at `&`, `|`, `;` and
/// newlines), each as its blank-separated words, quotes removed.
fn windows_commands(cmd: &str) -> Vec<Vec<String>> {
    cmd.split(['&', '|', ';', '\n'])
        .map(|part| {
            part.split_whitespace()
                .map(|w| w.trim_matches(['"', '\'']).to_owned())
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|words| !words.is_empty())
        .collect()
}

/// cmd.exe's `start` and PowerShell's `Start-Process`/`Start-Job` (or a trailing `&`)
/// run a program apart from the check.
fn windows_background(commands: &[Vec<String>], shell: Shell) -> Option<String> {
    for words in commands {
        let name = words[0].to_ascii_lowercase();
        let detaches = match shell {
            Shell::Cmd => name == "start",
            _ => matches!(
                name.as_str(),
                "start-process" | "start-job" | "saps" | "sajb"
            ),
        };
        if detaches {
            return Some(format!(
                "`{}` runs a program apart from the check; a check must not leave processes behind",
                words[0]
            ));
        }
    }
    None
}

/// The command a simple command runs, looking through wrappers such as `exec` or `env`.
fn command_name(words: &[String]) -> Option<&str> {
    let mut rest = words.iter().map(String::as_str);
    let mut name = rest.next()?;
    while WRAPPERS.contains(&name) {
        // Skip the wrapper's options and assignments (`env -i A=b nohup x`).
        name = rest.find(|w| !w.starts_with('-') && !w.contains('='))?;
    }
    Some(name)
}

/// A long-lived watch/dev command, described for the message.
fn watch(words: &[String]) -> Option<String> {
    let name = command_name(words)?;
    let at = words.iter().position(|w| w == name)?;
    let args: Vec<&str> = words[at + 1..].iter().map(String::as_str).collect();
    let base = name.rsplit('/').next().unwrap_or(name);
    let shown = || words[at..].join(" ");
    let first = args.iter().copied().find(|a| !a.starts_with('-'));
    let has = |flag: &str| args.contains(&flag);

    if args
        .iter()
        .any(|a| *a == "--watch" || *a == "--watchAll" || a.starts_with("--watch="))
    {
        return Some(shown());
    }
    const W_WATCHERS: &[&str] = &[
        "tsc",
        "jest",
        "webpack",
        "rollup",
        "babel",
        "sass",
        "mocha",
        "esbuild",
        "tailwindcss",
        "coffee",
        "stylus",
        "less-watch-compiler",
    ];
    if W_WATCHERS.contains(&base) && has("-w") {
        return Some(shown());
    }
    const SERVERS: &[&str] = &[
        "nodemon",
        "webpack-dev-server",
        "live-server",
        "browser-sync",
        "http-server",
        "serve",
    ];
    if SERVERS.contains(&base) {
        return Some(shown());
    }
    let dev_script = |a: Option<&str>| matches!(a, Some("dev" | "start" | "serve" | "watch"));
    let long = match base {
        "cargo" => matches!(first, Some("watch")),
        "cargo-watch" => true,
        "npm" | "bun" => {
            matches!(first, Some("start"))
                || (matches!(first, Some("run" | "run-script")) && dev_script(args.get(1).copied()))
        }
        "yarn" | "pnpm" => {
            dev_script(first) || (matches!(first, Some("run")) && dev_script(args.get(1).copied()))
        }
        "vite" => !matches!(first, Some("build" | "optimize")),
        "next" | "nuxt" | "nuxi" | "astro" | "remix" => matches!(first, Some("dev" | "start")),
        "ng" => matches!(first, Some("serve")),
        "tail" => {
            has("-f")
                || has("-F")
                || has("--follow")
                || args.iter().any(|a| a.starts_with("--follow="))
        }
        "hugo" | "jekyll" | "mkdocs" => matches!(first, Some("server" | "serve")),
        "rails" => matches!(first, Some("server" | "s")),
        "flask" => matches!(first, Some("run")),
        _ => false,
    };
    long.then(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(cmd: &str) -> Option<String> {
        refusal(cmd, Shell::Bash, &Policy::default())
    }

    #[test]
    fn cmd_and_powershell_are_read_by_their_own_separators() {
        let under = |shell, cmd| refusal(cmd, shell, &Policy::default());
        // `&` separates commands in cmd.exe: nothing runs in the background.
        assert_eq!(under(Shell::Cmd, "echo \"a & b\" & echo second"), None);
        assert_eq!(under(Shell::Cmd, "cargo test && exit /b 0"), None);
        assert!(under(Shell::Cmd, "build & start /b server.exe").is_some());
        assert!(under(Shell::Cmd, "START notepad").is_some());
        assert!(under(Shell::Pwsh, "Start-Process server.exe; exit 0").is_some());
        assert_eq!(under(Shell::Pwsh, "cargo test; exit $LASTEXITCODE"), None);
        // Watch commands are refused whatever the shell.
        assert!(under(Shell::Cmd, "npm run dev").is_some());
        // The same text under bash: `&` is the background.
        assert!(under(Shell::Bash, "echo a & echo b").is_some());
    }

    #[test]
    fn the_documented_cases() {
        for ok in [
            "echo \"a & b\"",
            "a && b",
            "cmd 2>&1",
            "grep -- '&' f",
            "cargo test --workspace",
        ] {
            assert_eq!(refused(ok), None, "{ok}");
        }
        for bad in ["sleep 9 &", "x & y", "nohup x", "(x &)", "setsid x"] {
            assert!(refused(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn background_in_every_position() {
        for bad in [
            "true; sleep 9 & wait",
            "echo $(sleep 9 &)",
            "A=1 nohup x",
            "exec nohup x",
            "env -i A=b setsid x",
            "x; disown",
            "if true; then sleep 1 & fi",
            "(a; b) &",
        ] {
            assert!(refused(bad).is_some(), "{bad}");
        }
        for ok in [
            "echo nohup",
            "cat <<EOF\nsleep 9 &\nEOF",
            "true # sleep 9 &",
            "cmd &> /dev/null",
            "cmd |& tee log",
            "echo $((1 & 3))",
            "grep setsid file",
        ] {
            assert_eq!(refused(ok), None, "{ok}");
        }
    }

    #[test]
    fn watch_and_dev_commands() {
        for bad in [
            "cargo watch -x test",
            "npm run dev",
            "npm start",
            "yarn dev",
            "pnpm run watch",
            "vite",
            "vite --port 3000",
            "nodemon app.js",
            "tail -f log.txt",
            "jest --watch",
            "tsc -w",
            "npx vitest --watch",
        ] {
            let reason = refused(bad).unwrap_or_else(|| panic!("{bad} not refused"));
            assert!(reason.contains("policy.allow-watch"), "{reason}");
        }
        for ok in [
            "vite build",
            "npm run build",
            "npm test",
            "tail -n 5 log",
            "jest",
            "tsc --noEmit",
            "grep -w x f",
        ] {
            assert_eq!(refused(ok), None, "{ok}");
        }
        let allow = Policy {
            allow_watch: true,
            ..Policy::default()
        };
        assert_eq!(refusal("npm run dev", Shell::Bash, &allow), None);
    }

    #[test]
    fn deny_patterns() {
        let policy = Policy {
            deny: vec![regex::Regex::new("git push").unwrap()],
            allow_watch: false,
        };
        assert_eq!(
            refusal("make && git push origin", Shell::Bash, &policy).unwrap(),
            "matches policy.deny pattern `git push`"
        );
        assert_eq!(refusal("git status", Shell::Bash, &policy), None);
    }
}

//! What an exit code says by itself, where the shells give it a meaning, and the cause a
//! check's own log gives for it: the words a failure is explained in, so that `exit 127`
//! reads "command not found: `ruff`".

use std::path::Path;

/// The name of signal `signal`, as people know it (`SIGTERM`).
pub fn signal_name(signal: i32) -> String {
    match signal {
        1 => "SIGHUP".to_owned(),
        2 => "SIGINT".to_owned(),
        3 => "SIGQUIT".to_owned(),
        6 => "SIGABRT".to_owned(),
        9 => "SIGKILL".to_owned(),
        11 => "SIGSEGV".to_owned(),
        13 => "SIGPIPE".to_owned(),
        15 => "SIGTERM".to_owned(),
        n => format!("signal {n}"),
    }
}

/// What exit `code` means on a machine of `os` (a result's `runner.os`): on Windows,
/// only what its shells say (127 from bash, 9009 from cmd: the command was not found),
/// as Windows has no signals behind codes above 128; elsewhere [`exit_meaning`].
pub fn exit_meaning_on(code: i32, os: &str) -> Option<String> {
    if os == "windows" {
        return matches!(code, 127 | 9009).then(|| "command not found".to_owned());
    }
    exit_meaning(code)
}

/// What exit `code` means by the shells' convention: 127 the command was not found, 126
/// it could not be run, 128 + N it was ended by signal N (an interrupt, a kill, a
/// crash). `None` for any other code: only the command knows what it means.
pub fn exit_meaning(code: i32) -> Option<String> {
    match code {
        127 => Some("command not found".to_owned()),
        126 => Some("not executable".to_owned()),
        130 => Some("interrupted by SIGINT".to_owned()),
        129..=192 => Some(format!("killed by {}", signal_name(code - 128))),
        _ => None,
    }
}

/// How many bytes of a log's end are read for the shell's own words.
const TAIL_BYTES: u64 = 4096;

/// The cause of exit `code` as the check's log (from byte `from` on: this attempt's
/// output) says it: for 127 and 126 the command the shell named (`command not found:
/// `ruff``), else [`exit_meaning`]. The name is kept only when it is a plain command
/// name or path, so nothing else of the log reaches the texts.
pub fn cause_in_log(code: i32, log: &Path, from: u64) -> Option<String> {
    let meaning = exit_meaning_on(code, std::env::consts::OS)?;
    if !matches!(code, 126 | 127) {
        return Some(meaning);
    }
    let named = read_end(log, from).and_then(|tail| command_named(&tail, code));
    Some(match named {
        Some(name) => format!("{meaning}: `{name}`"),
        None => meaning,
    })
}

/// The last [`TAIL_BYTES`] of `log` from `from` on.
fn read_end(log: &Path, from: u64) -> Option<String> {
    let (file, meta) = crate::untrusted::open_regular(log).ok()?;
    let (_, bytes) = super::logs::last_bytes(file, meta.len(), from, TAIL_BYTES)?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The command a shell's last "not found" (127) or "Permission denied" (126) line
/// names: bash (`bash: line 1: ruff: command not found`), dash (`sh: 1: ruff: not
/// found`), zsh (`zsh: command not found: ruff`), and `env` (`env: 'ruff': No such file
/// or directory`).
fn command_named(tail: &str, code: i32) -> Option<String> {
    let plain = |name: &str| {
        let name = name.trim().trim_matches(|c| c == '\'' || c == '"');
        (!name.is_empty()
            && name.len() <= 100
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._/+-@".contains(c)))
        .then(|| name.to_owned())
    };
    tail.lines().rev().find_map(|line| {
        let line = line.trim_end();
        if code == 127 {
            if let Some(name) = line
                .strip_suffix(": command not found")
                .or_else(|| line.strip_suffix(": not found"))
                .or_else(|| line.strip_suffix(": No such file or directory"))
            {
                return plain(name.rsplit(": ").next().unwrap_or(name));
            }
            if let Some((_, name)) = line.split_once("command not found: ") {
                return plain(name);
            }
            None
        } else {
            let name = line.strip_suffix(": Permission denied")?;
            plain(name.rsplit(": ").next().unwrap_or(name))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shells_name_the_command_they_could_not_find() {
        for (line, name) in [
            ("bash: line 1: ruff: command not found", "ruff"),
            ("sh: 1: ruff: not found", "ruff"),
            ("zsh: command not found: ruff", "ruff"),
            ("env: 'ruff': No such file or directory", "ruff"),
            ("/bin/sh: 1: ./run.sh: not found", "./run.sh"),
        ] {
            assert_eq!(
                command_named(&format!("noise\n{line}\n"), 127).as_deref(),
                Some(name),
                "{line}"
            );
        }
        assert_eq!(
            command_named("bash: line 1: ./x.sh: Permission denied\n", 126).as_deref(),
            Some("./x.sh")
        );
        // Anything but a plain name is not taken into the texts.
        assert_eq!(
            command_named("bash: line 1: `rm -rf /`: command not found\n", 127),
            None
        );
        assert_eq!(command_named("all good\n", 127), None);
    }

    #[test]
    fn codes_the_shells_give_a_meaning_are_said() {
        assert_eq!(exit_meaning(127).as_deref(), Some("command not found"));
        assert_eq!(exit_meaning(126).as_deref(), Some("not executable"));
        assert_eq!(exit_meaning(130).as_deref(), Some("interrupted by SIGINT"));
        assert_eq!(exit_meaning(143).as_deref(), Some("killed by SIGTERM"));
        assert_eq!(exit_meaning(137).as_deref(), Some("killed by SIGKILL"));
        assert_eq!(exit_meaning(1), None);
        assert_eq!(exit_meaning(101), None);
        // Windows has no signals behind its codes; its shells say "not found" so.
        assert_eq!(exit_meaning_on(137, "windows"), None);
        assert_eq!(
            exit_meaning_on(9009, "windows").as_deref(),
            Some("command not found")
        );
        assert_eq!(
            exit_meaning_on(143, "linux").as_deref(),
            Some("killed by SIGTERM")
        );
    }
}

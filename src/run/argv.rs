//! How each `shell:` turns a command string into a program and its arguments.

use std::ffi::OsString;

use super::CheckError;
use crate::manifest::Shell;

use crate::shell::words;

/// A program to spawn and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argv {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The program is a shell, looked up on the `PATH` once per run rather than by each
    /// check's own search ([`super::process`]); a `shell: none` program is searched for
    /// by each check, as it may be one an earlier check built.
    pub shell: bool,
}

/// The argv that runs `cmd` under `shell` (DESIGN.md §4).
pub fn argv(shell: Shell, cmd: &str) -> Result<Argv, CheckError> {
    let make = |program: &str, args: &[&str]| Argv {
        program: program.into(),
        args: args.iter().map(OsString::from).collect(),
        shell: true,
    };
    Ok(match shell {
        // As GitHub Actions runs `shell: bash` steps.
        Shell::Bash => make(
            "bash",
            &["--noprofile", "--norc", "-eo", "pipefail", "-c", cmd],
        ),
        Shell::Sh => make("sh", &["-ec", cmd]),
        Shell::Pwsh => make(
            "pwsh",
            &["-NoLogo", "-NoProfile", "-NonInteractive", "-Command", cmd],
        ),
        Shell::Cmd => make("cmd", &["/D", "/S", "/C", cmd]),
        Shell::None => {
            if let Some(syntax) = words::shell_syntax(cmd) {
                return Err(format!("`shell: none` cannot run shell syntax `{syntax}`").into());
            }
            let mut parts = words::split(cmd)
                .map_err(|e| CheckError(e.to_string()))?
                .into_iter();
            let program = parts.next().ok_or("empty command")?;
            Argv {
                program: program.into(),
                args: parts.map(OsString::from).collect(),
                shell: false,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_runs_like_actions() {
        let a = argv(Shell::Bash, "echo hi").unwrap();
        assert_eq!(a.program, "bash");
        assert_eq!(
            a.args,
            ["--noprofile", "--norc", "-eo", "pipefail", "-c", "echo hi"]
        );
    }

    #[test]
    fn none_splits_words_and_refuses_syntax() {
        let a = argv(Shell::None, "cargo test 'a b'").unwrap();
        assert_eq!(a.program, "cargo");
        assert_eq!(a.args, ["test", "a b"]);
        assert!(argv(Shell::None, "a | b").unwrap_err().contains('|'));
    }
}

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
    /// `cmd /D /S /C CMD`: on Windows the command goes to cmd.exe as written, in one
    /// pair of quotes that `/S` strips (cmd.exe does not read the backslash escapes
    /// other programs' arguments are quoted with).
    pub cmd_exe: bool,
}

/// Before a `pwsh` check's command: errors stop it (`$ErrorActionPreference`).
pub const PWSH_PROLOGUE: &str = "$ErrorActionPreference = 'Stop'\n";
/// After a `pwsh` check's command: the last program's exit code is the check's.
pub const PWSH_EPILOGUE: &str =
    "\nif ((Test-Path -LiteralPath variable:\\LASTEXITCODE)) { exit $LASTEXITCODE }";

/// The argv that runs `cmd` under `shell` (DESIGN.md §4).
pub fn argv(shell: Shell, cmd: &str) -> Result<Argv, CheckError> {
    let make = |program: &str, args: &[&str]| Argv {
        program: program.into(),
        args: args.iter().map(OsString::from).collect(),
        shell: true,
        cmd_exe: false,
    };
    Ok(match shell {
        // As GitHub Actions runs `shell: bash` steps.
        Shell::Bash => make(
            "bash",
            &["--noprofile", "--norc", "-eo", "pipefail", "-c", cmd],
        ),
        Shell::Sh => make("sh", &["-ec", cmd]),
        // As GitHub Actions runs `shell: pwsh` steps: a failing cmdlet stops the script,
        // and a failing last program's exit code is the check's.
        Shell::Pwsh | Shell::Powershell => make(
            if shell == Shell::Pwsh {
                "pwsh"
            } else {
                "powershell"
            },
            &[
                "-NoLogo",
                "-NoProfile",
                "-NonInteractive",
                "-Command",
                &format!("{PWSH_PROLOGUE}{cmd}{PWSH_EPILOGUE}"),
            ],
        ),
        Shell::Cmd => Argv {
            cmd_exe: true,
            ..make("cmd", &["/D", "/S", "/C", cmd])
        },
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
                cmd_exe: false,
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

//! One file per command, from its settings and arguments to its output and exit code.
//! Commands share the CLI's parts (settings, judging, publishing, the live view), never
//! each other.

mod exec;
mod history;
mod hook;
mod init;
#[cfg(feature = "mcp")]
mod mcp;
mod merge;
mod plan;
mod publish;
mod render;
mod report;
mod run;
mod schema;
mod tests;
mod validate_signal;

use super::Error;
use super::args::{Cli, Command, HookCommand, RunFormat};
use super::settings::Settings;

/// Runs the parsed command line.
pub(crate) fn dispatch(cli: Cli) -> Result<i32, Error> {
    if cli.command.is_some() && cli.run.any_set() {
        return Err(Error::Usage(
            "options of `run` (--env, --out, --jobs, --fail-fast, --check) go after the command name, e.g. `run --env linux`; `plan` takes its own --env".to_owned(),
        ));
    }
    let global = cli.global;
    match cli.command {
        Some(Command::Plan(args)) => {
            let settings = Settings::new(&global.with(Some(&args.manifest), None, None, None));
            plan::run(&settings, &args)
        }
        Some(Command::Run(args)) => {
            let global = global.with(
                Some(&args.manifest),
                Some(&args.color),
                Some(&args.quiet),
                None,
            );
            run::run(&Settings::new(&global), &args.run, args.format)
        }
        Some(Command::Merge(args)) => {
            let global = global.with(
                Some(&args.manifest),
                Some(&args.color),
                Some(&args.quiet),
                None,
            );
            merge::run(&Settings::new(&global), &args)
        }
        Some(Command::Render(args)) => {
            let global = global.with(
                Some(&args.manifest),
                Some(&args.color),
                Some(&args.quiet),
                None,
            );
            render::run(&Settings::new(&global), &args)
        }
        Some(Command::ValidateSignal(args)) => {
            let settings = Settings::new(&global.with(Some(&args.manifest), None, None, None));
            validate_signal::run(&settings, &args)
        }
        Some(Command::Publish(args)) => {
            let global = global.with(
                Some(&args.manifest),
                None,
                Some(&args.quiet),
                Some(&args.verbose),
            );
            publish::run(&Settings::new(&global), &args)
        }
        Some(Command::Report(args)) => {
            let global = global.with(
                Some(&args.manifest),
                Some(&args.color),
                Some(&args.quiet),
                Some(&args.verbose),
            );
            report::run(&Settings::new(&global), &args)
        }
        Some(Command::Exec(args)) => exec::run(&args),
        Some(Command::Hook(args)) => {
            let global = match &args.command {
                HookCommand::ClaudeCode(gate)
                | HookCommand::Codex(gate)
                | HookCommand::Gemini(gate)
                | HookCommand::Cursor(gate) => {
                    global.with(Some(&gate.manifest), None, Some(&gate.quiet), None)
                }
                HookCommand::Allow(allow) | HookCommand::Pin(allow) => {
                    global.with(Some(&allow.manifest), None, None, None)
                }
            };
            hook::run(&Settings::new(&global), &args)
        }
        Some(Command::Init(args)) => {
            let settings = Settings::new(&global.with(None, None, Some(&args.quiet), None));
            init::run(&settings, &args)
        }
        Some(Command::Mcp(args)) => {
            let settings = Settings::new(&global.with(Some(&args.manifest), None, None, None));
            #[cfg(feature = "mcp")]
            return mcp::run(&settings, &args);
            #[cfg(not(feature = "mcp"))]
            {
                let _ = (settings, args);
                Err(super::Error::Usage(
                    "this build of cargo-verify-matrix has no MCP server: build it with the `mcp` feature (on by default)".to_owned(),
                ))
            }
        }
        Some(Command::Schema) => schema::run(),
        Some(Command::Tests(args)) => tests::run(&args),
        Some(Command::History(args)) => history::run(&Settings::new(&global), &args),
        None => run::run(&Settings::new(&global), &cli.run, RunFormat::Table),
    }
}

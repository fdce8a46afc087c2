//! Which of the chosen environments this machine is (and so may run), and why not for
//! the others: shared by `run`, the agents' hook and the MCP server.

use crate::manifest::{EnvName, Environment};
use crate::plan::identity::{Identity, Machine};
use crate::plan::select::Surroundings;

/// An environment this machine is not, so nothing of it ran here.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub environment: EnvName,
    /// `it runs on windows-latest (windows x86_64); this machine is linux x86_64`.
    pub why: String,
}

impl Refusal {
    /// `windows runs on windows-latest (windows x86_64); this machine is linux x86_64`.
    pub fn line(&self) -> String {
        format!(
            "{}: not run here: {}",
            self.environment,
            self.why.strip_prefix("it ").unwrap_or(&self.why)
        )
    }
}

/// The environments of `chosen` this machine is (every variant is), and a refusal for
/// each it is not: a result is written only for a machine that is its environment.
pub fn admit<'m>(
    chosen: Vec<&'m Environment>,
    machine: &Machine,
    here: &dyn Surroundings,
) -> (Vec<&'m Environment>, Vec<Refusal>) {
    let mut admitted = Vec::new();
    let mut refused = Vec::new();
    for env in chosen {
        // An environment entered from here is judged by its machine inside.
        if entered_from_here(env) {
            admitted.push(env);
            continue;
        }
        match Identity::of(env).mismatch_here(machine, here) {
            None => admitted.push(env),
            Some(why) => refused.push(Refusal {
                environment: env.name.clone(),
                why,
            }),
        }
    }
    (admitted, refused)
}

/// Whether `env` is entered from this process (it has `enter`, and this is not the run
/// inside it).
pub fn entered_from_here(env: &Environment) -> bool {
    env.enter.is_some() && super::enter::must_enter(env.name.as_str())
}

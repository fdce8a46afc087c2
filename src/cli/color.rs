//! Whether to colour terminal output: `--color`, then CARGO_TERM_COLOR, then NO_COLOR,
//! then whether stdout is a terminal.

use std::io::IsTerminal as _;

use super::args::ColorChoice;

/// Decides colour for stdout.
pub fn use_color(flag: Option<ColorChoice>) -> bool {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let choice = flag.or_else(|| match var("CARGO_TERM_COLOR").as_deref() {
        Some("always") => Some(ColorChoice::Always),
        Some("never") => Some(ColorChoice::Never),
        _ => None,
    });
    match choice {
        Some(ColorChoice::Always) => true,
        Some(ColorChoice::Never) => false,
        _ => var("NO_COLOR").is_none() && std::io::stdout().is_terminal(),
    }
}

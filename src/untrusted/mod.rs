//! The one choke point for text this tool did not write: log tails, summaries, reasons,
//! strings from artifacts and reports, and what an agent passes in.
//!
//! Everything quoted in an output passes through [`Quoter::quote`] before a renderer
//! sees it: terminal escapes and invisible characters removed ([`clean()`]), secrets
//! masked ([`Redactor`]), and claim-shaped text neutralised ([`neutralise()`]). Renderers
//! then only escape for their output context (markdown, HTML, XML, terminal).

pub mod neutralise;
pub mod redact;

use std::sync::Arc;

pub use neutralise::{clean, neutralise};
pub use redact::{MASK, Redactor, is_secret_name};

/// Quotes untrusted text for output.
#[derive(Debug, Clone, Default)]
pub struct Quoter {
    redactor: Arc<Redactor>,
}

impl Quoter {
    /// A quoter masking what `redactor` knows (and token shapes).
    pub fn new(redactor: Redactor) -> Quoter {
        Quoter {
            redactor: Arc::new(redactor),
        }
    }

    /// `text` cleaned, redacted and neutralised: safe to quote in any output.
    pub fn quote(&self, text: &str) -> String {
        neutralise(&self.redactor.redact(&clean(text)))
    }

    /// The redactor, for text that is not quoted in a matrix (e.g. error messages).
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_cleans_then_redacts_then_neutralises() {
        let quoter = Quoter::new(Redactor::from_vars([("API_KEY", "s3cr3t-v4lue")]));
        // The escape split both the secret and the row: cleaning reassembles them first.
        assert_eq!(
            quoter.quote("| a | b | 0 | PA\u{1b}[0mSS | s3cr3t\u{1b}[1m-v4lue"),
            "¦ a ¦ b ¦ 0 ¦ PASS ¦ ***"
        );
    }
}

//! Size limits for rendered text: GitHub caps a comment at 65,536 characters, a check
//! run's summary at 65,535 bytes and a job summary at 1 MiB.

/// An upper bound on the size of a rendered document, in bytes, characters, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Budget {
    /// At most this many bytes of UTF-8.
    pub max_bytes: Option<usize>,
    /// At most this many characters (Unicode scalar values).
    pub max_chars: Option<usize>,
}

impl Budget {
    /// No limit.
    pub const UNLIMITED: Budget = Budget {
        max_bytes: None,
        max_chars: None,
    };

    /// Whether any limit is set.
    pub fn is_limited(&self) -> bool {
        self.max_bytes.is_some() || self.max_chars.is_some()
    }

    /// Whether `text` is within every limit.
    pub fn fits(&self, text: &str) -> bool {
        self.max_bytes.is_none_or(|max| text.len() <= max)
            && self
                .max_chars
                .is_none_or(|max| text.len() <= max || text.chars().count() <= max)
    }

    /// The limits in words, e.g. "65536 characters".
    pub fn describe(&self) -> String {
        match (self.max_bytes, self.max_chars) {
            (Some(b), Some(c)) => format!("{b} bytes and {c} characters"),
            (Some(b), None) => format!("{b} bytes"),
            (None, Some(c)) => format!("{c} characters"),
            (None, None) => "no limit".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_characters_are_counted_apart() {
        let text = "✅✅"; // 2 characters, 6 bytes
        let chars = Budget {
            max_chars: Some(2),
            ..Budget::UNLIMITED
        };
        let bytes = Budget {
            max_bytes: Some(5),
            ..Budget::UNLIMITED
        };
        assert!(chars.fits(text));
        assert!(!bytes.fits(text));
        assert!(Budget::UNLIMITED.fits(text));
        assert!(
            !Budget {
                max_chars: Some(1),
                ..Budget::UNLIMITED
            }
            .fits(text)
        );
    }
}

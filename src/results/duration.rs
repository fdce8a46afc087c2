//! Durations as people read them, in reasons, tables and grids.

use std::time::Duration;

/// `850ms`, `8.1s`, `2m 05s`.
pub fn format_duration(d: Duration) -> String {
    ForPeople(d).to_string()
}

/// A duration as [`format_duration`] writes it, written where it is shown.
pub struct ForPeople(pub Duration);

impl std::fmt::Display for ForPeople {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = self.0;
        let ms = d.as_millis();
        if ms < 1000 {
            write!(f, "{ms}ms")
        } else if ms < 60_000 && ms.is_multiple_of(1000) {
            write!(f, "{}s", ms / 1000)
        } else if ms < 60_000 {
            write!(f, "{:.1}s", d.as_secs_f64())
        } else {
            let secs = d.as_secs();
            write!(f, "{}m {:02}s", secs / 60, secs % 60)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_for_people() {
        assert_eq!(format_duration(Duration::from_millis(850)), "850ms");
        assert_eq!(format_duration(Duration::from_millis(8100)), "8.1s");
        assert_eq!(format_duration(Duration::from_secs(5)), "5s");
        assert_eq!(format_duration(Duration::from_secs(125)), "2m 05s");
    }
}

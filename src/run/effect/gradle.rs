//! Gradle: `5 tests completed, 1 failed`, and tasks that did not run (`UP-TO-DATE`,
//! `FROM-CACHE`, `NO-SOURCE`), which make the gate a no-op.

use super::{Findings, Parser, num, one_line};
use crate::manifest::Gate;

re!(
    GRADLE,
    r"^(\d+) tests? completed, (\d+) failed(?:, (\d+) skipped)?"
);
re!(
    GRADLE_TASK,
    r"^> Task (\S+) (UP-TO-DATE|FROM-CACHE|NO-SOURCE)\s*$"
);

#[derive(Default)]
pub(super) struct Gradle;

impl Parser for Gradle {
    fn triggers(&self) -> &'static [&'static str] {
        &["completed", "Task "]
    }

    fn observe(&mut self, line: &str, found: &mut Findings) {
        if !line.contains("Task ") {
            return;
        }
        let Some(c) = GRADLE_TASK.captures(line) else {
            return;
        };
        // For a test gate, only a test task that did not run means the tests did not.
        let task = c[1].to_ascii_lowercase();
        let relevant = found.gate != Gate::Test
            || (task.contains("test")
                && !task.contains("compile")
                && !task.contains("classes")
                && !task.contains("resources"));
        if relevant && found.noop.is_none() {
            found.noop = Some(format!("`{}`: the task did not run", one_line(line)));
        }
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if !(line.contains("tests completed") || line.contains("test completed")) {
            return false;
        }
        if let Some(c) = GRADLE.captures(line) {
            let (total, failed) = (num(&c, 1), num(&c, 2));
            found.add_total("gradle", total, failed, num(&c, 3));
        }
        true
    }
}

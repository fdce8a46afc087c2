//! Other systems: the facts every build knows.

use std::path::Path;

use crate::run::facts::OsFacts;

pub fn os_facts(_root: &Path) -> OsFacts {
    OsFacts::default()
}

pub fn container(_root: &Path) -> Option<Option<String>> {
    None
}

pub fn machine_id(_root: &Path) -> Option<String> {
    None
}

pub fn hostname() -> String {
    String::new()
}

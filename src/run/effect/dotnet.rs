//! `dotnet test`: VSTest's `Passed! - Failed: 0, Passed: 3, …` and Microsoft.Testing.
//! Platform's `Test summary: total: 3, failed: 0, …`.

use super::{Findings, Parser, num};

re!(
    DOTNET_VSTEST,
    r"^\s*(?:Passed|Failed)!\s+-\s+Failed:\s+(\d+), Passed:\s+(\d+), Skipped:\s+(\d+), Total:\s+(\d+)"
);
re!(
    DOTNET_MTP,
    r"^\s*Test summary: total: (\d+), failed: (\d+), succeeded: (\d+), skipped: (\d+)"
);

#[derive(Default)]
pub(super) struct Dotnet;

impl Parser for Dotnet {
    fn triggers(&self) -> &'static [&'static str] {
        // `Test summary` without its first three letters: `Test` is in most lines of
        // other runners' logs (`--- PASS: TestParse`), and the search, which compares a
        // word's first four bytes before the rest, would stop at each of them.
        &["Failed:", "t summary"]
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if line.contains("Failed:") {
            if let Some(c) = DOTNET_VSTEST.captures(line) {
                found.add("dotnet test", num(&c, 2), num(&c, 1), num(&c, 3));
            }
            return true;
        }
        if !line.contains("Test summary:") {
            return false;
        }
        if let Some(c) = DOTNET_MTP.captures(line) {
            found.add("dotnet test", num(&c, 3), num(&c, 2), num(&c, 4));
        }
        true
    }
}

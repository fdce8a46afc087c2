//! The test report formats a check's `reports:` may name.

/// The formats the runners' reports are read in (`reports: { path, format }` names one;
/// otherwise the content tells).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Junit,
    Ctrf,
    GoTestJson,
    /// `jest --json`.
    JestJson,
    /// `vitest --reporter=json`.
    VitestJson,
    /// `mocha --reporter json`.
    MochaJson,
    /// `rspec --format json`.
    RspecJson,
    /// Playwright's `--reporter=json`.
    PlaywrightJson,
    /// Visual Studio's test results (`dotnet test --logger trx`).
    Trx,
    /// NUnit's `TestResult.xml` (NUnit 3, and NUnit 2's).
    Nunit,
    /// xUnit.net's own XML (`--xml`).
    Xunit,
    /// The Test Anything Protocol (node's test runner, `prove -v`, Bats).
    Tap,
}

impl ReportFormat {
    /// Every format, in the order messages list them.
    pub const ALL: [ReportFormat; 12] = [
        ReportFormat::Junit,
        ReportFormat::Trx,
        ReportFormat::Nunit,
        ReportFormat::Xunit,
        ReportFormat::Ctrf,
        ReportFormat::JestJson,
        ReportFormat::VitestJson,
        ReportFormat::MochaJson,
        ReportFormat::RspecJson,
        ReportFormat::PlaywrightJson,
        ReportFormat::GoTestJson,
        ReportFormat::Tap,
    ];

    /// The spelling in result files and in the counts' `runner`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReportFormat::Junit => "junit",
            ReportFormat::Ctrf => "ctrf",
            ReportFormat::GoTestJson => "go-test-json",
            ReportFormat::JestJson => "jest-json",
            ReportFormat::VitestJson => "vitest-json",
            ReportFormat::MochaJson => "mocha-json",
            ReportFormat::RspecJson => "rspec-json",
            ReportFormat::PlaywrightJson => "playwright-json",
            ReportFormat::Trx => "trx",
            ReportFormat::Nunit => "nunit",
            ReportFormat::Xunit => "xunit",
            ReportFormat::Tap => "tap",
        }
    }
}

impl std::str::FromStr for ReportFormat {
    type Err = String;

    /// A format by its spelling (`reports: { path, format }`, `tests --report-format`).
    fn from_str(name: &str) -> Result<ReportFormat, String> {
        ReportFormat::ALL
            .into_iter()
            .find(|f| f.as_str() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = ReportFormat::ALL.iter().map(|f| f.as_str()).collect();
                format!(
                    "unknown report format `{}`: it is one of {}",
                    name.escape_debug(),
                    known.join(", ")
                )
            })
    }
}

impl std::fmt::Display for ReportFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

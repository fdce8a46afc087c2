//! `init`: a starter `verify-matrix.yml` detected from the repository, and the
//! three-job workflow that runs it.
//!
//! Detection looks at the files at the repository's top: a Cargo workspace (through
//! `cargo metadata`, so a virtual workspace counts its members), `package.json` (its
//! scripts and lock file), `pyproject.toml` / `pytest.ini` / `setup.cfg`, `go.mod`,
//! RSpec's `.rspec`, a .NET solution or project, and Perl's `t/*.t`.
//! Each ecosystem found contributes its usual checks; nothing found gives a manifest with
//! one placeholder check that fails until it is replaced (nothing is verified yet). A clean git tree is offered, commented out: it
//! would fail the first run on whatever is not committed yet.

use std::fmt::Write as _;
use std::path::Path;

/// The workflow `init` writes: the basic three-job workflow of the book's GitHub Actions
/// chapter, the same file the repository keeps (and lints) under `fixtures/workflows/`.
pub const WORKFLOW: &str = include_str!("../../fixtures/workflows/verify-matrix.yml");

/// Where `init` writes, relative to the repository.
pub const MANIFEST_PATH: &str = "verify-matrix.yml";
/// Where `init` writes the workflow, relative to the repository.
pub const WORKFLOW_PATH: &str = ".github/workflows/verify-matrix.yml";

/// What was found in the repository.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Project {
    /// A Cargo package or workspace: how many members.
    pub cargo: Option<usize>,
    /// A Node package: its package manager and the scripts it defines.
    pub node: Option<Node>,
    /// A Python project: whether ruff is configured.
    pub python: Option<Python>,
    /// A Go module.
    pub go: bool,
    /// A Ruby project with RSpec.
    pub ruby: Option<Ruby>,
    /// A .NET solution or project at the top.
    pub dotnet: Option<Dotnet>,
    /// A Perl distribution with tests in `t/`.
    pub perl: Option<Perl>,
    /// The repository's default branch, which the workflow's `push` runs on: the
    /// remote's default, else the branch checked out; `None` (not a git repository):
    /// `main`.
    pub branch: Option<String>,
    /// The operating system of the machine `init` ran on, when it is not Linux
    /// (`macos`, `windows`): declared too, so that the developer's own machine runs the
    /// checks as one of the manifest's environments.
    pub here: Option<&'static str>,
}

/// A `package.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// `npm`, `pnpm` or `yarn`, from the lock file.
    pub manager: &'static str,
    /// Whether a lock file exists (`npm ci` needs `package-lock.json`).
    pub locked: bool,
    /// The scripts among `lint`, `typecheck`, `build`, `test` it defines (npm's
    /// placeholder `test` script does not count).
    pub scripts: Vec<&'static str>,
    /// The test runner its `test` script runs, when it is one whose report is read
    /// (`jest`, `vitest`, `mocha`; named in the script, else the only one depended on).
    pub runner: Option<&'static str>,
}

/// A Ruby project with RSpec (`.rspec`, or `spec/spec_helper.rb`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ruby {
    /// Whether a `Gemfile` is there (`bundle exec rspec`).
    pub bundler: bool,
}

/// A .NET solution or project (`*.sln`, `*.slnx`, `*.csproj`, `*.fsproj`, `*.vbproj`) at
/// the top.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dotnet {
    /// What `dotnet` is pointed at: the solution, when there are several files it
    /// could choose from (it refuses to choose), else nothing.
    pub target: Option<String>,
    /// Whether a `global.json` pins the SDK.
    pub global_json: bool,
}

/// A Perl distribution: `.t` files in `t/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Perl {
    /// Whether a `cpanfile` lists its dependencies.
    pub cpanfile: bool,
}

/// A Python project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Python {
    pub ruff: bool,
}

impl Project {
    /// Names of what was found, for people.
    pub fn describe(&self) -> Vec<String> {
        let mut found = Vec::new();
        match self.cargo {
            Some(1) => found.push("a Cargo package".to_owned()),
            Some(n) => found.push(format!("a Cargo workspace of {n} packages")),
            None => {}
        }
        if let Some(node) = &self.node {
            found.push(format!("a Node package ({})", node.manager));
        }
        if self.python.is_some() {
            found.push("a Python project".to_owned());
        }
        if self.go {
            found.push("a Go module".to_owned());
        }
        if self.ruby.is_some() {
            found.push("a Ruby project with RSpec".to_owned());
        }
        if self.dotnet.is_some() {
            found.push("a .NET project".to_owned());
        }
        if self.perl.is_some() {
            found.push("a Perl distribution".to_owned());
        }
        found
    }
}

/// Looks at `dir` (the repository's top folder).
pub fn detect(dir: &Path) -> Project {
    Project {
        cargo: detect_cargo(dir),
        node: detect_node(dir),
        python: detect_python(dir),
        go: dir.join("go.mod").is_file(),
        ruby: detect_ruby(dir),
        dotnet: detect_dotnet(dir),
        perl: detect_perl(dir),
        branch: default_branch(dir),
        here: match std::env::consts::OS {
            "macos" => Some("macos"),
            "windows" => Some("windows"),
            _ => None,
        },
    }
}

/// The repository's default branch: the remote's (`origin/HEAD`), else the branch
/// checked out (a new repository's only branch); `None` outside a git repository.
fn default_branch(dir: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        let name = text.trim();
        (out.status.success() && !name.is_empty()).then(|| name.to_owned())
    };
    git(&[
        "symbolic-ref",
        "--quiet",
        "--short",
        "refs/remotes/origin/HEAD",
    ])
    .map(|remote| {
        remote
            .strip_prefix("origin/")
            .map_or(remote.clone(), str::to_owned)
    })
    .or_else(|| git(&["symbolic-ref", "--quiet", "--short", "HEAD"]))
}

/// `branch` as a YAML flow item: plain where it can be, else double-quoted.
fn yaml_item(branch: &str) -> String {
    let plain = !branch.is_empty()
        && branch
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c))
        && !branch.starts_with(['-', '.']);
    if plain {
        branch.to_owned()
    } else {
        serde_json::to_string(branch).unwrap_or_else(|_| "main".to_owned())
    }
}

fn detect_cargo(dir: &Path) -> Option<usize> {
    let manifest = dir.join("Cargo.toml");
    if !manifest.is_file() {
        return None;
    }
    // `--no-deps` resolves nothing and needs no network; a Cargo.toml cargo cannot read
    // still counts as one package (the checks will say what is wrong with it).
    let members = cargo_metadata::MetadataCommand::new()
        .manifest_path(&manifest)
        .no_deps()
        .exec()
        .map(|m| m.workspace_members.len())
        .unwrap_or(1);
    Some(members.max(1))
}

fn detect_node(dir: &Path) -> Option<Node> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let package: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let defined = |name: &str| {
        package["scripts"][name]
            .as_str()
            .is_some_and(|s| !s.contains("no test specified"))
    };
    let scripts: Vec<&'static str> = ["lint", "typecheck", "build", "test"]
        .into_iter()
        .filter(|s| defined(s))
        .collect();
    let manager = if dir.join("pnpm-lock.yaml").is_file() {
        "pnpm"
    } else if dir.join("yarn.lock").is_file() {
        "yarn"
    } else {
        "npm"
    };
    let locked = [
        "package-lock.json",
        "npm-shrinkwrap.json",
        "pnpm-lock.yaml",
        "yarn.lock",
    ]
    .iter()
    .any(|name| dir.join(name).is_file());
    let script = package["scripts"]["test"].as_str().unwrap_or_default();
    let depends = |name: &str| {
        ["dependencies", "devDependencies"]
            .iter()
            .any(|key| package[key][name].is_string())
    };
    let runners = ["jest", "vitest", "mocha"];
    let runner = runners
        .into_iter()
        .find(|r| {
            script
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == *r)
        })
        .or_else(|| {
            let depended: Vec<&'static str> = runners.into_iter().filter(|r| depends(r)).collect();
            (depended.len() == 1).then(|| depended[0])
        })
        .filter(|_| scripts.contains(&"test"));
    Some(Node {
        manager,
        scripts,
        locked,
        runner,
    })
}

/// The report file a Node test runner is asked to write, and the arguments that ask
/// it (after the `test` script's own).
pub fn node_report(runner: &str) -> Option<(&'static str, &'static str)> {
    Some(match runner {
        "jest" => (
            "jest-report.json",
            "--ci --json --outputFile=jest-report.json",
        ),
        "vitest" => (
            "vitest-report.json",
            "--run --reporter=default --reporter=json --outputFile.json=vitest-report.json",
        ),
        "mocha" => (
            "mocha-report.json",
            "--reporter json --reporter-option output=mocha-report.json",
        ),
        _ => return None,
    })
}

/// The report file RSpec is asked to write.
pub const RSPEC_REPORT: &str = "rspec-report.json";

/// A Ruby project with RSpec in `dir`.
fn detect_ruby(dir: &Path) -> Option<Ruby> {
    (dir.join(".rspec").is_file() || dir.join("spec/spec_helper.rb").is_file()).then(|| Ruby {
        bundler: dir.join("Gemfile").is_file(),
    })
}

/// Where `dotnet test` writes its TRX files (one per test project, named by time).
pub const TRX_FOLDER: &str = "TestResults";
/// Where `prove`'s TAP is kept.
pub const PROVE_REPORT: &str = "prove-report.tap";

/// A .NET solution or project at the top of `dir`.
fn detect_dotnet(dir: &Path) -> Option<Dotnet> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    let ends = |name: &str, ends: &[&str]| ends.iter().any(|e| name.ends_with(e));
    let solutions: Vec<&String> = names
        .iter()
        .filter(|n| ends(n, &[".sln", ".slnx"]))
        .collect();
    let projects = names
        .iter()
        .filter(|n| ends(n, &[".csproj", ".fsproj", ".vbproj"]))
        .count();
    if solutions.is_empty() && projects == 0 {
        return None;
    }
    // `dotnet test` picks the one solution or project there is, and refuses to pick
    // among several: then the first solution is named.
    let target = (solutions.len() + projects > 1)
        .then(|| solutions.first().map(|s| (*s).clone()))
        .flatten();
    Some(Dotnet {
        target,
        global_json: dir.join("global.json").is_file(),
    })
}

/// A Perl distribution in `dir`: a `t/` folder with `.t` files.
fn detect_perl(dir: &Path) -> Option<Perl> {
    let tests = std::fs::read_dir(dir.join("t")).ok()?;
    let any = tests
        .filter_map(|e| e.ok())
        .any(|e| e.path().extension().is_some_and(|x| x == "t"));
    any.then(|| Perl {
        cpanfile: dir.join("cpanfile").is_file(),
    })
}

fn detect_python(dir: &Path) -> Option<Python> {
    let pyproject = std::fs::read_to_string(dir.join("pyproject.toml")).unwrap_or_default();
    let found = !pyproject.is_empty()
        || dir.join("pytest.ini").is_file()
        || dir.join("setup.cfg").is_file()
        || dir.join("setup.py").is_file();
    found.then(|| Python {
        ruff: pyproject.contains("[tool.ruff") || dir.join("ruff.toml").is_file(),
    })
}

/// The starter workflow for `project`: [`WORKFLOW`] with, in the run job, the steps
/// that set up each detected ecosystem's toolchain (its official setup action) and
/// dependencies, so the checks of [`manifest_text`] pass on the first run.
pub fn workflow_text(project: &Project) -> String {
    const PLACEHOLDER: &str =
        "      # Install here what the checks need (toolchains, dependencies).\n";
    let mut steps = String::new();
    if project.cargo.is_some() {
        steps.push_str(
            "      - uses: dtolnay/rust-toolchain@stable\n\
             \x20       with:\n\
             \x20         components: rustfmt, clippy\n",
        );
    }
    if let Some(node) = &project.node {
        let cache = match (node.manager, node.locked) {
            (manager, true) => format!("\n          cache: {manager}"),
            (_, false) => String::new(),
        };
        if node.manager == "pnpm" {
            steps.push_str("      - uses: pnpm/action-setup@v4\n");
        }
        steps.push_str(&format!(
            "      - uses: actions/setup-node@v6\n\
             \x20       with:\n\
             \x20         node-version: lts/*{cache}\n"
        ));
    }
    if project.python.is_some() {
        let ruff = if project.python.as_ref().is_some_and(|p| p.ruff) {
            " ruff"
        } else {
            ""
        };
        steps.push_str(&format!(
            "      - uses: actions/setup-python@v6\n\
             \x20       with:\n\
             \x20         python-version: \"3.x\"\n\
             \x20     # The project and its test tools; adjust to how it declares them.\n\
             \x20     - run: |\n\
             \x20         python -m pip install --upgrade pip\n\
             \x20         if [ -f requirements.txt ]; then python -m pip install -r requirements.txt; fi\n\
             \x20         if [ -f pyproject.toml ] || [ -f setup.py ]; then python -m pip install -e .; fi\n\
             \x20         python -m pip install pytest{ruff}\n\
             \x20       shell: bash\n"
        ));
    }
    if project.go {
        steps.push_str(
            "      - uses: actions/setup-go@v6\n\
             \x20       with:\n\
             \x20         go-version-file: go.mod\n",
        );
    }
    if let Some(ruby) = &project.ruby {
        steps.push_str(&format!(
            "      - uses: ruby/setup-ruby@v1\n\
             \x20       with:\n\
             \x20         ruby-version: ruby\n\
             \x20         bundler-cache: {}\n",
            ruby.bundler
        ));
    }
    if let Some(dotnet) = &project.dotnet {
        let version = if dotnet.global_json {
            "global-json-file: global.json"
        } else {
            "dotnet-version: 8.0.x"
        };
        steps.push_str(&format!(
            "      - uses: actions/setup-dotnet@v5\n\
             \x20       with:\n\
             \x20         {version}\n"
        ));
    }
    if project.perl.as_ref().is_some_and(|p| p.cpanfile) {
        steps.push_str(
            "      - uses: shogo82148/actions-setup-perl@v1\n\
             \x20       with:\n\
             \x20         install-modules-with: cpanm\n",
        );
    }
    let workflow = match project.branch.as_deref() {
        Some(branch) if branch != "main" => WORKFLOW.replacen(
            "    branches: [main]\n",
            &format!("    branches: [{}]\n", yaml_item(branch)),
            1,
        ),
        _ => WORKFLOW.to_owned(),
    };
    if steps.is_empty() {
        return workflow;
    }
    workflow.replacen(
        PLACEHOLDER,
        &format!("      # The toolchains and dependencies the checks need.\n{steps}"),
        1,
    )
}

/// The image GitLab's Linux legs run in when the manifest names none: the toolchain
/// of the first ecosystem found (each has curl and git, which the pipeline uses).
pub fn linux_image(project: &Project) -> &'static str {
    if project.cargo.is_some() {
        "rust:latest"
    } else if project.node.is_some() {
        "node:lts"
    } else if project.python.is_some() {
        "python:3"
    } else if project.go {
        "golang:latest"
    } else if project.ruby.is_some() {
        "ruby:latest"
    } else if project.dotnet.is_some() {
        "mcr.microsoft.com/dotnet/sdk:8.0"
    } else if project.perl.is_some() {
        "perl:latest"
    } else {
        "buildpack-deps:stable"
    }
}

/// The starter manifest for `project`, commented for people who have not read the
/// documentation.
pub fn manifest_text(project: &Project) -> String {
    let mut text = String::from(
        "# verify-matrix.yml: the checks a pull request must pass, and the environments it\n\
         # must pass them in. Written by `cargo verify-matrix init`; edit freely.\n\
         #   cargo verify-matrix plan     the (check × environment) matrix\n\
         #   cargo verify-matrix          run this environment's checks\n\
         # Every key: `cargo verify-matrix schema` prints the JSON Schema (for editors).\n\
         version: 1\n\
         \n\
         # Each environment is one job of the workflow's matrix (`runs-on`, `container`),\n\
         # and `detect` tells `cargo verify-matrix` on a machine which one it is in.\n\
         environments:\n\
         \x20 - name: linux\n\
         \x20   runs-on: ubuntu-latest\n\
         \x20   detect: { os: linux }\n",
    );
    // The machine `init` ran on is one of them, so that the checks run there too.
    for os in ["macos", "windows"] {
        let comment = if project.here == Some(os) {
            "  # This machine's system: `cargo verify-matrix` runs the checks here as it.\n"
        } else {
            ""
        };
        let mark = if project.here == Some(os) { "" } else { "# " };
        let _ = write!(
            text,
            "{comment}  {mark}- name: {os}\n  {mark}  runs-on: {os}-latest\n  {mark}  detect: {{ os: {os} }}\n"
        );
    }
    text.push_str(
        "\n\
         defaults:\n\
         \x20 timeout: 30m\n\
         \n\
         # Checks run in this order. `run:` passes on exit code 0; `test:` must also show\n\
         # that tests really ran; `gate:` says what kind of check it is.\n\
         checks:\n",
    );
    let any = project.cargo.is_some()
        || project.node.is_some()
        || project.python.is_some()
        || project.go
        || project.ruby.is_some()
        || project.dotnet.is_some()
        || project.perl.is_some();
    if let Some(members) = project.cargo {
        rust_checks(&mut text, members);
    }
    if let Some(node) = &project.node {
        node_checks(&mut text, node);
    }
    if let Some(python) = &project.python {
        python_checks(&mut text, python);
    }
    if project.go {
        go_checks(&mut text);
    }
    if let Some(ruby) = &project.ruby {
        ruby_checks(&mut text, ruby);
    }
    if let Some(dotnet) = &project.dotnet {
        dotnet_checks(&mut text, dotnet);
    }
    if project.perl.is_some() {
        perl_checks(&mut text);
    }
    if !any {
        text.push_str(
            "  # No Cargo.toml, package.json, pyproject.toml, go.mod, .rspec, .NET project or\n\
             \x20 # t/*.t was found: add your build, lint and test commands here. Until then\n\
             \x20 # nothing is verified, and this check says so.\n\
             \x20 - id: tests\n\
             \x20   run: echo 'no test command yet - write yours into verify-matrix.yml, e.g. make test' && exit 1\n",
        );
    }
    // Offered, not on: a clean tree fails on whatever is not committed yet (the files
    // `init` just wrote, work in progress, a lock file or build output the first run
    // makes), so it would make the first run red.
    text.push_str(
        "  # Once everything the checks make is committed or ignored (Cargo.lock, build\n\
         \x20 # output), this fails when a check leaves the tree changed (formatting,\n\
         \x20 # generated code) or creates files nobody ignores:\n\
         \x20 # - id: tree-clean\n\
         \x20 #   name: No uncommitted changes\n\
         \x20 #   git-clean: .\n\
         \x20 #   required: false\n",
    );
    text
}

/// The checks of a Cargo project (`members` packages).
fn rust_checks(text: &mut String, members: usize) {
    let workspace = if members > 1 { " --workspace" } else { "" };
    writeln!(
        text,
        "  # Rust\n\
         \x20 - id: fmt\n\
         \x20   name: Formatting\n\
         \x20   run: cargo fmt --all --check\n\
         \x20   gate: format\n\
         \x20 - id: clippy\n\
         \x20   name: Clippy, warnings denied\n\
         \x20   run: cargo clippy{workspace} --all-targets -- -D warnings\n\
         \x20   gate: lint\n\
         \x20 - id: tests\n\
         \x20   name: Tests\n\
         \x20   test: cargo test{workspace}"
    )
    .expect("writing to a String");
}

/// The checks of a Node project: install, then each script it has.
fn node_checks(text: &mut String, node: &Node) {
    let manager = node.manager;
    // `npm ci` refuses to run without a lock file.
    let install = match (manager, node.locked) {
        ("pnpm", _) => "pnpm install --frozen-lockfile",
        ("yarn", _) => "yarn install --frozen-lockfile",
        (_, true) => "npm ci",
        (_, false) => "npm install",
    };
    writeln!(
        text,
        "  # Node ({manager})\n\
         \x20 - id: {manager}-install\n\
         \x20   name: Install dependencies\n\
         \x20   run: {install}\n\
         \x20   gate: build"
    )
    .expect("writing to a String");
    for script in &node.scripts {
        let gate = match *script {
            "lint" => "lint",
            "typecheck" => "typecheck",
            "build" => "build",
            _ => "test",
        };
        let key = if gate == "test" { "test" } else { "run" };
        let command = match (manager, *script) {
            ("npm", "test") => "npm test".to_owned(),
            ("yarn", s) => format!("yarn {s}"),
            (m, s) => format!("{m} run {s}"),
        };
        // The runner's own report says which tests ran and where one failed.
        match node
            .runner
            .and_then(node_report)
            .filter(|_| *script == "test")
        {
            Some((report, args)) => {
                let pass = match manager {
                    "npm" => format!("{command} -- {args}"),
                    _ => format!("{command} {args}"),
                };
                writeln!(
                    text,
                    "  - id: {manager}-{script}\n    {key}: {pass}\n    reports: {report}"
                )
                .unwrap();
            }
            None => writeln!(text, "  - id: {manager}-{script}\n    {key}: {command}").unwrap(),
        }
        if key == "run" {
            writeln!(text, "    gate: {gate}").unwrap();
        }
    }
}

/// The checks of a Python project.
fn python_checks(text: &mut String, python: &Python) {
    text.push_str("  # Python\n");
    if python.ruff {
        text.push_str("  - id: ruff\n    run: ruff check .\n    gate: lint\n");
    }
    text.push_str("  - id: pytest\n    test: python -m pytest\n");
}

/// The checks of a Ruby project with RSpec: its report says which examples ran.
fn ruby_checks(text: &mut String, ruby: &Ruby) {
    let rspec = if ruby.bundler {
        "bundle exec rspec"
    } else {
        "rspec"
    };
    writeln!(
        text,
        "  # Ruby\n\
         \x20 - id: rspec\n\
         \x20   test: {rspec} --format progress --format json --out {RSPEC_REPORT}\n\
         \x20   reports: {RSPEC_REPORT}"
    )
    .expect("writing to a String");
}

/// The checks of a .NET solution: build, then test with a TRX file per test project
/// (the folder emptied first, so that only this run's files are read).
fn dotnet_checks(text: &mut String, dotnet: &Dotnet) {
    let target = dotnet
        .target
        .as_ref()
        .map_or_else(String::new, |t| format!(" {t}"));
    writeln!(
        text,
        "  # .NET\n\
         \x20 - id: dotnet-build\n\
         \x20   run: dotnet build{target}\n\
         \x20   gate: build\n\
         \x20 - id: dotnet-test\n\
         \x20   test: rm -rf {TRX_FOLDER} && dotnet test{target} --logger trx --results-directory {TRX_FOLDER}\n\
         \x20   reports: \"{TRX_FOLDER}/**/*.trx\""
    )
    .expect("writing to a String");
}

/// The checks of a Perl distribution: `prove`, its verbose TAP kept as the report.
fn perl_checks(text: &mut String) {
    writeln!(
        text,
        "  # Perl\n\
         \x20 - id: prove\n\
         \x20   test: prove -lrv --merge t | tee {PROVE_REPORT}\n\
         \x20   reports: {PROVE_REPORT}"
    )
    .expect("writing to a String");
}

/// The report files the checks of `project` write, at the repository's top: kept out
/// of git as the results folder is.
pub fn report_files(project: &Project) -> Vec<&'static str> {
    let mut files: Vec<&'static str> = project
        .node
        .as_ref()
        .and_then(|n| n.runner)
        .and_then(node_report)
        .map(|(report, _)| report)
        .into_iter()
        .collect();
    if project.ruby.is_some() {
        files.push(RSPEC_REPORT);
    }
    if project.dotnet.is_some() {
        files.push(TRX_FOLDER);
    }
    if project.perl.is_some() {
        files.push(PROVE_REPORT);
    }
    files
}

/// The checks of a Go module.
fn go_checks(text: &mut String) {
    text.push_str(
        "  # Go\n\
         \x20 - id: gofmt\n\
         \x20   run: test -z \"$(gofmt -l .)\"\n\
         \x20   gate: format\n\
         \x20 - id: go-vet\n\
         \x20   run: go vet ./...\n\
         \x20   gate: lint\n\
         \x20 - id: go-test\n\
         \x20   test: go test ./...\n",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> crate::manifest::Manifest {
        crate::manifest::from_yaml_text(Path::new("verify-matrix.yml"), text)
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    fn ids(text: &str) -> Vec<String> {
        parse(text)
            .checks
            .iter()
            .map(|c| c.id.as_str().to_owned())
            .collect()
    }

    #[test]
    fn every_combination_of_ecosystems_gives_a_valid_manifest() {
        let node = |manager| Node {
            manager,
            scripts: vec!["lint", "typecheck", "build", "test"],
            locked: true,
            runner: Some("vitest"),
        };
        let everything = Project {
            cargo: Some(3),
            node: Some(node("yarn")),
            python: Some(Python { ruff: true }),
            go: true,
            ruby: Some(Ruby { bundler: true }),
            dotnet: Some(Dotnet {
                target: Some("App.sln".to_owned()),
                global_json: false,
            }),
            perl: Some(Perl { cpanfile: true }),
            branch: None,
            here: None,
        };
        assert_eq!(
            ids(&manifest_text(&everything)),
            [
                "fmt",
                "clippy",
                "tests",
                "yarn-install",
                "yarn-lint",
                "yarn-typecheck",
                "yarn-build",
                "yarn-test",
                "ruff",
                "pytest",
                "gofmt",
                "go-vet",
                "go-test",
                "rspec",
                "dotnet-build",
                "dotnet-test",
                "prove"
            ]
        );
        // Each runner whose report is read writes it, and the check reads it.
        let text = manifest_text(&everything);
        assert!(
            text.contains("  - id: yarn-test\n    test: yarn test --run --reporter=default --reporter=json --outputFile.json=vitest-report.json\n    reports: vitest-report.json\n"),
            "{text}"
        );
        assert!(
            text.contains("    test: bundle exec rspec --format progress --format json --out rspec-report.json\n    reports: rspec-report.json\n"),
            "{text}"
        );
        assert!(
            text.contains("  - id: dotnet-test\n    test: rm -rf TestResults && dotnet test App.sln --logger trx --results-directory TestResults\n    reports: \"TestResults/**/*.trx\"\n"),
            "{text}"
        );
        assert!(
            text.contains("  - id: prove\n    test: prove -lrv --merge t | tee prove-report.tap\n    reports: prove-report.tap\n"),
            "{text}"
        );
        assert_eq!(
            report_files(&everything),
            [
                "vitest-report.json",
                "rspec-report.json",
                "TestResults",
                "prove-report.tap"
            ]
        );
        for manager in ["npm", "pnpm"] {
            let project = Project {
                node: Some(node(manager)),
                ..Project::default()
            };
            parse(&manifest_text(&project));
        }
        assert_eq!(ids(&manifest_text(&Project::default())), ["tests"]);
    }

    /// `dotnet test` refuses to choose among several solutions and projects: the
    /// solution is named then, and only then.
    #[test]
    fn a_dotnet_solution_is_named_only_where_dotnet_would_not_choose() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(detect_dotnet(dir.path()), None);
        std::fs::write(dir.path().join("App.csproj"), "<Project/>").unwrap();
        let one = detect_dotnet(dir.path()).unwrap();
        assert_eq!(one.target, None);
        std::fs::write(dir.path().join("App.sln"), "").unwrap();
        std::fs::write(dir.path().join("global.json"), "{}").unwrap();
        let two = detect_dotnet(dir.path()).unwrap();
        assert_eq!(two.target.as_deref(), Some("App.sln"));
        assert!(two.global_json);
        let workflow = workflow_text(&Project {
            dotnet: Some(two),
            ..Project::default()
        });
        assert!(
            workflow.contains("- uses: actions/setup-dotnet@v5\n        with:\n          global-json-file: global.json\n"),
            "{workflow}"
        );
        // Perl: `.t` files in `t/`, nothing else.
        assert_eq!(detect_perl(dir.path()), None);
        std::fs::create_dir(dir.path().join("t")).unwrap();
        std::fs::write(dir.path().join("t/helper.pl"), "1;").unwrap();
        assert_eq!(detect_perl(dir.path()), None);
        std::fs::write(dir.path().join("t/basic.t"), "print \"1..0\\n\";").unwrap();
        assert_eq!(detect_perl(dir.path()), Some(Perl { cpanfile: false }));
    }

    #[test]
    fn npm_ci_only_with_a_lock_file() {
        let npm = |locked| {
            manifest_text(&Project {
                node: Some(Node {
                    manager: "npm",
                    scripts: vec!["test"],
                    locked,
                    runner: None,
                }),
                ..Project::default()
            })
        };
        assert!(npm(true).contains("run: npm ci\n"), "{}", npm(true));
        assert!(npm(false).contains("run: npm install\n"), "{}", npm(false));
    }

    #[test]
    fn the_workflow_sets_up_each_ecosystem_with_its_official_action() {
        let everything = Project {
            cargo: Some(1),
            node: Some(Node {
                manager: "npm",
                scripts: vec!["test"],
                locked: true,
                runner: Some("jest"),
            }),
            python: Some(Python { ruff: false }),
            go: true,
            ruby: Some(Ruby { bundler: false }),
            dotnet: Some(Dotnet {
                target: None,
                global_json: false,
            }),
            perl: Some(Perl { cpanfile: true }),
            branch: None,
            here: None,
        };
        let workflow = workflow_text(&everything);
        for step in [
            "- uses: dtolnay/rust-toolchain@stable",
            "- uses: actions/setup-node@v6",
            "cache: npm",
            "- uses: actions/setup-python@v6",
            "python -m pip install pytest\n",
            "- uses: actions/setup-go@v6",
            "go-version-file: go.mod",
            "- uses: ruby/setup-ruby@v1",
            "bundler-cache: false",
            "- uses: actions/setup-dotnet@v5\n        with:\n          dotnet-version: 8.0.x\n",
            "- uses: shogo82148/actions-setup-perl@v1\n        with:\n          install-modules-with: cpanm\n",
        ] {
            assert!(workflow.contains(step), "{step} missing:\n{workflow}");
        }
        assert!(!workflow.contains("Install here what the checks need"));
        assert_eq!(workflow_text(&Project::default()), WORKFLOW);
    }

    #[test]
    fn a_single_package_is_not_tested_as_a_workspace() {
        let one = manifest_text(&Project {
            cargo: Some(1),
            ..Project::default()
        });
        assert!(one.contains("test: cargo test\n"), "{one}");
        let many = manifest_text(&Project {
            cargo: Some(2),
            ..Project::default()
        });
        assert!(many.contains("test: cargo test --workspace\n"), "{many}");
    }

    #[test]
    fn the_developers_own_system_is_declared_and_the_workflow_runs_on_the_default_branch() {
        for (here, declared) in [
            (None, vec!["linux"]),
            (Some("macos"), vec!["linux", "macos"]),
            (Some("windows"), vec!["linux", "windows"]),
        ] {
            let text = manifest_text(&Project {
                here,
                ..Project::default()
            });
            let names: Vec<String> = parse(&text)
                .environments
                .iter()
                .map(|e| e.name.to_string())
                .collect();
            assert_eq!(names, declared, "{text}");
        }
        let on = |branch: Option<&str>| {
            workflow_text(&Project {
                branch: branch.map(str::to_owned),
                ..Project::default()
            })
        };
        assert!(on(Some("master")).contains("\n    branches: [master]\n"));
        assert!(on(None).contains("\n    branches: [main]\n"));
        assert!(on(Some("odd:name")).contains("\n    branches: [\"odd:name\"]\n"));
    }
}

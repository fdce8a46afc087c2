#!/usr/bin/env bash
# Five real projects, each run as its own CI runs its tests, in two environments:
# every green suite must be VERIFIED with the runner's own counts; a failure put into a
# test must give NOT VERIFIED naming that test and its place; a test deleted must be the
# only one the comparison with the green run calls vanished. docs/real-projects.md
# records a run.
#
#   scripts/real-projects.sh DIR     DIR: where the projects are checked out (cloned from
#                                    GitHub when missing; needs the network: GitHub, PyPI,
#                                    npm, the Go module proxy; Python 3.11 and 3.12, node,
#                                    go and cargo-nextest on the PATH)
#
# Exits 1 at the first expectation not met, naming it.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/real-projects.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cargo build --release --locked -q
bin=$PWD/target/release/cargo-verify-matrix

fail() { echo "FAILED: $*" >&2; exit 1; }

# checkout NAME URL COMMIT: DIR/NAME at COMMIT, with nothing of an earlier run left.
checkout() {
    local name=$1 url=$2 commit=$3
    [ -d "$dir/$name/.git" ] || git clone -q "$url" "$dir/$name"
    git -C "$dir/$name" checkout -q -f "$commit"
    git -C "$dir/$name" clean -q -fd
}

# commit_manifest NAME: commits the manifest (and config) written into the checkout, so
# that the results record a commit.
commit_manifest() {
    git -C "$dir/$1" add -A
    git -C "$dir/$1" -c user.name=bench -c user.email=bench@localhost commit -q --no-verify -m "verify-matrix manifest"
}

# verify NAME ENV1 ENV2 TESTS: both environments green, merged VERIFIED with TESTS tests
# in each; the report is kept as the baseline.
verify() {
    local name=$1 a=$2 b=$3 tests=$4
    cd "$dir/$name"
    rm -rf results
    "$bin" run --env "$a" --out results >>"$dir/$name-runs.txt" 2>&1 || fail "$name: $a is not green"
    "$bin" run --env "$b" --out results >>"$dir/$name-runs.txt" 2>&1 || fail "$name: $b is not green"
    "$bin" merge results/verify-matrix-*.json --out "$dir/$name-base.json" --format markdown >"$dir/$name-green.md" \
        || fail "$name: not VERIFIED"
    grep -q "All Required Environments: VERIFIED" "$dir/$name-green.md" || fail "$name: no VERIFIED line"
    grep -q "$tests tests × 2 environments" "$dir/$name-green.md" || fail "$name: not $tests tests in each environment: $(sed -n 4p "$dir/$name-green.md")"
    echo "$name: VERIFIED, $tests tests × 2 environments"
    cd - >/dev/null
}

# inject NAME CHECK ENV1 ENV2 FAILING PLACE VANISHED: after the test files were changed,
# both environments fail; the merge against the green run names FAILING at PLACE, and
# VANISHED is CHECK's only vanished test.
inject() {
    local name=$1 check=$2 a=$3 b=$4 failing=$5 place=$6 vanished=$7
    cd "$dir/$name"
    rm -rf results
    ! "$bin" run --env "$a" --out results >>"$dir/$name-runs.txt" 2>&1 || fail "$name: $a passed with a failing test"
    ! "$bin" run --env "$b" --out results >>"$dir/$name-runs.txt" 2>&1 || fail "$name: $b passed with a failing test"
    ! "$bin" merge results/verify-matrix-*.json --baseline "$dir/$name-base.json" --format markdown >"$dir/$name-inject.md" \
        || fail "$name: VERIFIED with a failing test"
    grep -q "All Required Environments: NOT VERIFIED" "$dir/$name-inject.md" || fail "$name: no NOT VERIFIED line"
    grep -qF -- "- $failing at $place" "$dir/$name-inject.md" || fail "$name: the failing test $failing at $place is not named"
    local line
    line=$(grep -F -- "- vanished tests:" "$dir/$name-inject.md") || fail "$name: no vanished test"
    [ "$line" = "- vanished tests: $check in $a: 1 ($vanished); $check in $b: 1 ($vanished)" ] || fail "$name: vanished: $line"
    echo "$name: NOT VERIFIED, $failing at $place; vanished: $vanished"
    git checkout -q -- .
    cd - >/dev/null
}

edit() { # edit FILE PYTHON: runs PYTHON with `s` the file's text, writes `s` back
    python3 -c "
import sys
p = sys.argv[1]
s = open(p).read()
$2
open(p, 'w').write(s)" "$1"
}

# 1. A Python CLI library, pytest with --junitxml (click: one xfail, a deselected stress suite).
checkout click https://github.com/pallets/click 2c8cd3ac
cd "$dir/click"
for v in 3.11 3.12; do
    python=$(ls -d "$HOME"/.pyenv/versions/"$v".*/bin/python 2>/dev/null | tail -n 1)
    [ -n "$python" ] || python=$(command -v "python$v") || fail "Python $v is needed"
    [ -x ".venv$v/bin/pytest" ] || { "$python" -m venv ".venv$v" && ".venv$v/bin/pip" install -q -e . pytest; }
done
cat >verify-matrix.yml <<'EOF'
version: 1
environments:
  - name: py3.11
    env: { VENV: .venv3.11 }
  - name: py3.12
    env: { VENV: .venv3.12 }
checks:
  - id: tests
    name: pytest, as tox runs it
    test: $VENV/bin/pytest -v --tb=short --junitxml=reports/junit.xml
    reports: reports/junit.xml
EOF
commit_manifest click
cd - >/dev/null
verify click py3.11 py3.12 1,991
edit "$dir/click/tests/test_basic.py" "
s = s.replace('assert \"Hello World!\" in result.output', 'assert \"Hello, World!\" in result.output', 1)
i = s.index('def test_repr():'); j = s.index('\ndef ', i + 5); s = s[:i] + s[j + 1:]"
inject click tests py3.11 py3.12 "tests.test_basic › test_basic_functionality" tests/test_basic.py:20 "tests.test_basic › test_repr"

# 2. A JavaScript date library, jest with jest-junit and a CTRF reporter (luxon).
checkout luxon https://github.com/moment/luxon b6b9d037
cd "$dir/luxon"
[ -d node_modules/jest-ctrf-json-reporter ] || {
    npm ci --no-audit --no-fund --loglevel=error
    npm install --no-save --no-audit --no-fund --loglevel=error jest-junit@17.0.0 jest-ctrf-json-reporter@0.0.11
}
cat >verify-matrix.yml <<'EOF'
version: 1
environments:
  - name: en-us
    env: { TZ: America/New_York, LANG: en_US.utf8 }
  - name: c-utf8
    env: { TZ: America/New_York, LANG: C.UTF-8 }
checks:
  - id: jest
    name: jest, as npm test runs it
    test: npx jest --ci --coverage --reporters=default --reporters=jest-junit --reporters=jest-ctrf-json-reporter
    env: { JEST_JUNIT_OUTPUT_DIR: reports, JEST_JUNIT_ADD_FILE_ATTRIBUTE: "true" }
    reports: [reports/junit.xml, ctrf/ctrf-report.json]
EOF
commit_manifest luxon
cd - >/dev/null
verify luxon en-us c-utf8 1,208
edit "$dir/luxon/test/datetime/create.test.js" "
s = s.replace('expect(DateTime.now().locale).toBe(\"fr\")', 'expect(DateTime.now().locale).toBe(\"de\")', 1)
i = s.index('test(\"DateTime.now accepts the default numbering system\"'); j = s.index('test(', i + 5); s = s[:i] + s[j:]"
inject luxon jest en-us c-utf8 "DateTime.now accepts the default locale" test/datetime/create.test.js:25 "DateTime.now accepts the default numbering system"

# 3. A TypeScript URL library, vitest's JUnit reporter (ufo).
checkout ufo https://github.com/unjs/ufo 11308c0
cd "$dir/ufo"
[ -d node_modules/vitest ] || npx -y pnpm@10.28.0 install --frozen-lockfile >/dev/null
cat >verify-matrix.yml <<'EOF'
version: 1
environments:
  - name: utc
    env: { TZ: UTC }
  - name: tokyo
    env: { TZ: Asia/Tokyo }
checks:
  - id: vitest
    name: vitest, as CI runs it
    test: npx vitest run --coverage --reporter=default --reporter=junit --outputFile.junit=reports/junit.xml
    reports: reports/junit.xml
EOF
commit_manifest ufo
cd - >/dev/null
verify ufo utc tokyo 485
edit "$dir/ufo/test/resolve.test.ts" "s = s.replace('expect(resolveURL()).toBe(\"\");', 'expect(resolveURL()).toBe(\"/\");', 1)"
edit "$dir/ufo/test/is-same.test.ts" "s = s.replace('    [\"/\", \"\"],\n', '', 1)"
inject ufo vitest utc tokyo "test/resolve.test.ts › resolveURL &gt; no arguments" test/resolve.test.ts:32 "test/is-same.test.ts › isSamePath &gt; / =="

# 4. A Rust crate, cargo test and cargo-nextest's JUnit (semver).
checkout semver https://github.com/dtolnay/semver 8591f23
cd "$dir/semver"
mkdir -p .config
printf '[profile.ci]\nfail-fast = false\n[profile.ci.junit]\npath = "junit.xml"\n' >.config/nextest.toml
cat >verify-matrix.yml <<'EOF'
version: 1
environments:
  - name: serial
    env: { RUST_TEST_THREADS: "1", NEXTEST_TEST_THREADS: "1" }
  - name: parallel
    env: { RUST_TEST_THREADS: "2", NEXTEST_TEST_THREADS: "2" }
checks:
  - id: cargo-test
    name: cargo test, as CI runs it
    test: cargo test
  - id: nextest
    name: cargo nextest, its JUnit report
    test: cargo nextest run --profile ci
    reports: target/nextest/ci/junit.xml
EOF
commit_manifest semver
cargo test -q >/dev/null 2>&1
cd - >/dev/null
verify semver serial parallel 72
edit "$dir/semver/tests/test_version.rs" "
s = s.replace('assert_eq!(version(\"1.2.3+build.42\"), version(\"1.2.3+build.42\"));', 'assert_eq!(version(\"1.2.3+build.42\"), version(\"1.2.3+build.43\"));', 1)
i = s.index('#[test]\nfn test_ne()'); j = s.index('#[test]', i + 5); s = s[:i] + s[j:]"
# cargo test stops at the first failing test binary: nextest's report lists the tests.
inject semver nextest serial parallel "semver::test_version › test_eq" tests/test_version.rs:161 "semver::test_version › test_ne"
grep -qF 'left: Version { major: 1, minor: 2, patch: 3, build: BuildMetadata(&quot;build.42&quot;) }' "$dir/semver-inject.md" \
    || grep -qF 'left: Version { major: 1, minor: 2, patch: 3, build: BuildMetadata("build.42") }' "$dir/semver-inject.md" \
    || fail "semver: the panic's values are not shown"

# 5. A Go flag library, `go test -json` into the report (pflag), and the cached run.
checkout pflag https://github.com/spf13/pflag 5fdac2d
cd "$dir/pflag"
cat >verify-matrix.yml <<'EOF'
version: 1
environments:
  - name: plain
    env: { GOFLAGS: "-count=1" }
  - name: race
    env: { GOFLAGS: "-count=1 -race" }
checks:
  - id: go-test
    name: go test, as CI runs it, events in a report
    test: go test -json ./... > go-test.json
    reports: go-test.json
EOF
commit_manifest pflag
cd - >/dev/null
verify pflag plain race 187
edit "$dir/pflag/bool_test.go" "
s = s.replace('err := f.Parse([]string{\"--tristate=true\"})', 'err := f.Parse([]string{\"--tristate=false\"})', 1)
i = s.index('func TestImplicitTrue('); j = s.index('func TestShortFlag('); s = s[:i] + s[j:]"
inject pflag go-test plain race "github.com/spf13/pflag › TestExplicitTrue" bool_test.go:74 "github.com/spf13/pflag › TestImplicitTrue"
cd "$dir/pflag"
sed -i 's/GOFLAGS: "-count=1"/GOFLAGS: ""/' verify-matrix.yml
"$bin" run --env plain --out "$dir/pflag-cached" >/dev/null 2>&1 || true
if "$bin" run --env plain --out "$dir/pflag-cached" >"$dir/pflag-cached.txt" 2>&1; then fail "pflag: a cached go test passed"; fi
grep -q "no-op: the report says" "$dir/pflag-cached.txt" || fail "pflag: the cached run is not named a no-op"
git checkout -q -- .
echo "pflag: a cached go test run is ineffective (no-op)"
cd - >/dev/null
echo "all five projects: as expected"

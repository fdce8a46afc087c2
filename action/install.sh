#!/usr/bin/env bash
# Step 1 of the Action: put the requested cargo-verify-matrix on PATH.
#
#   1. one already on PATH, when its version is the one requested;
#   2. else the release asset for this runner (RUNNER_OS/RUNNER_ARCH), its SHA-256
#      checked against the release's .sha256 file (a mismatch fails, it never falls back);
#   3. else, when the release has no asset for this runner (or the action is used from a
#      checkout, `uses: ./`), `cargo install --locked --path` of the action's own source.
#
# Inputs arrive as environment variables (never interpolated into this text):
#   VERIFY_MATRIX_COMMAND, VERIFY_MATRIX_VERSION (default: the version in the action's
#   Cargo.toml, i.e. of the ref the workflow uses), VERIFY_MATRIX_ACTION_REPOSITORY,
#   VERIFY_MATRIX_RELEASES_URL (default: $GITHUB_SERVER_URL/<repository>/releases/download).
set -euo pipefail

case "${VERIFY_MATRIX_COMMAND:-}" in
    plan | run | report) ;;
    *)
        echo "::error title=cargo verify-matrix::input \`command\` must be plan, run or report, not \`${VERIFY_MATRIX_COMMAND:-}\`"
        exit 2
        ;;
esac

action_path=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set: this script is a step of action.yml}
want=${VERIFY_MATRIX_VERSION:-}
if [ -z "$want" ]; then
    want=$(sed -n 's/^version = "\([^"]*\)".*/\1/p' "$action_path/Cargo.toml" | head -n 1)
fi
want=${want#v}
[ -n "$want" ] || { echo "::error title=cargo verify-matrix::cannot tell which version to install"; exit 1; }

if command -v cargo-verify-matrix >/dev/null 2>&1; then
    have=$(cargo-verify-matrix --version | awk '{print $2}')
    if [ "$have" = "$want" ]; then
        echo "cargo-verify-matrix $have is already on PATH: $(command -v cargo-verify-matrix)"
        exit 0
    fi
    echo "cargo-verify-matrix $have is on PATH, but $want is requested"
fi

case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
    Linux/X64) target=x86_64-unknown-linux-musl ;;
    Linux/ARM64) target=aarch64-unknown-linux-musl ;;
    macOS/X64) target=x86_64-apple-darwin ;;
    macOS/ARM64) target=aarch64-apple-darwin ;;
    Windows/X64) target=x86_64-pc-windows-msvc ;;
    *) target= ;;
esac

root="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/cargo-verify-matrix-$want"
mkdir -p "$root/bin"

sha256() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | awk '{print $1}'
    else
        shasum -a 256 "$1" | awk '{print $1}'
    fi
}

repository=${VERIFY_MATRIX_ACTION_REPOSITORY:-}
base=${VERIFY_MATRIX_RELEASES_URL:-}
if [ -z "$base" ] && [ -n "$repository" ]; then
    base="${GITHUB_SERVER_URL:-https://github.com}/$repository/releases/download"
fi

installed=false
if [ -n "$target" ] && [ -n "$base" ]; then
    asset="cargo-verify-matrix-$want-$target.tar.gz"
    url="$base/v$want/$asset"
    echo "downloading $url"
    if curl -fsSL --retry 3 --retry-connrefused -o "$root/$asset" "$url" \
        && curl -fsSL --retry 3 --retry-connrefused -o "$root/$asset.sha256" "$url.sha256"; then
        expected=$(awk '{print $1; exit}' "$root/$asset.sha256")
        actual=$(sha256 "$root/$asset")
        if [ "$expected" != "$actual" ]; then
            echo "::error title=cargo verify-matrix::SHA-256 mismatch for $asset: the release says $expected, the download is $actual"
            exit 1
        fi
        echo "SHA-256 verified: $actual"
        tar -xzf "$root/$asset" -C "$root/bin"
        installed=true
    else
        echo "no release asset $asset for $RUNNER_OS/$RUNNER_ARCH at $base"
    fi
fi

if ! $installed; then
    echo "building cargo-verify-matrix $want from the action's source (cargo install --locked)"
    cargo install --locked --quiet --path "$action_path" --root "$root"
fi

"$root/bin/cargo-verify-matrix" --version
echo "$root/bin" >>"$GITHUB_PATH"

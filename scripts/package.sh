#!/usr/bin/env bash
# Builds the release binary for $TARGET and packages it as the Action downloads it:
#   dist/cargo-verify-matrix-<version>-<target>.tar.gz         the binary at the top level
#   dist/cargo-verify-matrix-<version>-<target>.tar.gz.sha256  "<sha256>  <file name>"
# Environment: TARGET (a Rust target triple; default: the host's), CROSS=true to build
# with `cross`, TAG (vX.Y.Z; must match Cargo.toml's version when set).
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/^version = "\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
if [ -n "${TAG:-}" ] && [ "$TAG" != "v$version" ]; then
    echo "error: tag $TAG does not match Cargo.toml's version $version" >&2
    exit 1
fi
target=${TARGET:-$(rustc -vV | sed -n 's/^host: //p')}
build=cargo
[ "${CROSS:-false}" = true ] && build=cross
"$build" build --release --locked --target "$target"

exe=cargo-verify-matrix
case "$target" in *windows*) exe=cargo-verify-matrix.exe ;; esac
asset="cargo-verify-matrix-$version-$target.tar.gz"
mkdir -p dist
tar -czf "dist/$asset" -C "target/$target/release" "$exe"
(
    cd dist
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$asset" >"$asset.sha256"
    else
        shasum -a 256 "$asset" >"$asset.sha256"
    fi
)
echo "dist/$asset"

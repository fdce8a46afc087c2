#!/bin/sh
# Installs cargo-verify-matrix from a release: the asset for this machine, its SHA-256
# checked against the release's .sha256 file before anything is unpacked.
#
#   curl -fsSL https://raw.githubusercontent.com/verify-matrix/cargo-verify-matrix/main/install.sh | sh
#   sh install.sh [--version X.Y.Z] [--to DIR] [--target TRIPLE]
#
#   --version  the release (default: the latest)
#   --to       where the binary goes (default: $CARGO_HOME/bin, else ~/.cargo/bin)
#   --target   the asset's target triple (default: this machine's; see below)
#
# Environment: VERIFY_MATRIX_RELEASES_URL, the releases' download address (default:
# https://github.com/verify-matrix/cargo-verify-matrix/releases/download).
#
# Assets: cargo-verify-matrix-<version>-<target>.tar.gz for x86_64/aarch64-unknown-linux-musl,
# x86_64/aarch64-apple-darwin and x86_64-pc-windows-msvc, each with a .sha256 beside it.
# A digest that does not match installs nothing. Elsewhere: cargo install --locked --git
# https://github.com/verify-matrix/cargo-verify-matrix
set -eu

repository=https://github.com/verify-matrix/cargo-verify-matrix
base=${VERIFY_MATRIX_RELEASES_URL:-$repository/releases/download}
version=
to=${CARGO_HOME:-${HOME:?HOME is not set}/.cargo}/bin
target=

fail() {
    echo "install.sh: error: $*" >&2
    exit 1
}

while [ $# -gt 0 ]; do
    case "$1" in
        --version) [ $# -ge 2 ] || fail "--version needs a value"; version=$2; shift 2 ;;
        --to) [ $# -ge 2 ] || fail "--to needs a value"; to=$2; shift 2 ;;
        --target) [ $# -ge 2 ] || fail "--target needs a value"; target=$2; shift 2 ;;
        -h | --help) sed -n '2,19p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) fail "unknown argument \`$1\` (--version X.Y.Z, --to DIR, --target TRIPLE)" ;;
    esac
done

command -v curl >/dev/null 2>&1 || fail "curl is needed"
command -v tar >/dev/null 2>&1 || fail "tar is needed"

if [ -z "$target" ]; then
    case "$(uname -m)" in
        x86_64 | amd64) arch=x86_64 ;;
        aarch64 | arm64) arch=aarch64 ;;
        *) arch= ;;
    esac
    case "$(uname -s)/$arch" in
        Linux/x86_64 | Linux/aarch64) target=$arch-unknown-linux-musl ;;
        Darwin/x86_64 | Darwin/aarch64) target=$arch-apple-darwin ;;
        MINGW*/x86_64 | MSYS*/x86_64 | CYGWIN*/x86_64) target=x86_64-pc-windows-msvc ;;
        *) fail "no release asset for $(uname -s) $(uname -m): build it with cargo install --locked --git $repository" ;;
    esac
fi
case "$target" in
    *[!A-Za-z0-9_.-]* | "") fail "\`$target\` is not a target triple" ;;
esac

if [ -z "$version" ]; then
    # The latest release's page is where .../releases/latest redirects to.
    latest=$(curl -fsSLI -o /dev/null -w '%{url_effective}' "$repository/releases/latest") \
        || fail "cannot tell the latest release (give --version)"
    version=${latest##*/tag/}
fi
version=${version#v}
case "$version" in
    *[!0-9A-Za-z.+-]* | "") fail "\`$version\` is not a version" ;;
esac

exe=cargo-verify-matrix
case "$target" in *windows*) exe=cargo-verify-matrix.exe ;; esac
asset="cargo-verify-matrix-$version-$target.tar.gz"
url="$base/v$version/$asset"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
echo "downloading $url"
# Bounded: no release asset is near 256 MiB.
curl -fsSL --retry 3 --max-filesize 268435456 -o "$work/$asset" "$url" || fail "cannot download $url"
curl -fsSL --retry 3 --max-filesize 4096 -o "$work/$asset.sha256" "$url.sha256" || fail "cannot download $url.sha256"

if command -v sha256sum >/dev/null 2>&1; then
    actual=$(sha256sum "$work/$asset" | awk '{print $1}')
elif command -v shasum >/dev/null 2>&1; then
    actual=$(shasum -a 256 "$work/$asset" | awk '{print $1}')
else
    fail "neither sha256sum nor shasum is here to check the download with; nothing was installed"
fi
expected=$(awk '{print tolower($1); exit}' "$work/$asset.sha256")
is_digest() {
    [ ${#1} -eq 64 ] && case "$1" in *[!0-9a-f]*) false ;; *) true ;; esac
}
is_digest "$actual" || fail "could not compute the SHA-256 of $asset; nothing was installed"
is_digest "$expected" || fail "$asset.sha256 holds no SHA-256; nothing was installed"
[ "$expected" = "$actual" ] \
    || fail "SHA-256 mismatch for $asset: the release says $expected, the download is $actual; nothing was installed"

mkdir -p "$work/unpacked"
tar -xzf "$work/$asset" -C "$work/unpacked" "$exe" || fail "$asset holds no $exe"
# The binary itself: never a link (which would point anywhere), never a folder.
if [ -L "$work/unpacked/$exe" ] || [ ! -f "$work/unpacked/$exe" ]; then
    fail "$asset: $exe is not a regular file; nothing was installed"
fi
mkdir -p "$to"
if [ -d "$to/$exe" ] && [ ! -L "$to/$exe" ]; then
    fail "$to/$exe is a folder; nothing was installed"
fi
# Written to a new file of its own in the folder (mktemp makes it, so nothing planted
# there is followed), then moved over the old binary whole: never half-written.
new=$(mktemp "$to/.$exe.XXXXXX") || fail "cannot write in $to"
trap 'rm -rf "$work"; rm -f "$new"' EXIT INT TERM
cat "$work/unpacked/$exe" >"$new"
chmod 755 "$new"
mv -f "$new" "$to/$exe"
echo "installed cargo-verify-matrix $version ($target) in $to/$exe (SHA-256 $actual)"
case ":${PATH:-}:" in
    *":$to:"*) ;;
    *) echo "note: $to is not on PATH" ;;
esac

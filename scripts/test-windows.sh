#!/usr/bin/env bash
# The Windows build: clippy with warnings denied, and the process tests
# (tests/windows.rs: a hang ends at its timeout, a leak is listed and killed, a killed
# tool takes its checks with it, cmd.exe's quoting) run under wine.
#
# Needs the Rust target x86_64-pc-windows-gnu (added with rustup when missing),
# Debian's gcc-mingw-w64-x86-64 and wine (`scripts/test-windows.sh --install` installs
# both with apt-get). Wine 8.0 lacks bcryptprimitives.dll, whose ProcessPrng Rust's
# standard library calls; scripts/wine/bcryptprimitives.c, built with mingw, is put
# beside the executables.
set -euo pipefail
cd "$(dirname "$0")/.."
target=x86_64-pc-windows-gnu

if [ "${1:-}" = "--install" ]; then
    export DEBIAN_FRONTEND=noninteractive
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    packages=(gcc-mingw-w64-x86-64 wine64 wine)
    $sudo apt-get install -y -q --no-install-recommends "${packages[@]}" >/dev/null \
        || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q --no-install-recommends "${packages[@]}" >/dev/null; }
fi
rustup target list --installed | grep -qx "$target" || rustup target add "$target"
command -v x86_64-w64-mingw32-gcc >/dev/null || { echo "error: x86_64-w64-mingw32-gcc is needed (Debian: gcc-mingw-w64-x86-64)" >&2; exit 1; }
wine=$(command -v wine || command -v wine64 || true)
[ -n "$wine" ] || { echo "error: wine is needed (Debian: wine64)" >&2; exit 1; }

echo "== clippy, $target"
# The library, the binary and the Windows tests (the other test crates are linted on
# Linux; what differs by platform is in the library).
cargo clippy --lib --bins --test windows --locked --target "$target" -- -D warnings

echo "== the process tests under wine"
cargo test --no-run --locked --target "$target" --test windows
for dir in "target/$target/debug" "target/$target/debug/deps"; do
    x86_64-w64-mingw32-gcc -O2 -shared -o "$dir/bcryptprimitives.dll" scripts/wine/bcryptprimitives.c -ladvapi32
done
export WINEPREFIX=${WINEPREFIX:-$PWD/target/wine} WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
"$wine" wineboot -i >/dev/null 2>&1 || true
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$wine" \
    cargo test --locked --target "$target" --test windows -- --test-threads 2
# The wine server of this prefix outlives the tests unless told to stop.
if command -v wineserver >/dev/null; then wineserver -k 2>/dev/null || true; fi

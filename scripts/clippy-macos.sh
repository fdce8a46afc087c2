#!/usr/bin/env bash
# The macOS builds, x86_64-apple-darwin and aarch64-apple-darwin, linted with warnings
# denied from a Linux machine: zig (the `ziglang` package on PyPI, installed into
# target/tools/zig) is the C compiler for the C the dependencies build (ring, SQLite),
# so no macOS SDK is needed. Nothing is linked: clippy checks, it does not build. The
# library and the binary are what differs by platform (the tests' platform code is in
# tests/windows.rs and the library); the test crates are linted on Linux.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=$PWD/target/tools/zig
if [ ! -x "$tools/bin/python" ]; then
    python3 -m venv "$tools"
    "$tools/bin/python" -m pip install -q ziglang==0.17.1
fi
for arch in x86_64 aarch64; do
    target=$arch-apple-darwin
    rustup target list --installed | grep -qx "$target" || rustup target add "$target"
    cc=$tools/bin/$arch-macos-cc
    # The cc crate may pass a Rust-style --target; zig takes its own.
    cat >"$cc" <<SH
#!/bin/sh
for a in "\$@"; do
    shift
    case "\$a" in --target=*) ;; *) set -- "\$@" "\$a" ;; esac
done
exec "$tools/bin/python" -m ziglang cc -target $arch-macos "\$@"
SH
    chmod +x "$cc"
    echo "== clippy, $target"
    env "CC_${arch}_apple_darwin=$cc" cargo clippy --lib --bins --locked --target "$target" -- -D warnings
done

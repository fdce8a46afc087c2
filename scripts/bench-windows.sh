#!/usr/bin/env bash
# Windows (under wine) and Linux, side by side:
#  1. a hung check whose child outlives its shell, `timeout: 3s`, `grace: 2s`: how long
#     the whole run takes (the bound: timeout + grace + 2 s = 7 s);
#  2. the per-check overhead on Windows under wine: N checks of `exit 0` under cmd
#     against `cmd /c exit 0` started N times by one cmd.exe, in the same run (wine is
#     slow to start processes: the ratio is what counts).
#
#   scripts/bench-windows.sh [--quick]     needs what scripts/test-windows.sh needs
set -euo pipefail
cd "$(dirname "$0")/.."
target=x86_64-pc-windows-gnu
quick=false
[ "${1:-}" = "--quick" ] && quick=true
if $quick; then n=5; runs="--runs 1 --warmup 0"; else n=50; runs="--warmup 1 --runs 5"; fi
command -v hyperfine >/dev/null || { echo "error: hyperfine is needed (scripts/bench.sh installs it)" >&2; exit 1; }
wine=$(command -v wine || command -v wine64) || { echo "error: wine is needed" >&2; exit 1; }

cargo build --release --locked -q
cargo build --release --locked -q --target "$target"
exe=$PWD/target/$target/release/cargo-verify-matrix.exe
x86_64-w64-mingw32-gcc -O2 -shared -o "$(dirname "$exe")/bcryptprimitives.dll" scripts/wine/bcryptprimitives.c -ladvapi32
export WINEPREFIX=${WINEPREFIX:-$PWD/target/wine} WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
"$wine" wineboot -i >/dev/null 2>&1 || true

work=$(mktemp -d)
trap 'rm -rf "$work"; wineserver -k 2>/dev/null || true' EXIT
mkdir -p "$work/linux" "$work/windows" "$work/overhead"
cat >"$work/linux/verify-matrix.yml" <<'YML'
version: 1
environments: [{ name: local }]
checks:
  - { id: hang, run: "sleep 120; true", timeout: 3s, grace: 2s }
YML
cat >"$work/windows/verify-matrix.yml" <<'YML'
version: 1
environments: [{ name: local }]
checks:
  - { id: hang, shell: cmd, run: "ping -n 120 127.0.0.1", timeout: 3s, grace: 2s }
YML
{
    echo "version: 1"
    echo "environments: [{ name: local }]"
    echo "checks:"
    for i in $(seq 1 "$n"); do echo "  - { id: c$i, shell: cmd, run: exit 0 }"; done
} >"$work/overhead/verify-matrix.yml"

echo "## A hung check whose child outlives its shell (timeout 3s, grace 2s; bound 7 s)"
hyperfine $runs -N -i --export-markdown "$work/hang.md" \
    -n "Linux: run (bash; sleep 120 as its child)" "$PWD/target/release/cargo-verify-matrix run --manifest $work/linux/verify-matrix.yml --env local --out $work/linux/out" \
    -n "Windows under wine: run (cmd; ping -n 120 as its child)" "$wine $exe run --manifest $work/windows/verify-matrix.yml --env local --out $work/windows/out" \
    >/dev/null
cat "$work/hang.md"

echo
echo "## Per-check overhead under wine: $n checks of \`exit 0\` (cmd) against \`cmd /c exit 0\` $n times"
hyperfine $runs -N -i --export-markdown "$work/overhead.md" \
    -n "cmd /c exit 0, $n times from one cmd.exe" "$wine cmd /c for /l %i in (1,1,$n) do @cmd /d /c exit 0" \
    -n "run: $n checks of exit 0 under cmd" "$wine $exe run --manifest $work/overhead/verify-matrix.yml --env local --out $work/overhead/out" \
    >/dev/null
cat "$work/overhead.md"

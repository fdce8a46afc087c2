#!/usr/bin/env bash
# Measures README's Quick start cold, as a newcomer meets it: two fresh clones of this
# commit (empty target/), each running the demo, then scripts/test.sh. One clone runs
# the demo as README says (the dev profile, which the tests reuse); the other as it
# said before (`--release`: thin LTO, a second build for the tests), the baseline,
# measured in the same run. The crates' sources come from cargo's download cache when
# it has them (both clones alike). Prints one markdown table of wall times and peak
# memory (GNU time).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
demo=(run --manifest fixtures/demo/verify-matrix.yml --env c-locale --env utf8-locale --out demo-results)

# measure LABEL COMMAND…: one row; the command runs in the current clone.
measure() {
    local label=$1
    shift
    /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/out" 2>&1 \
        || { cat "$work/out"; echo "error: $label failed" >&2; exit 1; }
    read -r seconds kib <"$work/time"
    printf '| %s | %s s | %s MiB |\n' "$label" "$seconds" "$((kib / 1024))"
}

echo "| step (cold, $(nproc) cores) | wall | peak memory |"
echo "|---|---:|---:|"
for profile in release dev; do
    git clone -q "$repo" "$work/$profile"
    cd "$work/$profile"
    if [ "$profile" = release ]; then
        measure "before: demo, \`cargo run --release\`" cargo run --release --locked -- "${demo[@]}"
        measure "before: then scripts/test.sh" scripts/test.sh
    else
        measure "now: demo, \`cargo run --no-default-features\`" cargo run --locked --no-default-features -- "${demo[@]}"
        measure "now: then scripts/test.sh" scripts/test.sh
    fi
    cd "$repo"
    rm -rf "${work:?}/$profile"
done

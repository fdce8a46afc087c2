# Sourced by scripts/test.sh, scripts/e2e-act.sh and the benchmarks: the Python tools the tests use, in a
# project-local virtual environment, never in the system's Python.
#
#   python_tools REQUIREMENTS_FILE…
#
# creates target/tools/venv when it is missing (with `python3 -m venv`; where Debian's
# python3-venv is not installed, without pip, which is then bootstrapped from its wheel
# on PyPI, checked against PyPI's SHA-256), installs the pinned requirements when they
# changed since the last install (a stamp per file), and puts the environment's `bin`
# first on PATH (exported). Running it again installs nothing.

TOOLS_VENV=${TOOLS_VENV:-target/tools/venv}
PIP_BOOTSTRAP_VERSION=26.3

# The environment's folder of programs: `bin`, or `Scripts` on Windows.
tools_bin() {
    if [ -d "$TOOLS_VENV/Scripts" ]; then echo "$TOOLS_VENV/Scripts"; else echo "$TOOLS_VENV/bin"; fi
}

python_tools() {
    local venv=$TOOLS_VENV
    command -v python3 >/dev/null || { echo "error: python3 is required" >&2; return 1; }
    if ! "$(tools_bin)/python" -m pip --version >/dev/null 2>&1; then
        rm -rf "$venv"
        mkdir -p "$(dirname "$venv")"
        if ! python3 -m venv "$venv" >/dev/null 2>&1; then
            rm -rf "$venv"
            python3 -m venv --without-pip "$venv" \
                || { echo "error: cannot create a virtual environment at $venv" >&2; return 1; }
            "$(tools_bin)/python" scripts/bootstrap-pip.py "$PIP_BOOTSTRAP_VERSION" \
                || { echo "error: cannot install pip into $venv" >&2; return 1; }
        fi
    fi
    local requirements stamp python
    python="$(tools_bin)/python"
    for requirements in "$@"; do
        stamp="$venv/$(basename "$requirements").installed"
        if ! cmp -s "$requirements" "$stamp"; then
            PIP_REQUIRE_VIRTUALENV=1 "$python" -m pip install --quiet \
                --disable-pip-version-check -r "$requirements" \
                || { echo "error: cannot install $requirements into $venv" >&2; return 1; }
            cp "$requirements" "$stamp"
        fi
    done
    case "$venv" in
        /*) PATH="$(tools_bin):$PATH" ;;
        *) PATH="$PWD/$(tools_bin):$PATH" ;;
    esac
    export PATH
}

# debian_root: a minimal Debian 12 made by debootstrap (Debian's package) under
# target/tools/rootfs-bookworm, once; exported as VERIFY_MATRIX_ROOTFS. The root of the
# containers entered by the tests (tests/enter_ways.rs) and the benchmarks.
debian_root() {
    local dir=target/tools/rootfs-bookworm root=()
    if [ ! -x "$dir/bin/sh" ]; then
        [ -x /usr/sbin/debootstrap ] || { echo "error: debootstrap is required" >&2; return 1; }
        [ "$(id -u)" = 0 ] || root=(sudo)
        rm -rf "$dir.tmp"
        "${root[@]}" /usr/sbin/debootstrap --variant=minbase bookworm "$dir.tmp" http://deb.debian.org/debian >/dev/null \
            || { echo "error: cannot debootstrap Debian 12 into $dir" >&2; return 1; }
        mv "$dir.tmp" "$dir"
    fi
    VERIFY_MATRIX_ROOTFS="$PWD/$dir"
    export VERIFY_MATRIX_ROOTFS
}

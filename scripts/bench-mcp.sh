#!/usr/bin/env bash
# The MCP server against the command line, in one run (BENCHMARKS.md, "The MCP
# server"): start-up to `initialize` answered, and a `run` of the demo manifest through
# MCP against the same run from the command line (medians of N, default 10; release
# build). Needs node and the SDK that scripts/test.sh installs under
# target/tools/mcp-client.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10}
client=${VERIFY_MATRIX_MCP_CLIENT:-target/tools/mcp-client}
[ -d "$client/node_modules/@modelcontextprotocol/sdk" ] \
    || { echo "error: the MCP SDK is not in $client: run scripts/test.sh first" >&2; exit 1; }
cargo build --release --locked --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp scripts/bench/mcp.mjs "$work/"
ln -s "$PWD/$client/node_modules" "$work/node_modules"
node "$work/mcp.mjs" "$PWD/target/release/cargo-verify-matrix" "$PWD" "$n"

// The MCP server measured against the command line, in one run: the server's start-up
// to `initialize` answered (the official SDK's client spawning it), and a `run` of the
// demo manifest through MCP against the same `run` from the command line.
//
//   node scripts/bench/mcp.mjs BIN REPO N
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, repo, count] = process.argv.slice(2);
const n = Number(count || 10);
const manifest = "fixtures/demo/verify-matrix.yml";
const environments = ["c-locale", "utf8-locale"];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (t) => Number(process.hrtime.bigint() - t) / 1e6;

const startup = [], overMcp = [], overCli = [], spawnOnly = [];
for (let i = 0; i < n; i++) {
  // The command line: the same run, into a folder of its own.
  const out = mkdtempSync(join(tmpdir(), "vm-bench-"));
  let t = process.hrtime.bigint();
  const cli = spawnSync(bin, ["--manifest", manifest, "run", "-q", "--out", out,
    ...environments.flatMap((e) => ["--env", e])], { cwd: repo });
  overCli.push(ms(t));
  if (cli.status !== 0) throw new Error(`the command line's run failed: ${cli.stderr}`);
  // A process start alone, for scale.
  t = process.hrtime.bigint();
  spawnSync(bin, ["--version"]);
  spawnOnly.push(ms(t));
  // The server: start-up to `initialize` answered, then the run.
  t = process.hrtime.bigint();
  const transport = new StdioClientTransport({ command: bin, args: ["--manifest", manifest, "mcp"], cwd: repo });
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(transport);
  startup.push(ms(t));
  t = process.hrtime.bigint();
  const run = await client.callTool({ name: "run", arguments: { environments } });
  overMcp.push(ms(t));
  if (run.structuredContent.verdict !== "VERIFIED") throw new Error(`the MCP run is not VERIFIED: ${JSON.stringify(run)}`);
  await client.close();
}
const result = {
  runs: n,
  startup_to_initialize_ms: median(startup),
  process_start_ms: median(spawnOnly),
  run_over_mcp_ms: median(overMcp),
  run_on_command_line_ms: median(overCli),
  ratio: median(overMcp) / median(overCli),
};
console.log(JSON.stringify(result, null, 2));

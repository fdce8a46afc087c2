// The official MCP TypeScript SDK's client against `cargo-verify-matrix mcp`: one
// scenario per run (argv: the binary, the repository, the scenario), every answer
// printed as one JSON object per line for tests/mcp.rs to check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, repo, scenario] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args: ["mcp"], cwd: repo, stderr: "pipe" });
const client = new Client({ name: "verify-matrix-test", version: "1.0.0" });
await client.connect(transport);
const print = (what, value) => console.log(JSON.stringify({ what, value }));

if (scenario === "tour") {
  print("tools", (await client.listTools()).tools);
  print("plan", await client.callTool({ name: "plan", arguments: {} }));
  const progress = [];
  const run = await client.callTool({ name: "run", arguments: {} }, undefined, {
    onprogress: (p) => progress.push(p),
  });
  print("progress", progress);
  print("run", run);
  print("verdict", await client.callTool({ name: "verdict", arguments: {} }));
  print("failures", await client.callTool({ name: "failures", arguments: { limit: 1 } }));
  print("failures-next", await client.callTool({ name: "failures", arguments: { offset: 1, limit: 1 } }));
  print("resources", (await client.listResources()).resources);
  print("manifest", await client.readResource({ uri: "verify-matrix://manifest" }));
  // Bad input: a JSON-RPC error each, with what is wrong.
  const refused = async (name, args) => {
    try {
      return { answered: await client.callTool({ name, arguments: args }) };
    } catch (e) {
      return { error: String(e) };
    }
  };
  print("bad-name", await refused("run", { checks: ["; rm -rf /"] }));
  print("unknown-check", await refused("run", { checks: ["unti"] }));
  print("unknown-argument", await refused("plan", { verbose: true }));
  print("negative-page", await refused("failures", { offset: -1 }));
  print("unknown-tool", await refused("failrues", {}));
} else if (scenario === "enter") {
  // An environment entered through its way in, as `run --env sandbox` enters it.
  print("plan", await client.callTool({ name: "plan", arguments: {} }));
  print("run", await client.callTool({ name: "run", arguments: { environments: ["sandbox"] } }));
  print("verdict", await client.callTool({ name: "verdict", arguments: {} }));
} else if (scenario === "stale") {
  print("verdict", await client.callTool({ name: "verdict", arguments: {} }));
} else if (scenario === "cancel") {
  const controller = new AbortController();
  const started = Date.now();
  let progressed;
  const firstProgress = new Promise((resolve) => (progressed = resolve));
  const call = client.callTool({ name: "run", arguments: {} }, undefined, {
    signal: controller.signal,
    onprogress: () => progressed(),
    timeout: 120000,
  });
  call.catch(() => {});
  await firstProgress;
  // While it runs, a second run is refused: never two runs over one results folder.
  try {
    print("second-run", { answered: await client.callTool({ name: "run", arguments: {} }) });
  } catch (e) {
    print("second-run", { error: String(e) });
  }
  controller.abort();
  let outcome;
  try {
    outcome = { answered: await call };
  } catch (e) {
    outcome = { aborted: String(e) };
  }
  print("cancelled", { ...outcome, ms: Date.now() - started });
  // The server stops the run as SIGTERM stops it; its results stay, never a verdict.
  await new Promise((r) => setTimeout(r, 3000));
  print("verdict", await client.callTool({ name: "verdict", arguments: {} }));
} else if (scenario === "weakened") {
  // The working copy weakened after the server started: nothing is judged by it.
  print("run", await client.callTool({ name: "run", arguments: {} }));
  print("verdict", await client.callTool({ name: "verdict", arguments: {} }));
} else if (scenario === "what-runs-here") {
  print("run", await client.callTool({ name: "run", arguments: {} }));
} else if (scenario === "killed") {
  // The server killed while a run goes (SIGKILL, which no handler sees): the client
  // says which process it was, and the test watches what is left.
  let progressed;
  const firstProgress = new Promise((resolve) => (progressed = resolve));
  const call = client.callTool({ name: "run", arguments: {} }, undefined, {
    onprogress: () => progressed(),
    timeout: 120000,
  });
  call.catch(() => {});
  await firstProgress;
  print("server", transport.pid);
  process.kill(transport.pid, "SIGKILL");
  await new Promise((r) => setTimeout(r, 500));
  process.exit(0);
}
await client.close();

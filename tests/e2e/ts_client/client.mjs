// Drives `ctxgraph mcp` with the TypeScript MCP SDK's client (what Claude Code,
// Cursor and the MCP Inspector use), for tests/e2e/test_mcp_ts.py.
//
// Reads a plan (JSON) on standard input:
//   {"stdio": {"command", "args", "env", "cwd"}} or {"http": {"url", "token"}},
//   "steps": [{"listTools": true} | {"callTool": {"name", "arguments"}} | {"readResource": "URI"}]
// and prints one JSON line: {"steps": [{"result": ...} | {"thrown": "message"}]}.
// The tools are listed first, so the client checks every tool result against
// the tool's output schema, as these clients do.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function transportOf(plan) {
  if (plan.stdio) {
    const { command, args, env, cwd } = plan.stdio;
    return new StdioClientTransport({ command, args, env, cwd, stderr: "inherit" });
  }
  const headers = plan.http.token ? { Authorization: `Bearer ${plan.http.token}` } : {};
  return new StreamableHTTPClientTransport(new URL(plan.http.url), { requestInit: { headers } });
}

const plan = await readStdin();
const client = new Client({ name: "ctxgraph-ts-test", version: "1.0.0" });
await client.connect(transportOf(plan));
await client.listTools();
const out = [];
for (const step of plan.steps) {
  try {
    if (step.listTools) out.push({ result: await client.listTools() });
    else if (step.callTool) out.push({ result: await client.callTool(step.callTool) });
    else if (step.readResource) out.push({ result: await client.readResource({ uri: step.readResource }) });
    else throw new Error(`unknown step ${JSON.stringify(step)}`);
  } catch (err) {
    out.push({ thrown: err instanceof Error ? err.message : String(err) });
  }
}
await client.close();
process.stdout.write(JSON.stringify({ steps: out }) + "\n");

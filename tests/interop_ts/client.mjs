// The official MCP TypeScript SDK's Streamable HTTP client against serve-http.
// Usage: MCP_URL=... MCP_TOKEN=... node client.mjs
// Prints one JSON line: what the SDK negotiated, listed and got back (or the error).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.MCP_TOKEN}` } },
});
const client = new Client({ name: "mfconnector-ts-interop", version: "1" });
try {
  await client.connect(transport);
  const listed = await client.listTools();
  const called = await client.callTool({ name: "mail_list", arguments: { limit: 2 } });
  let unknown = null;
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
  } catch (error) {
    unknown = error.code ?? String(error);
  }
  console.log(JSON.stringify({
    sessionId: transport.sessionId ?? null,
    protocolVersion: transport.protocolVersion ?? null,
    tools: listed.tools.map((tool) => tool.name),
    rows: called.structuredContent?.messages?.length ?? null,
    unknownToolError: unknown,
  }));
  await transport.terminateSession();
  await client.close();
} catch (error) {
  console.log(JSON.stringify({ error: String(error) }));
  process.exitCode = 1;
}

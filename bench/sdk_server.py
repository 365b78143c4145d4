"""Reference server built with the official MCP Python SDK, for side-by-side benches.

Default: ``MCPServer`` (the SDK's FastMCP) with one read-only tool, ``account_status``, that
returns a small dict like ours does when not signed in. With ``--tools-json PATH`` it uses
the SDK's low-level ``Server`` instead and publishes the tool definitions in PATH (a JSON
array, e.g. our own ``tools/list``), so both servers send the same tools/list payload; only
``account_status`` is callable then, and ``slow``, which answers after 60 s. The SDK
serves both eras on stdio (the first request decides).

``--answers-json PATH`` (a JSON object: tool name → ``{"result": <a CallToolResult as
sent>, "progress": <count>}``, e.g. answers our server gave) makes those tools callable
too: each call reports ``progress`` steps (sent only if the caller gave a progressToken)
and returns the recorded result, so a bench compares the servers, not the work.

``--http HOST:PORT`` serves Streamable HTTP instead of stdio: the SDK's own
``Server.streamable_http_app`` (stateless, SSE mode: a quick answer goes out as JSON, a
call that reports progress as an SSE stream) under uvicorn, the server the SDK's own
``run("streamable-http")`` uses. Port 0 picks a free port; the address is printed on stderr
as ``sdk-reference: serving MCP on http://HOST:PORT/mcp``. No bearer token is checked:
the SDK takes a ``TokenVerifier`` but ships no JWT verifier.
Run: ``python bench/sdk_server.py [--tools-json PATH] [--answers-json PATH] [--http H:P]``.
"""

import argparse
import json
import socket
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

SLOW_SECONDS = 60.0
STATUS: dict[str, Any] = {"mode": "live", "server": {"name": "sdk-reference"}, "signedIn": False}


def fastmcp_server() -> MCPServer:
    server = MCPServer("sdk-reference", version="0.0.0", log_level="WARNING")

    @server.tool(description="Who the server reads for and whether sign-in works.")
    def account_status() -> dict[str, Any]:
        return STATUS

    return server


def lowlevel_server(
    tools: list[types.Tool], answers: dict[str, dict[str, Any]] | None = None
) -> Server[Any]:
    recorded = {
        name: (types.CallToolResult.model_validate(entry["result"]), int(entry.get("progress", 0)))
        for name, entry in (answers or {}).items()
    }

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name in recorded:
            result, steps = recorded[params.name]
            for step in range(1, steps + 1):  # a no-op without a progressToken
                await ctx.session.report_progress(step, steps, f"fetched {step} of {steps}")
            return result
        if params.name == "slow":  # the control-message bench keeps every handler busy
            await anyio.sleep(SLOW_SECONDS)
        elif params.name != "account_status":
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        text = json.dumps(STATUS)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=STATUS
        )

    return Server(
        "sdk-reference", version="0.0.0", on_list_tools=list_tools, on_call_tool=call_tool
    )


def serve_http(server: Server[Any], address: str) -> None:
    """The SDK's Streamable HTTP app under uvicorn, on a socket bound here (port 0 works)."""
    import uvicorn

    host, _, port = address.rpartition(":")
    # proto given: asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP, and
    # without it each answer waits ~40 ms for a delayed ACK (Nagle)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, int(port)))
    listener.listen(2048)  # connections queue from here on, before uvicorn starts
    app = server.streamable_http_app(stateless_http=True, host=host)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    bound = listener.getsockname()
    print(f"sdk-reference: serving MCP on http://{bound[0]}:{bound[1]}/mcp", file=sys.stderr)
    sys.stderr.flush()
    uvicorn.Server(config).run(sockets=[listener])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools-json", metavar="PATH", help="publish these tool definitions")
    parser.add_argument("--answers-json", metavar="PATH", help="recorded answers to return")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP here")
    args = parser.parse_args()
    if args.tools_json is None:
        if args.http is not None or args.answers_json is not None:
            parser.error("--http and --answers-json need --tools-json")
        fastmcp_server().run("stdio")
        return
    with open(args.tools_json, encoding="utf-8") as f:
        tools = [types.Tool.model_validate(tool) for tool in json.load(f)]
    answers = None
    if args.answers_json is not None:
        with open(args.answers_json, encoding="utf-8") as f:
            answers = json.load(f)
    server = lowlevel_server(tools, answers)
    if args.http is not None:
        serve_http(server, args.http)
        return

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()

"""Reference stdio server built with the official MCP Python SDK, for side-by-side benches.

Default: ``MCPServer`` (the SDK's FastMCP) with one read-only tool, ``account_status``, that
returns a small dict like ours does when not signed in. With ``--tools-json PATH`` it uses
the SDK's low-level ``Server`` instead and publishes the tool definitions in PATH (a JSON
array, e.g. our own ``tools/list``), so both servers send the same tools/list payload; only
``account_status`` is callable then, and ``slow``, which answers after 60 s. The SDK
serves both eras on stdio (the first request decides).
Run: ``python bench/sdk_server.py [--tools-json PATH]``.
"""

import argparse
import json
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


def lowlevel_server(tools: list[types.Tool]) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools-json", metavar="PATH", help="publish these tool definitions")
    args = parser.parse_args()
    if args.tools_json is None:
        fastmcp_server().run("stdio")
        return
    with open(args.tools_json, encoding="utf-8") as f:
        server = lowlevel_server([types.Tool.model_validate(tool) for tool in json.load(f)])

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()

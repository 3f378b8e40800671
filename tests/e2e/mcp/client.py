"""A real MCP client (the official Python SDK's stdio client) for the tests.

usage: client.py SERVER_ARG... < calls.json

Starts the server, initializes, lists its tools, makes each call in
calls.json ([{"name": ..., "arguments": {...}}, ...]) and prints one JSON
object: the server's name, its tools (name, readOnlyHint, schema) and each
call's result (isError, the text, the structured content).

The server gets the SDK's default environment plus the variables named in
PASS_ENV (comma-separated), as a client's server registration gives them.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    calls = json.load(sys.stdin)
    names = [n for n in os.environ.get("PASS_ENV", "").split(",") if n in os.environ]
    server = StdioServerParameters(
        command=sys.argv[1], args=sys.argv[2:], env={n: os.environ[n] for n in names}
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            listed = await session.list_tools()
            out = {
                "server": init.server_info.name,
                "protocol": str(init.protocol_version),
                "tools": [
                    {
                        "name": t.name,
                        "read_only": bool(t.annotations and t.annotations.read_only_hint),
                        "schema": t.input_schema,
                        "description": t.description,
                    }
                    for t in listed.tools
                ],
                "calls": [],
            }
            for call in calls:
                result = await session.call_tool(call["name"], call.get("arguments") or {})
                out["calls"].append(
                    {
                        "name": call["name"],
                        "is_error": bool(result.is_error),
                        "text": "\n".join(
                            c.text for c in result.content if getattr(c, "type", "") == "text"
                        ),
                        "structured": result.structured_content,
                    }
                )
    print(json.dumps(out))


asyncio.run(main())

"""A real MCP client (the official Python SDK's Streamable HTTP client) for
the tests.

usage: client_http.py URL < calls.json

Connects to URL (with `Authorization: Bearer $MCP_TOKEN` when MCP_TOKEN is
set; URL `unix:PATH` reaches http://localhost/mcp over that Unix socket,
through httpx2's own transport), initializes, lists the tools, makes each
call in calls.json and prints one JSON object, as client.py does for stdio. A refusal of the
connection (401) is printed as {"error": "..."} with exit status 3.
"""

import asyncio
import json
import os
import sys

import httpx2

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main() -> None:
    calls = json.load(sys.stdin)
    token = os.environ.get("MCP_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else None
    url = sys.argv[1]
    if url.startswith("unix:"):
        http = httpx2.AsyncClient(
            headers=headers,
            transport=httpx2.AsyncHTTPTransport(uds=url[len("unix:") :]),
            timeout=httpx2.Timeout(30, read=300),
        )
        url = "http://localhost/mcp"
    else:
        http = create_mcp_http_client(headers=headers)
    async with http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                listed = await session.list_tools()
                out = {
                    "server": init.server_info.name,
                    "tools": sorted(t.name for t in listed.tools),
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
                        }
                    )
    print(json.dumps(out))


try:
    asyncio.run(main())
except BaseException as e:  # the SDK raises an ExceptionGroup on a 401
    if isinstance(e, (KeyboardInterrupt, SystemExit)):
        raise
    print(json.dumps({"error": repr(e)[:2000]}))
    sys.exit(3)

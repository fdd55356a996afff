"""`airlock mcp proxy` with the official MCP Python SDK over streamable HTTP: the SDK server runs
on a free port, the proxy in front of it, and an SDK client talks to the proxy. Prints `ALL OK`;
any failed check raises."""

import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcp_callbacks import check_read_page, check_sampling, elicitation, log_view, sampling, text_of

AIRLOCK = os.environ["AIRLOCK_BIN"]
SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sdk_server.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc):
    for _ in range(300):
        if proc.poll() is not None:
            raise AssertionError(f"process exited: {proc.args}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


async def session(url):
    async with streamable_http_client(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write, sampling_callback=sampling,
                                 elicitation_callback=elicitation,
                                 logging_callback=log_view) as s:
            await s.initialize()
            names = sorted(t.name for t in (await s.list_tools()).tools)
            assert names == ["confirm", "deploy", "echo", "read_page", "summarize"], names
            r = await s.call_tool("echo", {"text": "over http"})
            assert not r.is_error and text_of(r) == "over http", r
            r = await s.call_tool("delete_repo", {"name": "prod"})
            assert r.is_error and "TOOL_UNDECLARED" in text_of(r), r
            await check_read_page(s)
            await check_sampling(s)


def main():
    up, px = free_port(), free_port()
    server = subprocess.Popen([sys.executable, SERVER, "--http", str(up)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proxy = None
    try:
        wait_port(up, server)
        proxy = subprocess.Popen([AIRLOCK, "mcp", "proxy", "--server", "py-demo",
                                  "--upstream", f"http://127.0.0.1:{up}/mcp",
                                  "--listen", f"127.0.0.1:{px}"])
        wait_port(px, proxy)
        asyncio.run(session(f"http://127.0.0.1:{px}/mcp"))
        print("ALL OK", flush=True)
    finally:
        for p in (proxy, server):
            if p is not None:
                p.terminate()
                p.wait(timeout=10)


main()

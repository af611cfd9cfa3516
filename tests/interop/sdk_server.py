"""A server written on the official Python SDK 2.x (``MCPServer``), as a user would write one:
a tool returning ``str`` (the SDK sends the text and ``{"result": text}``), one returning a
model (structured content and its JSON as text), one returning an image, one failing.

``python sdk_server.py`` serves stdio; ``python sdk_server.py --http PORT`` serves the SDK's
Streamable HTTP transport on 127.0.0.1:PORT/mcp."""

from __future__ import annotations

import struct
import sys
import zlib

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

server = MCPServer("interop-sdk")


class Forecast(BaseModel):
    city: str
    temperature: float
    conditions: str


def png_pixel() -> bytes:
    """A valid 1x1 red PNG, built here so the server needs no file."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


@server.tool()
def greet(name: str) -> str:
    """Greet someone by name, over two lines."""
    return f"Hello, {name}!\nNice to meet you."


@server.tool()
def forecast(city: str) -> Forecast:
    """Tomorrow's weather for a city."""
    return Forecast(city=city, temperature=21.5, conditions="sunny")


@server.tool()
def pixel() -> Image:
    """A one-pixel image."""
    return Image(data=png_pixel(), format="png")


@server.tool()
def fail(reason: str) -> str:
    """Always fails, with the reason given."""
    raise ToolError(f"cannot do that: {reason}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()

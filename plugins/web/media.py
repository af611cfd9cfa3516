"""``GET /media/{file}``: files tools and MCP servers saved under ``$BOTHOST_HOME/media``.

Only flat names are served (no slashes, no ``..``, no hidden files), and only regular files
whose real path is inside the media folder, so a symlink cannot lead elsewhere. Media can
come from third parties: it is served with a sandboxing CSP and ``nosniff``, and anything a
browser would run as a page (HTML, SVG, XML) as a download, so it never runs as our origin.
"""

from __future__ import annotations

import mimetypes
import re
from pathlib import Path

from aiohttp import web

from bothost.api import HostApi

NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}")
ACTIVE_TYPES = (
    "text/html",
    "image/svg+xml",
    "application/xhtml+xml",
    "text/xml",
    "application/xml",
    "application/javascript",
    "text/javascript",
)


def media_path(home: Path, name: str) -> Path | None:
    """The file for ``name`` inside ``home/media``, or None when the name is not allowed."""
    if not NAME_PATTERN.fullmatch(name) or ".." in name:
        return None
    folder = (home / "media").resolve()
    path = (folder / name).resolve()
    if path.parent != folder or not path.is_file():
        return None
    return path


class MediaRoutes:
    def __init__(self, host: HostApi) -> None:
        self.host = host

    async def get(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["file"]
        path = media_path(self.host.home, name)
        if path is None:
            raise web.HTTPNotFound(text="no such media file\n")
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        headers = {
            "Content-Security-Policy": "sandbox; default-src 'none'",
            "X-Content-Type-Options": "nosniff",
            "Content-Type": kind,
            "Cache-Control": "private, max-age=3600",
        }
        if kind in ACTIVE_TYPES:
            headers["Content-Disposition"] = f'attachment; filename="{name}"'
        return web.FileResponse(path, headers=headers)

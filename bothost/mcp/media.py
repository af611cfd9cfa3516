"""Binary content from tool results (images, audio, blobs) saved under ``<home>/media/``.

Files are named by the hash of their bytes, so the same image returned twice is stored once
and a name never collides; the extension comes from the MIME type, when it is well formed
and one the host's table knows (:func:`known_type`), else ``.bin``. The model sees a link
``/media/<file>`` (the host's HTTP app serves that path) instead of the base64 itself.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import mimetypes
import os
import re
from pathlib import Path
from typing import Any

HASH_CHARS = 24  # 96 bits: no collisions in one home's lifetime
MAX_MEDIA_BYTES = 50 * 1024 * 1024  # larger payloads are not written to disk
EXTRA_EXTENSIONS = {
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
    "audio/mpeg": ".mp3",
    "image/webp": ".webp",
    "application/octet-stream": ".bin",
}


# RFC 6838 restricted-name for type and subtype; RFC 9110 parameters (token=token or a
# quoted string). A server's value must match all of it to be read as a type at all.
NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
TOKEN = r"[A-Za-z0-9!#$%&'*+.^_`|~-]+"
MIME = re.compile(rf'({NAME})/({NAME})(?:[ \t]*;[ \t]*{TOKEN}=(?:{TOKEN}|"[^"\\\x00-\x1f\x7f]*"))*')
MAX_MIME = 100  # characters of a mimeType read at all; real ones with parameters are < 60


class MediaError(ValueError):
    """Content that cannot be saved (bad base64, too big)."""


def named_type(value: Any) -> str | None:
    """A server's well-formed ``mimeType`` as ``type/subtype`` in lower case, parameters
    dropped, whether or not the host knows it; None when it is malformed or too long. For
    deciding what to do with content; a note shows only :func:`known_type`'s."""
    if not isinstance(value, str) or len(value) > MAX_MIME or not (m := MIME.fullmatch(value)):
        return None
    return f"{m[1]}/{m[2]}".lower()


def known_type(value: Any) -> str | None:
    """A server's ``mimeType`` as the host's own table writes it (``image/png``, parameters
    dropped), or None when it is malformed, too long, or a type the host does not know. So
    what a note shows is never the server's text, only a type it named."""
    mime = named_type(value)
    if mime is None:
        return None
    return mime if mime in EXTRA_EXTENSIONS or mimetypes.guess_extension(mime) else None


def extension(mime_type: Any) -> str:
    mime = known_type(mime_type) or "application/octet-stream"
    return EXTRA_EXTENSIONS.get(mime) or mimetypes.guess_extension(mime) or ".bin"


def save_base64(media_dir: Path, data: str, mime_type: Any) -> Path:
    """Decode `data` and store it; return the file's path."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise MediaError(f"invalid base64 content: {exc}") from None
    if len(raw) > MAX_MEDIA_BYTES:
        raise MediaError(f"content of {len(raw)} bytes is over the {MAX_MEDIA_BYTES} byte limit")
    media_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = hashlib.sha256(raw).hexdigest()[:HASH_CHARS] + extension(mime_type)
    path = media_dir / name
    if not path.exists():
        tmp = path.with_suffix(path.suffix + f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(tmp, path)
    return path


def link(path: Path) -> str:
    """How the model and the chat see a saved file."""
    return f"/media/{path.name}"


def human_size(n: float) -> str:
    for unit in ("B", "kB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"

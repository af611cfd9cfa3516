"""Binary content from tool results (images, audio, blobs) saved under ``<home>/media/``.

Files are named by the hash of their bytes, so the same image returned twice is stored once
and a name never collides; the extension comes from the MIME type. The model sees a link
``/media/<file>`` (the host's HTTP app serves that path) instead of the base64 itself.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import mimetypes
import os
from pathlib import Path

HASH_CHARS = 24  # 96 bits: no collisions in one home's lifetime
MAX_MEDIA_BYTES = 50 * 1024 * 1024  # larger payloads are not written to disk
EXTRA_EXTENSIONS = {
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
    "audio/mpeg": ".mp3",
    "image/webp": ".webp",
    "application/octet-stream": ".bin",
}


class MediaError(ValueError):
    """Content that cannot be saved (bad base64, too big)."""


def extension(mime_type: str | None) -> str:
    mime = (mime_type or "application/octet-stream").split(";")[0].strip().lower()
    return EXTRA_EXTENSIONS.get(mime) or mimetypes.guess_extension(mime) or ".bin"


def save_base64(media_dir: Path, data: str, mime_type: str | None) -> Path:
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

"""Reading remote files: one file by line range, a directory listing, a grep.

Reads go over SFTP (no shell quoting, exact bytes). A file is read as UTF-8 text by line
range with a byte cap; a file with NUL bytes in its first block is called binary and left
to `download`. Listings walk SFTP without following symlinks (a link to `/` must not turn
a listing into a crawl) and stop at an entry cap. Grep runs the host's own `grep` (fast,
and it never ships the tree over the wire), with `-Z` so file names containing `:` still
parse, and stops reading once it has enough matches.
"""

from __future__ import annotations

import shlex
import stat
from datetime import UTC, datetime

from . import commands
from .errors import SshError, wrap
from .sshlib import paramiko

MAX_READ_BYTES = 1024 * 1024  # what one read_file returns; a larger file is read by ranges
MAX_SCAN_BYTES = 64 * 1024 * 1024  # lines skipped to reach `offset`; beyond, grep is the tool
DEFAULT_LINES = 2000
BINARY_SNIFF_BYTES = 8192
MAX_LIST_ENTRIES = 2000
MAX_GREP_MATCHES = 500
GREP_TIMEOUT = 60.0

_KINDS = {stat.S_IFDIR: "dir", stat.S_IFREG: "file", stat.S_IFLNK: "link"}


def read_text(
    sftp: paramiko.SFTPClient, path: str, offset: int = 1, limit: int = DEFAULT_LINES
) -> dict:
    """Lines `offset`..`offset+limit-1` (1-based) of a text file, with its size."""
    if offset < 1 or limit < 1:
        raise SshError("offset and limit must be at least 1")
    try:
        attrs = sftp.stat(path)
        if stat.S_ISDIR(attrs.st_mode or 0):
            raise SshError(f"{path} is a directory; use list_files")
        with sftp.open(path, "rb") as handle:
            if b"\0" in handle.read(BINARY_SNIFF_BYTES):
                raise SshError(f"{path} looks binary; use download to fetch it")
            handle.seek(0)
            count_all = (attrs.st_size or 0) <= MAX_READ_BYTES  # cheap to count to the end
            chosen, more, total = _pick_lines(handle, path, offset, limit, count_all)
    except (OSError, paramiko.SSHException) as exc:
        raise wrap(exc, path) from None
    return {
        "path": path,
        "size": attrs.st_size,
        "first_line": offset,
        "last_line": offset - 1 + len(chosen),
        "total_lines": total,
        "more": more,
        "content": b"".join(chosen).decode("utf-8", errors="replace"),
    }


def _pick_lines(
    handle, path: str, offset: int, limit: int, count_all: bool
) -> tuple[list[bytes], bool, int | None]:
    """(lines offset.., whether more follow, the line count if the end was reached)."""
    chosen: list[bytes] = []
    size = scanned = number = 0
    for raw in handle:
        number += 1
        scanned += len(raw)
        if number < offset:
            if scanned > MAX_SCAN_BYTES:
                raise SshError(f"line {offset} of {path} is too far in; use grep_files or exec")
            continue
        if len(chosen) >= limit or size + len(raw) > MAX_READ_BYTES:
            if not chosen:  # one enormous line: show its start rather than nothing
                chosen.append(raw[:MAX_READ_BYTES])
            if not count_all:
                return chosen, True, None
            return chosen, True, number + sum(1 for _ in handle)
        chosen.append(raw)
        size += len(raw)
    return chosen, False, number


def _entry(path: str, attrs: paramiko.SFTPAttributes) -> dict:
    mode = attrs.st_mode or 0
    return {
        "path": path,
        "type": _KINDS.get(stat.S_IFMT(mode), "other"),
        "size": attrs.st_size,
        "mode": f"{stat.S_IMODE(mode):04o}",
        "modified": datetime.fromtimestamp(attrs.st_mtime or 0, UTC).isoformat(),
    }


def list_dir(
    sftp: paramiko.SFTPClient,
    path: str,
    recursive: bool = False,
    include_hidden: bool = True,
    max_entries: int = MAX_LIST_ENTRIES,
) -> dict:
    """Entries under `path` (a file gives itself), sorted, at most `max_entries`."""
    try:
        path = sftp.normalize(path)
        top = sftp.stat(path)
    except (OSError, paramiko.SSHException) as exc:
        raise wrap(exc, path) from None
    if not stat.S_ISDIR(top.st_mode or 0):
        return {"path": path, "entries": [_entry(path, top)], "truncated": False}
    entries: list[dict] = []
    pending = [path]
    truncated = False
    while pending and not truncated:
        folder = pending.pop(0)
        try:
            listing = sorted(sftp.listdir_attr(folder), key=lambda a: a.filename)
        except (OSError, paramiko.SSHException) as exc:
            if folder == path:
                raise wrap(exc, folder) from None
            entries.append({"path": folder, "type": "dir", "error": str(wrap(exc, folder))})
            continue
        for attrs in listing:
            if not include_hidden and attrs.filename.startswith("."):
                continue
            if len(entries) >= max_entries:
                truncated = True
                break
            child = f"{folder.rstrip('/')}/{attrs.filename}"
            entries.append(_entry(child, attrs))
            if recursive and stat.S_ISDIR(attrs.st_mode or 0):
                pending.append(child)
    return {"path": path, "entries": entries, "truncated": truncated}


def grep_command(
    pattern: str, path: str, ignore_case: bool, fixed: bool, include: str | None
) -> str:
    argv = ["grep", "-r", "-n", "-I", "-H", "-Z", "--color=never", "-F" if fixed else "-E"]
    if ignore_case:
        argv.append("-i")
    if include:
        argv.append(f"--include={include}")
    argv += ["-e", pattern, "--", path]
    return " ".join(shlex.quote(a) for a in argv)


def grep(
    client: paramiko.SSHClient,
    pattern: str,
    path: str,
    ignore_case: bool = False,
    fixed: bool = False,
    include: str | None = None,
    max_matches: int = MAX_GREP_MATCHES,
) -> dict:
    """Lines matching `pattern` (extended regex, or a fixed string) in files under `path`."""
    if not pattern:
        raise SshError("pattern must not be empty")
    command = grep_command(pattern, path, ignore_case, fixed, include)
    # Room for max_matches lines of a few hundred bytes; the cap stops a runaway grep.
    result = commands.run(
        client, command, GREP_TIMEOUT, max_bytes=max_matches * 512, stop_when_full=True
    )
    if result.exit_status == 2 and not result.stdout:
        raise SshError(f"grep failed on {path}: {result.stderr.strip() or 'bad pattern or path'}")
    matches = []
    for line in result.stdout.splitlines():
        name, sep, rest = line.partition("\0")
        number, colon, text = rest.partition(":")
        if not sep or not colon or not number.isdigit():
            continue
        matches.append({"path": name, "line": int(number), "text": text[:1000]})
        if len(matches) >= max_matches:
            break
    return {
        "pattern": pattern,
        "path": path,
        "matches": matches,
        "truncated": len(matches) >= max_matches or result.truncated or result.timed_out,
    }

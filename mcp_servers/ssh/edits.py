"""Changing remote text files: replace one exact snippet, or a range of lines.

Both read the whole file over SFTP, change it in memory and write it back atomically: a
temp file beside the original, given the original's mode and (when allowed) owner, then
`posix-rename` over it, so a reader never sees half a file and a dropped connection
leaves the old one. When the owner cannot be kept (an unprivileged login editing a
group-writable file of someone else) the file is rewritten in place instead, because
silently changing a config file's owner is worse than a non-atomic write.
`edit_file` refuses a snippet that is missing or occurs more than once: a model that
guessed the context wrong must not change the wrong place.
"""

from __future__ import annotations

import secrets
import stat

from .errors import SshError, wrap
from .sshlib import paramiko

MAX_EDIT_BYTES = 8 * 1024 * 1024  # editing bigger files in memory over SFTP is the wrong tool


def _read(sftp: paramiko.SFTPClient, path: str) -> tuple[str, paramiko.SFTPAttributes]:
    try:
        attrs = sftp.stat(path)
        if stat.S_ISDIR(attrs.st_mode or 0):
            raise SshError(f"{path} is a directory")
        if (attrs.st_size or 0) > MAX_EDIT_BYTES:
            raise SshError(f"{path} is larger than {MAX_EDIT_BYTES} bytes; edit it with exec")
        with sftp.open(path, "rb") as handle:
            data = handle.read()
    except (OSError, paramiko.SSHException) as exc:
        raise wrap(exc, path) from None
    try:
        return data.decode("utf-8"), attrs
    except UnicodeDecodeError:
        raise SshError(f"{path} is not UTF-8 text; refusing to edit it") from None


def _write(sftp: paramiko.SFTPClient, path: str, text: str, attrs: paramiko.SFTPAttributes) -> None:
    data = text.encode("utf-8")
    folder, _, name = path.rpartition("/")
    temp = f"{folder}/.{name}.bothost-{secrets.token_hex(4)}"
    try:
        with sftp.open(temp, "wb") as handle:
            handle.write(data)
        sftp.chmod(temp, stat.S_IMODE(attrs.st_mode or 0o644))
        mine = sftp.stat(temp)
        if (mine.st_uid, mine.st_gid) != (attrs.st_uid, attrs.st_gid):
            try:
                sftp.chown(temp, attrs.st_uid, attrs.st_gid)
            except OSError:
                sftp.remove(temp)
                _write_in_place(sftp, path, data)
                return
        sftp.posix_rename(temp, path)
    except (OSError, paramiko.SSHException) as exc:
        try:
            sftp.remove(temp)
        except (OSError, paramiko.SSHException):
            pass
        raise wrap(exc, path) from None


def _write_in_place(sftp: paramiko.SFTPClient, path: str, data: bytes) -> None:
    with sftp.open(path, "wb") as handle:
        handle.write(data)


def edit(sftp: paramiko.SFTPClient, path: str, old: str, new: str) -> dict:
    """Replace the one occurrence of `old` in the file with `new`."""
    if not old:
        raise SshError("old_text must not be empty")
    text, attrs = _read(sftp, path)
    count = text.count(old)
    if count == 0:
        raise SshError(
            f"old_text not found in {path}; read the file again and copy the text exactly "
            "(whitespace and line endings included)"
        )
    if count > 1:
        raise SshError(
            f"old_text occurs {count} times in {path}; include more surrounding lines so it "
            "matches exactly once"
        )
    at = text.index(old)
    _write(sftp, path, text[:at] + new + text[at + len(old) :], attrs)
    line = text.count("\n", 0, at) + 1
    return {
        "path": path,
        "line": line,
        "lines_removed": len(old.splitlines()),
        "lines_added": len(new.splitlines()),
    }


def replace_lines(
    sftp: paramiko.SFTPClient, path: str, start: int, end: int, new_text: str
) -> dict:
    """Replace lines `start`..`end` (1-based, inclusive) with `new_text`.

    `end = start - 1` inserts before line `start` without removing anything; an empty
    `new_text` deletes the range.
    """
    text, attrs = _read(sftp, path)
    lines = text.splitlines(keepends=True)
    if start < 1 or end < start - 1 or end > len(lines) or start > len(lines) + 1:
        raise SshError(
            f"line range {start}-{end} is outside {path} (it has {len(lines)} lines); "
            "use end = start - 1 to insert"
        )
    replacement = new_text.splitlines(keepends=True)
    if replacement and not replacement[-1].endswith(("\n", "\r")):
        # Keep the file's line structure: the new block ends where the old one did.
        ending = _line_ending(lines[end - 1] if end >= 1 else "", text)
        if end < len(lines) or (lines and lines[-1].endswith(("\n", "\r"))):
            replacement[-1] += ending
    if start > 1 and not lines[start - 2].endswith(("\n", "\r")) and replacement:
        lines[start - 2] += _line_ending("", text)
    lines[start - 1 : end] = replacement
    _write(sftp, path, "".join(lines), attrs)
    return {
        "path": path,
        "start": start,
        "lines_removed": max(0, end - start + 1),
        "lines_added": len(replacement),
        "total_lines": len(lines),
    }


def _line_ending(line: str, text: str) -> str:
    for ending in ("\r\n", "\n", "\r"):
        if line.endswith(ending):
            return ending
    return "\r\n" if "\r\n" in text else "\n"

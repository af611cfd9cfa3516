"""Tools on remote files: read, list, grep, edit, replace lines, upload, download.

Each tool is a thin shell over `files`, `edits` or `transfer`, run on the alias's pooled
connection through the service (threads, deadlines, password prompts). Text results are
plain text where a model reads them best (file content, grep lines) and JSON elsewhere.
"""

from __future__ import annotations

import asyncio

from bothost.mcp_servers.kit import Context, Server

from . import edits, files, transfer
from .capabilities import (
    CHANGES,
    CHANGES_HOST,
    FETCHES_TO_LOCAL,
    READ_ONLY,
    READS_HOST,
    SENDS_LOCAL_FILES,
)
from .errors import SshError, wrap
from .service import SshService, tool_errors
from .sshlib import paramiko

TRANSFER_TIMEOUT = 1800.0  # a large tree over a slow link


def _number(content: str, first: int) -> str:
    lines = content.splitlines()
    width = len(str(first + len(lines)))
    return "\n".join(f"{n:>{width}}\t{line}" for n, line in enumerate(lines, start=first))


def register(server: Server, svc: SshService) -> None:
    @server.tool(annotations=READ_ONLY, capabilities=READS_HOST)
    @tool_errors
    async def read_file(
        alias: str,
        path: str,
        offset: int = 1,
        limit: int = files.DEFAULT_LINES,
        line_numbers: bool = False,
        ctx: Context | None = None,
    ) -> str:
        """Read a text file on a host, by line range.

        Args:
            alias: SSH alias (see list_aliases).
            path: Absolute path, or relative to the login user's home.
            offset: First line to return (1-based).
            limit: How many lines at most.
            line_numbers: Prefix each line with its number (for replace_lines).
        """
        got = await svc.with_sftp(alias, ctx, files.read_text, path, offset, limit)
        if not got["content"]:
            if offset == 1:
                return f"[{path} is empty]"
            return f"[{path} has {got['total_lines']} lines; nothing from line {offset}]"
        body = _number(got["content"], offset) if line_numbers else got["content"]
        if got["more"] or offset > 1:
            body = body if body.endswith("\n") else body + "\n"
            span = f"lines {got['first_line']}-{got['last_line']}"
            if got["total_lines"] is not None:
                span += f" of {got['total_lines']}"
            if got["more"]:
                span += f"; read on with offset={got['last_line'] + 1}"
            body += f"[{span}]"
        return body

    @server.tool(annotations=READ_ONLY, capabilities=READS_HOST)
    @tool_errors
    async def list_files(
        alias: str,
        path: str = ".",
        recursive: bool = False,
        include_hidden: bool = True,
        max_entries: int = files.MAX_LIST_ENTRIES,
        ctx: Context | None = None,
    ) -> dict:
        """List a directory on a host: type, size, mode, modification time of each entry.

        Args:
            alias: SSH alias.
            path: Directory (or file) to list; "." is the login user's home.
            recursive: Descend into subdirectories (symlinks are not followed).
            include_hidden: Include names starting with ".".
            max_entries: Stop after this many entries.
        """
        return await svc.with_sftp(
            alias, ctx, files.list_dir, path, recursive, include_hidden, max_entries
        )

    @server.tool(annotations=READ_ONLY, capabilities=READS_HOST)
    @tool_errors
    async def grep_files(
        alias: str,
        pattern: str,
        path: str,
        ignore_case: bool = False,
        fixed_string: bool = False,
        include: str | None = None,
        max_matches: int = files.MAX_GREP_MATCHES,
        ctx: Context | None = None,
    ) -> str:
        """Search files under a path on a host (the host's grep -rn; binary files skipped).

        Args:
            alias: SSH alias.
            pattern: Extended regular expression (or a plain string with fixed_string).
            path: File or directory to search.
            ignore_case: Case-insensitive match.
            fixed_string: Treat pattern as a plain string.
            include: Only files whose name matches this glob, e.g. "*.conf".
            max_matches: Stop after this many matching lines.
        """
        found = await svc.with_client(
            alias,
            ctx,
            files.grep,
            pattern,
            path,
            ignore_case,
            fixed_string,
            include,
            max_matches,
            timeout=files.GREP_TIMEOUT,
        )
        lines = [f"{m['path']}:{m['line']}: {m['text']}" for m in found["matches"]]
        if not lines:
            return f"no matches for {pattern!r} under {path}"
        if found["truncated"]:
            lines.append(f"[stopped after {len(lines)} matches; narrow the search]")
        return "\n".join(lines)

    @server.tool(annotations=CHANGES, capabilities=CHANGES_HOST)
    @tool_errors
    async def edit_file(
        alias: str, path: str, old_text: str, new_text: str, ctx: Context | None = None
    ) -> dict:
        """Replace one exact snippet of a text file on a host (atomic write).

        old_text must occur exactly once, whitespace included; a missing or ambiguous
        snippet is refused and nothing changes.

        Args:
            alias: SSH alias.
            path: File to edit.
            old_text: Exact text to replace (copy it from read_file).
            new_text: Replacement text (may be empty to delete).
        """
        return await svc.with_sftp(alias, ctx, edits.edit, path, old_text, new_text)

    @server.tool(annotations=CHANGES, capabilities=CHANGES_HOST)
    @tool_errors
    async def replace_lines(
        alias: str, path: str, start: int, end: int, new_text: str, ctx: Context | None = None
    ) -> dict:
        """Replace lines start..end (1-based, inclusive) of a text file on a host.

        Use end = start - 1 to insert before line start; an empty new_text deletes.

        Args:
            alias: SSH alias.
            path: File to change.
            start: First line to replace.
            end: Last line to replace.
            new_text: Lines to put there.
        """
        return await svc.with_sftp(alias, ctx, edits.replace_lines, path, start, end, new_text)

    @server.tool(annotations=CHANGES, capabilities=SENDS_LOCAL_FILES)
    @tool_errors
    async def upload(
        alias: str,
        remote_path: str,
        local_path: str | None = None,
        content: str | None = None,
        recursive: bool = False,
        ctx: Context | None = None,
    ) -> dict:
        """Copy a local file or directory to a host, or write given text to a remote file.

        Destination rules are scp's: an existing remote directory receives the source
        under its own name; otherwise remote_path is the new name.

        Args:
            alias: SSH alias.
            remote_path: Destination on the host.
            local_path: File or directory on this machine (or give content instead).
            content: Text to write to remote_path (instead of local_path).
            recursive: Copy a directory tree.
        """
        if (local_path is None) == (content is None):
            raise SshError("give exactly one of local_path and content")
        if content is not None:
            return await svc.with_sftp(
                alias, ctx, _write_text, remote_path, content, timeout=TRANSFER_TIMEOUT
            )
        return await svc.with_sftp(
            alias,
            ctx,
            transfer.upload,
            local_path,
            remote_path,
            recursive,
            _progress(ctx),
            timeout=TRANSFER_TIMEOUT,
        )

    @server.tool(annotations=CHANGES, capabilities=FETCHES_TO_LOCAL)
    @tool_errors
    async def download(
        alias: str,
        remote_path: str,
        local_path: str,
        recursive: bool = False,
        ctx: Context | None = None,
    ) -> dict:
        """Copy a file or directory from a host to this machine (scp's destination rules).

        Args:
            alias: SSH alias.
            remote_path: File or directory on the host.
            local_path: Destination here; an existing directory receives it by name.
            recursive: Copy a directory tree.
        """
        return await svc.with_sftp(
            alias,
            ctx,
            transfer.download,
            remote_path,
            local_path,
            recursive,
            _progress(ctx),
            timeout=TRANSFER_TIMEOUT,
        )


def _progress(ctx: Context | None) -> transfer.Progress:
    """A callback for the copying thread that sends `notifications/progress` from the loop."""
    if ctx is None:
        return None
    loop = asyncio.get_running_loop()

    def report(files: int, size: int) -> None:
        message = f"{files} files, {size} bytes"
        asyncio.run_coroutine_threadsafe(ctx.progress(files, None, message), loop)

    return report


def _write_text(sftp: paramiko.SFTPClient, remote_path: str, content: str) -> dict:
    data = content.encode("utf-8")
    try:
        with sftp.open(remote_path, "wb") as handle:
            handle.write(data)
    except (OSError, paramiko.SSHException) as exc:
        raise wrap(exc, remote_path) from None
    return {"destination": remote_path, "files": 1, "bytes": len(data)}

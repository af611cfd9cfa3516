"""Copying files and trees between this machine and a host, with scp's destination rules.

Both directions share one walk over two "sides" (the local filesystem, a host's SFTP):
- the source must exist; a directory needs `recursive`;
- a destination that is an existing directory receives the source under its own name;
- otherwise the destination is the new name (its parent must exist), and a trailing `/`
  on a destination that does not exist is an error, as with scp;
- a copied directory is created if missing; file modes are kept, symlinks inside a tree
  are skipped and reported (following them can loop or escape the tree).
A tree copy reports progress after each file, for the caller to forward.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import SshError, wrap
from .sshlib import paramiko

MAX_FILES = 10_000  # a bigger tree is a job for rsync, not a chat turn

# Called (from the copying thread) after each file of a tree with (files, bytes) so far.
Progress = Callable[[int, int], None] | None


class _Local:
    join = staticmethod(os.path.join)
    basename = staticmethod(lambda p: os.path.basename(p.rstrip("/")) or p)
    dirname = staticmethod(os.path.dirname)

    def stat(self, path: str, follow: bool = True) -> int | None:
        try:
            return (os.stat if follow else os.lstat)(path).st_mode
        except FileNotFoundError:
            return None

    def listdir(self, path: str) -> list[str]:
        return sorted(os.listdir(path))

    def mkdir(self, path: str, mode: int) -> None:
        os.mkdir(path, mode)


class _Remote:
    join = staticmethod(posixpath.join)
    basename = staticmethod(lambda p: posixpath.basename(p.rstrip("/")) or p)
    dirname = staticmethod(posixpath.dirname)

    def __init__(self, sftp: paramiko.SFTPClient) -> None:
        self.sftp = sftp

    def stat(self, path: str, follow: bool = True) -> int | None:
        try:
            return (self.sftp.stat if follow else self.sftp.lstat)(path).st_mode
        except FileNotFoundError:
            return None

    def listdir(self, path: str) -> list[str]:
        return sorted(self.sftp.listdir(path))

    def mkdir(self, path: str, mode: int) -> None:
        self.sftp.mkdir(path, mode)


@dataclass
class _Report:
    destination: str
    files: int = 0
    directories: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)

    def as_dict(self, source: str) -> dict:
        return {"source": source, **self.__dict__}


def _target(src_side, src: str, dst_side, dst: str, is_dir: bool) -> str:
    dst_mode = dst_side.stat(dst)
    if dst_mode is not None and stat.S_ISDIR(dst_mode):
        return dst_side.join(dst, src_side.basename(src))
    if dst.endswith("/"):
        raise SshError(f"destination directory {dst} does not exist")
    parent = dst_side.dirname(dst) or "."
    parent_mode = dst_side.stat(parent)
    if parent_mode is None or not stat.S_ISDIR(parent_mode):
        raise SshError(f"destination's parent directory {parent} does not exist")
    if dst_mode is not None and is_dir:
        raise SshError(f"cannot copy a directory onto the file {dst}")
    return dst


def _copy(
    src_side, dst_side, src: str, dst: str, recursive: bool, copy_file, progress: Progress
) -> dict:
    src_mode = src_side.stat(src)
    if src_mode is None:
        raise SshError(f"no such file or directory: {src}")
    is_dir = stat.S_ISDIR(src_mode)
    if is_dir and not recursive:
        raise SshError(f"{src} is a directory; pass recursive=true to copy it")
    report = _Report(_target(src_side, src, dst_side, dst, is_dir))
    if not is_dir:
        existing = dst_side.stat(report.destination)
        if existing is not None and stat.S_ISDIR(existing):
            raise SshError(f"cannot overwrite the directory {report.destination} with a file")
        report.bytes += copy_file(src, report.destination, stat.S_IMODE(src_mode))
        report.files += 1
        return report.as_dict(src)
    pending = [(src, report.destination, src_mode)]
    while pending:
        folder, target, mode = pending.pop(0)
        existing = dst_side.stat(target)
        if existing is None:
            dst_side.mkdir(target, stat.S_IMODE(mode) | 0o700)
        elif not stat.S_ISDIR(existing):
            raise SshError(f"cannot copy a directory onto the file {target}")
        report.directories += 1
        for name in src_side.listdir(folder):
            child, child_target = src_side.join(folder, name), dst_side.join(target, name)
            child_mode = src_side.stat(child, follow=False) or 0
            if stat.S_ISDIR(child_mode):
                pending.append((child, child_target, child_mode))
            elif stat.S_ISREG(child_mode):
                if report.files >= MAX_FILES:
                    raise SshError(f"more than {MAX_FILES} files; copy a smaller tree")
                report.bytes += copy_file(child, child_target, stat.S_IMODE(child_mode))
                report.files += 1
                if progress is not None:
                    progress(report.files, report.bytes)
            else:
                report.skipped.append(child)
    return report.as_dict(src)


def _local_path(path: str) -> str:
    # The server's working directory is an accident of how the host started it.
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        raise SshError(f"local path {path!r} must be absolute (or start with ~)")
    return expanded


def upload(
    sftp: paramiko.SFTPClient,
    local: str,
    remote: str,
    recursive: bool = False,
    progress: Progress = None,
) -> dict:
    """Copy `local` (on this machine) to `remote` on the host."""

    def put(src: str, dst: str, mode: int) -> int:
        attrs = sftp.put(src, dst, confirm=True)
        sftp.chmod(dst, mode)
        return attrs.st_size or 0

    local = _local_path(local)
    try:
        return _copy(_Local(), _Remote(sftp), local, remote, recursive, put, progress)
    except (OSError, paramiko.SSHException) as exc:
        raise wrap(exc, getattr(exc, "filename", None) or remote) from None


def download(
    sftp: paramiko.SFTPClient,
    remote: str,
    local: str,
    recursive: bool = False,
    progress: Progress = None,
) -> dict:
    """Copy `remote` on the host to `local` on this machine."""

    def get(src: str, dst: str, mode: int) -> int:
        sftp.get(src, dst)
        os.chmod(dst, mode)
        return os.path.getsize(dst)

    local = _local_path(local)
    try:
        return _copy(_Remote(sftp), _Local(), remote, local, recursive, get, progress)
    except (OSError, paramiko.SSHException) as exc:
        raise wrap(exc, getattr(exc, "filename", None) or remote) from None

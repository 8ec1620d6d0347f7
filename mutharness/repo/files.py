"""File primitives: atomic writes (never into an existing inode, never through a link),
plain copies, and removal that never follows a link."""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_BY_UMASK = 0o666  # what open() asks for; the umask then decides
REPLACE_RETRY_S = 5.0  # Windows: how long a rename over a file open elsewhere is retried


def _replace(source: Path, target: Path) -> None:
    """`os.replace`; on Windows retried while the target is open in another process without
    FILE_SHARE_DELETE (what CPython's open() does), which fails the rename for that moment."""
    deadline = time.monotonic() + REPLACE_RETRY_S
    while True:
        try:
            os.replace(source, target)
            return
        except PermissionError:
            if sys.platform != "win32" or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def write_atomic(path: Path, data: str | bytes, mode: int | None = None) -> None:
    """Replace `path` whole (`str` is written as UTF-8). A new file's mode follows the umask,
    unless `mode` is given, which is then set exactly. An OSError names `path`."""
    _write(path, data, mode, _replace)


def create_atomic(path: Path, data: str | bytes) -> bool:
    """Write `path` whole, as `write_atomic`, unless something is already there (a file, a
    link, written by another process a moment ago): that is kept, and False returned. On a
    file system without hard links a file written there at the same moment may be replaced
    (by a whole file: never a mix of the two)."""
    created = True

    def link(source: Path, target: Path) -> None:
        nonlocal created
        try:
            os.link(source, target)  # fails on anything at `target`, a dangling link too
        except FileExistsError:
            created = False
        except OSError:  # a file system without hard links (FAT, exFAT, some network ones)
            if os.path.lexists(target):
                created = False
            else:  # still whole, but a sibling writing this moment may replace it
                os.replace(source, target)
                return
        source.unlink()

    _write(path, data, None, link)
    return created


def _write(path: Path, data: str | bytes, mode: int | None,
           place: Callable[[Path, Path], None]) -> None:
    """The bytes to a new sibling of `path`, then `place`d at `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    handle = os.open(temporary, flags, _BY_UMASK if mode is None else mode)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data.encode("utf-8") if isinstance(data, str) else data)
        if mode is not None:
            os.chmod(temporary, mode)  # exactly, whatever the umask
        place(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise OSError(error.errno, error.strerror, str(path)) from error  # name the target
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def copy_file(source: str | Path, target: str | Path) -> str:
    """Copy one file's bytes and its times and mode (as `shutil.copy2`, whose signature it has,
    for `copytree`), with plain reads and writes: never the platform's copy call
    (`CopyFile2` on Windows, which Wine 8 does not implement)."""
    with open(source, "rb") as reading, open(target, "wb") as writing:
        shutil.copyfileobj(reading, writing, 1024 * 1024)
    shutil.copystat(source, target)
    return str(target)


def copy_tree(source: Path, target: Path) -> None:
    """Copy a directory tree, links as links, every file with `copy_file`."""
    shutil.copytree(source, target, symlinks=True, copy_function=copy_file)


def _make_deletable(path: str) -> None:
    """Give the owner write access to `path`'s directory and to `path` itself (a read-only
    file, as git's objects on Windows; a read-only directory a test left behind)."""
    parent = os.path.dirname(path) or os.curdir
    os.chmod(parent, stat.S_IMODE(os.lstat(parent).st_mode) | stat.S_IRWXU)
    info = os.lstat(path)
    if stat.S_ISDIR(info.st_mode):
        os.chmod(path, stat.S_IMODE(info.st_mode) | stat.S_IRWXU)
    elif not stat.S_ISLNK(info.st_mode):
        os.chmod(path, stat.S_IMODE(info.st_mode) | stat.S_IREAD | stat.S_IWRITE)


_EXTENDED = "\\\\?\\"  # Windows' prefix that turns off name parsing (reserved names)


def _onerror(func: Callable[..., Any], path: str, _info: Any) -> None:
    """Make `path` deletable, then delete it (a directory: whole, now that it can be read).

    On Windows a file a test named after a device (`nul`, `con`...) is reached only through
    the extended path prefix."""
    try:
        _make_deletable(path)
    except FileNotFoundError:
        return  # already gone (removed whole by an earlier retry)
    if os.path.isdir(path) and not os.path.islink(path):
        remove_tree(Path(path))
        return
    try:
        func(path)
    except OSError:
        # `nul` in any directory names the device on Windows: lstat and chmod quietly act
        # on it, the unlink fails; the extended prefix names the file itself
        if sys.platform != "win32" or path.startswith(_EXTENDED):
            raise
        parent, name = os.path.split(path)  # abspath() itself turns `...\\nul` into the device
        func(_EXTENDED + os.path.join(os.path.abspath(parent), name))


def remove_tree(path: Path) -> None:
    """Delete a directory tree, read-only files and directories included; never follows a link."""
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=_onerror)
    else:  # pragma: no cover - Python 3.11
        shutil.rmtree(path, onerror=_onerror)


def remove_path(path: Path) -> None:
    """Delete a file, link or directory tree (never what a link points to)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        remove_tree(path)
        return
    try:
        path.unlink()
    except OSError:
        _onerror(os.unlink, str(path), None)  # read-only, or a Windows device name

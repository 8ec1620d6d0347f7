"""Portable repo-relative path rules for spec fields, and the one walk that never follows a link.

Everything here is pure except `linked_parent`, which only `lstat`s; `shown` makes any path
printable.
"""

from __future__ import annotations

import hashlib
import re
import stat
from pathlib import Path

_DRIVE = re.compile(r"^[A-Za-z]:")
# Windows device names (as os.path.isreserved, Python 3.13): reserved with any extension,
# and with spaces before it ("nul .txt"); the superscript digits count as digits.
_RESERVED = frozenset(
    {"con", "prn", "aux", "nul", "conin$", "conout$"}
    | {f"com{n}" for n in "123456789\u00b9\u00b2\u00b3"}
    | {f"lpt{n}" for n in "123456789\u00b9\u00b2\u00b3"}
)
_WINDOWS_FORBIDDEN = frozenset('<>"|?*')
MAX_PATH_CHARS = 1024
WORKSPACE_PREFIX = "mh-"  # a workspace directory's name begins so (made, swept, pruned)
_NOT_PLAIN = re.compile(r"[^A-Za-z0-9._-]")
# What a terminal obeys or breaks a line at: C0 and C1 controls, DEL, the Unicode line and
# paragraph separators, and the bidirectional overrides and isolates.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shown(text: str) -> str:
    """`text` safe to print and to write as UTF-8: what is not UTF-8 in it (the escapes of a
    file name's undecodable bytes) appears as `\\xNN`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = text.encode("utf-8", "surrogatepass")
        return raw.decode("utf-8", "backslashreplace")
    return text


def repo_path(name: str) -> str | None:
    """A path a user named (`./specs/x.json`, `specs\\x.json`, `specs//x.json`) as git names
    it (`specs/x.json`); None when it is absolute, climbs out (`..`) or names nothing."""
    if Path(name).is_absolute() or name.startswith(("/", "\\")) or _DRIVE.match(name):
        return None
    parts = [part for part in name.replace("\\", "/").split("/") if part not in ("", ".")]
    return "/".join(parts) if parts and ".." not in parts else None


def plain_name(name: str) -> str:
    """`name` (a spec id) as one portable file name component that no list of paths splits
    (`:` in PYTHONPATH, `;` on Windows) and no tool reads as more than one word: itself when
    it is plain ASCII (letters, digits, `.`, `_`, `-`), else its plain characters and a
    digest of the whole, so that two names never become one."""
    plain = _NOT_PLAIN.sub("_", name).strip(".") or "_"
    if plain == name and name not in (".", ".."):
        return name
    return f"{plain[:64]}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


def visible(text: str, keep: str = "") -> str:
    """`text` as `shown`, with each control character (but those in `keep`) written as its
    escape: `\\n`, `\\x1b`, `\\u202e`."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if char in keep:
            return char
        code = ord(char)
        return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")

    return _CONTROLS.sub(escape, shown(text))


def path_problem(path: str) -> str | None:
    """Why `path` is not a portable, repo-relative, `/`-separated file path (None if it is)."""
    if not path:
        return "is empty"
    if len(path) > MAX_PATH_CHARS:
        return f"is longer than {MAX_PATH_CHARS} characters"
    if any(ord(char) < 32 or ord(char) == 127 for char in path):
        return "contains a control character"
    if "\\" in path:
        return "contains a backslash; use '/' separators"
    if path.startswith("/"):
        return "is absolute; use a path relative to the repository root"
    if _DRIVE.match(path):
        return "starts with a drive letter; use a path relative to the repository root"
    if ":" in path:
        return "contains ':' (a drive or stream separator on Windows)"
    if forbidden := sorted(_WINDOWS_FORBIDDEN.intersection(path)):
        return f"contains {''.join(forbidden)!r}, which Windows does not allow in file names"
    for part in path.split("/"):
        if part in ("", ".", ".."):
            return f"has an empty, '.' or '..' component ({part!r})"
        if part.endswith((".", " ")):
            return f"has a component ending in a dot or space ({part!r})"
        if part.split(".")[0].rstrip(" ").lower() in _RESERVED:
            return f"has a reserved Windows device name ({part!r})"
    return None


def linked_parent(root: Path, relative: str) -> str | None:
    """The first directory on the way from `root` to `relative` that is a symlink or not a
    directory (as a repo-relative path), or None when every one that exists is a real directory.

    Each component is `lstat`ed, never followed: a path under a symlinked directory would read,
    write or delete a file outside `root`.
    """
    parts = relative.split("/")[:-1]
    current = root
    for index, part in enumerate(parts):
        current = current / part
        try:
            mode = current.lstat().st_mode
        except FileNotFoundError:
            return None
        except OSError:  # e.g. not a directory further up, or no permission: not a safe way
            return "/".join(parts[: index + 1])
        if not stat.S_ISDIR(mode):
            return "/".join(parts[: index + 1])
    return None

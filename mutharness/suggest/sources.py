"""A changed source file as `suggest` reads it: its bytes, its text in the encoding its
language reads it in (Python: UTF-8, or what a PEP 263 coding cookie declares; JavaScript and
TypeScript: UTF-8, as node reads them), or why it cannot be read, said to the user."""

from __future__ import annotations

import codecs
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import PurePosixPath

# PEP 263: a comment on one of the first two lines naming the encoding
COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


@dataclass(frozen=True)
class Source:
    """A file's bytes and its text: `text.encode(encoding) == data` (a UTF-8 byte order
    mark stays in the text, as U+FEFF)."""

    path: str  # relative, posix
    data: bytes
    text: str
    encoding: str  # a codec name Python knows

    @classmethod
    def of_text(cls, text: str, path: str = "m.py") -> Source:
        """A UTF-8 file holding `text`."""
        return cls(path, text.encode("utf-8"), text, "utf-8")


def read_source(path: str, data: bytes) -> Source | str:
    """The file `path` holding `data`, read as its language reads it; else why it is not,
    in words for the user (what is wrong, and where)."""
    if PurePosixPath(path).suffix != ".py":
        return _decoded(path, data, "utf-8", "as node reads it")
    cookie = _cookie(data)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        if cookie is not None and not _known(cookie):
            return ("its coding cookie (PEP 263) names an encoding Python does not know: "
                    f"{cookie}")
        encoding = "utf-8"  # not UTF-8 where no cookie is, or a mark and a cookie disagree
    if encoding == "utf-8-sig":
        encoding = "utf-8"  # the mark is kept in the text, where the candidates count it
    said = ("the encoding its coding cookie names" if cookie is not None
            else "and no coding cookie (PEP 263) names its encoding")
    return _decoded(path, data, encoding, said)


def _decoded(path: str, data: bytes, encoding: str, said: str) -> Source | str:
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        name = "UTF-8" if codecs.lookup(encoding).name == "utf-8" else encoding
        line = data.count(b"\n", 0, error.start) + 1
        comma = "" if said.startswith("and ") else ","
        return f"not {name} (byte 0x{data[error.start]:02x} on line {line}){comma} {said}"
    if text.encode(encoding) != data:
        return f"its text in {encoding} does not encode back to its bytes: no anchor can name it"
    return Source(path, data, text, encoding)


def _cookie(data: bytes) -> str | None:
    """The encoding a coding cookie on one of the first two lines names, if one does."""
    for line in data.split(b"\n", 2)[:2]:
        found = COOKIE.match(line)
        if found:
            return found.group(1).decode("ascii", errors="replace")
        if line.strip() and not line.lstrip().startswith(b"#"):
            return None  # code before it: a cookie on the second line only after a comment
    return None


def _known(encoding: str) -> bool:
    try:
        codecs.lookup(encoding)
    except LookupError:
        return False
    return True

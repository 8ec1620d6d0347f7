"""Spec and test text made inert in Markdown (and the HTML it renders to): shared by the
evidence documents and the pull request summary."""

from __future__ import annotations

import re

from mutharness.paths import visible

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]|~])")
_AUTOLINK = re.compile(r"(?i)(?<=[a-z])://|\bwww\.")  # GFM turns these into live links


def escape_markdown(value: object, limit: int | None = None) -> str:
    """Text that renders as itself in Markdown and HTML: no markup, links, mentions or breaks.

    With `limit`, text longer than that many characters is cut, ending in `...`.
    """
    text = visible(" ".join(str(value).split()))
    if limit is not None and len(text) > limit:
        text = text[: limit - 3] + "..."
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKDOWN_SPECIALS.sub(r"\\\1", text)
    text = text.replace("#", "&#35;").replace("@", "&#64;")  # no issue link, no mention
    return _AUTOLINK.sub(lambda match: match.group().replace(".", "&#46;").replace(":", "&#58;"),
                         text)

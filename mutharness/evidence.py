"""The only Jinja2 user: results JSON -> byte-stable Markdown evidence documents."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2

from mutharness.errors import EnvironmentProblem
from mutharness.report import write_atomic

INDEX = "index.md"
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]|~])")
_BACKTICK_RUN = re.compile(r"`+")
MAX_CELL_CHARS = 500


def escape_markdown(value: object) -> str:
    """Text that renders as itself in Markdown and HTML: no markup, links, mentions or breaks."""
    text = " ".join(str(value).split())
    if len(text) > MAX_CELL_CHARS:
        text = text[: MAX_CELL_CHARS - 3] + "..."
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKDOWN_SPECIALS.sub(r"\\\1", text)
    return text.replace("@", "&#64;")


def code_span(value: object) -> str:
    """Content for a `code span` inside a table cell: one line, no backtick, pipes escaped."""
    return " ".join(str(value).split()).replace("`", "'").replace("|", "\\|")


def fence(value: object, language: str = "") -> str:
    """A fenced block whose fence is longer than any backtick run in the content."""
    text = str(value)
    if not text.endswith("\n"):
        text += "\n"
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    marker = "`" * max(3, longest + 1)
    return f"{marker}{language}\n{text}{marker}"


def link_target(value: object) -> str:
    """A relative link target for a spec id."""
    return quote(str(value), safe="-._~")


def environment(template_dir: Path | None = None) -> jinja2.Environment:
    """The Jinja2 environment: packaged templates, overridable file by file from `template_dir`."""
    loaders: list[jinja2.BaseLoader] = []
    if template_dir is not None:
        loaders.append(jinja2.FileSystemLoader(str(template_dir)))
    loaders.append(jinja2.PackageLoader("mutharness", "templates"))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # the output is Markdown; every spec-derived value goes through `md`
    )
    env.filters.update(md=escape_markdown, code=code_span, fence=fence, link=link_target)
    return env


def _tidy(text: str) -> str:
    """Collapse runs of blank lines and end with exactly one newline."""
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"


def render_documents(
    run: Mapping[str, Any], existing: tuple[str, ...] = (), template_dir: Path | None = None
) -> dict[str, str]:
    """File name -> Markdown for every spec in the results, plus the index."""
    env = environment(template_dir)
    ids = {spec["id"] for spec in run["specs"]}
    others = sorted(name for name in existing if name not in ids)
    try:
        spec_template = env.get_template("spec.md.j2")
        documents = {
            f"{spec['id']}.md": _tidy(spec_template.render(run=run, spec=spec))
            for spec in run["specs"]
        }
        documents[INDEX] = _tidy(env.get_template("index.md.j2").render(run=run, others=others))
    except jinja2.TemplateError as error:
        raise EnvironmentProblem(f"an evidence template failed: {error}") from None
    return documents


def write_evidence(
    run: Mapping[str, Any], out_dir: Path, template_dir: Path | None = None
) -> tuple[Path, ...]:
    """Render and atomically write `<spec-id>.md` per spec and `index.md` into `out_dir`."""
    existing = tuple(
        sorted(path.stem for path in out_dir.glob("*.md") if path.name != INDEX)
    ) if out_dir.is_dir() else ()
    written: list[Path] = []
    for name, text in render_documents(run, existing, template_dir).items():
        path = out_dir / name
        write_atomic(path, text)
        written.append(path)
    return tuple(written)

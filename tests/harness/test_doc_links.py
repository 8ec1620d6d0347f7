"""The docs point only at what exists: every intra-doc link at a file of the repository and, with
an `#anchor`, at a heading of that file; every prose citation of a document's section at a
heading that document has.

The docs checked: every Markdown file at the repository's root (README.md, ARCHITECTURE.md)
and in docs/ (the site's pages, the generated ones included), as git lists them, tracked or
about to be (not ignored). evidence/ is rendered from results, and shared/ lies outside the
repository.

The rules, pure functions tested on tables below:

- A link is a Markdown link or image (inline or by reference) outside code: a fenced, indented
  or inline code span shows a link, it makes none. A target with a scheme (`https:`,
  `mailto:`) is out of scope. The rest is a path relative to the file holding it (empty: that
  file) and an optional `#anchor`; it names a file or directory the repository has, inside it;
  from a page of the site (docs/), inside docs/, which alone mkdocs serves.
- A heading's anchor is its explicit `{#Id}` (`attr_list`, as docs/messages.md writes them;
  only the site makes it), else its slug. GitHub shows every file, and mkdocs the pages of
  docs/ too, and their slugs differ ('`--since REV`' is `--since-rev` on GitHub, `-since-rev`
  in mkdocs): a link's anchor must name the same heading in every renderer that shows its
  target. A repeated heading's anchor is numbered as each renderer numbers it (`x-1`, `x_1`).
- A citation is a title in double quotes (straight or curly) beside a document's name:
  `README, "Title"`, `the README's "Title"`, `ARCHITECTURE section "Title"`, `node.md's
  "Title"`, `"Title" in the README`, `"Title" section of docs/node.md`. A name is a path
  ending in `.md` (relative to the citing file, else to the root) or the stem of a document
  named in capitals (README, ARCHITECTURE, PERFORMANCE, RELIABILITY). The title must be the
  text of one of that document's headings (case, runs of spaces and backticks aside).
"""

from __future__ import annotations

import difflib
import posixpath
import re
import subprocess
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parents[2]
SITE = "docs/"  # mkdocs.yml's docs_dir: the pages mkdocs renders (and GitHub too)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # https:, mailto:, ...: out of scope
CODE = ("\x02", "\x03")  # marks around a code span's text where a citation is looked for
# attr_list's attributes closing a heading: `{#Id}`, `{: #Id .class }`
ATTRIBUTES = re.compile(r"\s*\{:?\s*([^{}]*)\}\s*$")
QUOTED = r"[\"\u201c](?P<title>[^\"\u201c\u201d]{1,200}?)[\"\u201d]"
NAMED = r"(?P<doc>(?<![\w./-])(?:[\w.-]+/)*[\w.-]+\.md\b|\b[A-Z][A-Z_-]*[A-Z]\b)"
CITATIONS = (
    # README, "Title" / the README's "Title" / ARCHITECTURE section "Title"
    re.compile(NAMED + r"(?:'s|\u2019s)?,?\s+(?:section\s+)?" + QUOTED),
    # "Title" in the README / "Title" section of docs/node.md
    re.compile(QUOTED + r"\s+(?:section\s+)?(?:in|of|on|under)\s+(?:the\s+)?" + NAMED),
)


# --- the rules -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    """A link's target as written, and the line (1-based) it is on."""

    line: int
    target: str


@dataclass(frozen=True)
class Heading:
    """A heading: its line, its text as shown (code without backticks, `{#Id}` left out),
    the text GitHub shows (the `{#Id}` kept: GitHub has no attr_list), and its explicit id."""

    line: int
    text: str
    shown_on_github: str
    explicit_id: str | None


@dataclass(frozen=True)
class Citation:
    """A document's section cited in prose: the document as named, the title as quoted."""

    line: int
    doc: str
    title: str


def _parsed(markdown: str) -> list[Token]:
    return MarkdownIt("commonmark").enable("table").parse(markdown)


def _code_span_breaks(raw: str) -> list[int]:
    """The line breaks inside each code span of an inline token's source, in order (markdown-it
    gives a span's content with its line breaks made spaces): a run of backticks up to the
    next run of as many; an escaped backtick opens none."""
    breaks: list[int] = []
    at = 0
    while at < len(raw):
        if raw[at] == "\\":
            at += 2
            continue
        if raw[at] != "`":
            at += 1
            continue
        run = re.match(r"`+", raw[at:])
        assert run is not None
        opened = at + len(run.group())
        closing = re.compile(r"(?<!`)" + run.group() + r"(?!`)").search(raw, opened)
        if closing is None:
            at = opened
            continue
        breaks.append(raw.count("\n", opened, closing.start()))
        at = closing.end()
    return breaks


def _placed(token: Token) -> list[tuple[int, Token]]:
    """Each child of an inline token with the line (1-based) it starts on."""
    line = (token.map[0] if token.map is not None else 0) + 1
    breaks = iter(_code_span_breaks(token.content))
    placed: list[tuple[int, Token]] = []
    for child in token.children or []:
        placed.append((line, child))
        if child.type in ("softbreak", "hardbreak"):
            line += 1
        elif child.type == "code_inline":
            line += next(breaks, 0)
    return placed


def _lined_text(
    token: Token, code: tuple[str, str] = ("", "")
) -> tuple[str, list[tuple[int, int]]]:
    """An inline token's text as shown (each code span's content between `code`'s two marks;
    by default nothing: without backticks; a line break a newline), and where each of its
    pieces starts: (offset in the text, line)."""
    parts: list[str] = []
    starts: list[tuple[int, int]] = []
    offset = 0
    for line, child in _placed(token):
        if child.type in ("softbreak", "hardbreak"):
            piece = "\n"
        elif child.type == "code_inline":
            piece = code[0] + child.content + code[1]
        elif child.type in ("text", "html_inline"):
            piece = child.content
        else:
            continue
        starts.append((offset, line))
        parts.append(piece)
        offset += len(piece)
    return "".join(parts), starts


def _inline_text(token: Token) -> str:
    return _lined_text(token)[0]


def links(markdown: str) -> list[Link]:
    """Every link and image of `markdown` outside code, with its line; no external one."""
    found: list[Link] = []
    for token in _parsed(markdown):
        if token.type != "inline" or token.map is None:
            continue
        for line, child in _placed(token):
            target = (child.attrs.get("href") if child.type == "link_open"
                      else child.attrs.get("src") if child.type == "image" else None)
            if isinstance(target, str) and not SCHEME.match(target):
                found.append(Link(line, target))
    return found


def headings(markdown: str) -> list[Heading]:
    """Every heading of `markdown` (ATX or setext, none in code), in order."""
    tokens = _parsed(markdown)
    found: list[Heading] = []
    for opening, inline in pairwise(tokens):
        if opening.type != "heading_open" or opening.map is None:
            continue
        shown = _inline_text(inline)
        explicit = None
        attributes = ATTRIBUTES.search(shown)
        if attributes is not None:
            ids = [word[1:] for word in attributes.group(1).split() if word.startswith("#")]
            explicit = ids[-1] if ids else None
        text = shown[: attributes.start()] if attributes is not None else shown
        found.append(Heading(opening.map[0] + 1, " ".join(text.split()), shown, explicit))
    return found


def mkdocs_slug(text: str) -> str:
    """The slug of mkdocs' toc extension (Python-Markdown's `toc.slugify`, separator `-`):
    accents folded and every other non-ASCII character dropped, then every character but
    word characters, whitespace and `-` dropped, stripped, lowercased, and each run of
    whitespace and `-` one `-`."""
    value = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def github_slug(text: str) -> str:
    """GitHub's slug of a heading (github-slugger): lowercased, every character but letters,
    digits, marks, `_`, `-` and the space dropped, each space a `-` (no run is merged)."""
    kept = "".join(char for char in text.lower()
                   if char in "_- " or unicodedata.category(char)[0] in "LNM")
    return kept.replace(" ", "-")


def github_anchors(found: Iterable[Heading]) -> dict[str, Heading]:
    """Each heading by the anchor GitHub gives it: a repeated slug numbered `-1`, `-2`..."""
    anchors: dict[str, Heading] = {}
    counts: dict[str, int] = {}
    for heading in found:
        base = anchor = github_slug(heading.shown_on_github)
        while anchor in counts:
            counts[base] += 1
            anchor = f"{base}-{counts[base]}"
        counts[anchor] = 0
        anchors[anchor] = heading
    return anchors


def mkdocs_anchors(found: Iterable[Heading]) -> dict[str, Heading]:
    """Each heading by the id mkdocs gives it: its explicit id, else its slug, made unique
    against every id before it and every explicit one as toc's `unique` does (`_1`, `_2`...;
    an empty slug is `_1`)."""
    headings_ = list(found)
    used = {heading.explicit_id for heading in headings_ if heading.explicit_id}
    anchors: dict[str, Heading] = {}
    for heading in headings_:
        anchor = heading.explicit_id
        if anchor is None:
            anchor = mkdocs_slug(heading.text)
            if anchor in used or not anchor:
                numbered = re.match(r"^(.*)_([0-9]+)$", anchor)
                base, count = ((numbered.group(1), int(numbered.group(2))) if numbered
                               else (anchor, 0))
                count += 1
                while f"{base}_{count}" in used:
                    count += 1
                anchor = f"{base}_{count}"
            used.add(anchor)
        anchors[anchor] = heading
    return anchors


def _in_code(text: str, position: int) -> bool:
    """Whether `position` of a text marked by `_lined_text(token, CODE)` is in a code span."""
    return text.rfind(CODE[0], 0, position) > text.rfind(CODE[1], 0, position)


def citations(markdown: str, stems: Iterable[str]) -> list[Citation]:
    """Every prose citation of a document's section in `markdown`, outside code; a document
    is named by a path ending in `.md`, or by one of `stems` (the capitalised documents'
    names: README, ARCHITECTURE...)."""
    named = set(stems)
    found: list[tuple[int, Citation]] = []
    for token in _parsed(markdown):
        if token.type != "inline" or token.map is None:
            continue
        text, starts = _lined_text(token, CODE)
        for pattern in CITATIONS:
            for match in pattern.finditer(text):
                doc, title = match.group("doc"), match.group("title")
                quotes = (match.start("title") - 1, match.end("title"))
                if (doc.endswith(".md") or doc in named) and not any(
                        _in_code(text, at) for at in (match.start("doc"), *quotes)):
                    line = max(line for offset, line in starts if offset <= match.start())
                    shown = title.replace(CODE[0], "`").replace(CODE[1], "`")
                    found.append((match.start(), Citation(line, doc, " ".join(shown.split()))))
    return [citation for _, citation in sorted(found, key=lambda at: (at[1].line, at[0]))]


def _in_repository(source: str, path: str) -> str | None:
    """`path` (relative to the file `source`, or to the root with a leading `/`) as a path
    from the repository's root; None when it leaves the repository."""
    joined = path.lstrip("/") if path.startswith("/") else posixpath.join(
        posixpath.dirname(source), path)
    resolved = posixpath.normpath(joined) if joined else "."
    return None if resolved == ".." or resolved.startswith("../") else resolved


def _exists(path: str, files: frozenset[str]) -> bool:
    return path in files or path == "." or any(file.startswith(path + "/") for file in files)


def _nearest(anchor: str, anchors: Iterable[str]) -> str:
    close = difflib.get_close_matches(anchor, list(anchors), n=1, cutoff=0.6)
    return f" (nearest: #{close[0]})" if close else ""


def anchor_problem(target: str, anchor: str, markdown: str) -> str | None:
    """Why `#anchor` names no heading of the Markdown file `target` in every renderer that
    shows it (None: it does)."""
    found = headings(markdown)
    if any(heading.explicit_id == anchor for heading in found):
        return None
    on_github = github_anchors(found)
    on_site = mkdocs_anchors(found) if target.startswith(SITE) else None
    heading = on_github.get(anchor) or (on_site or {}).get(anchor)
    if heading is None:
        return f"{target} has no heading whose anchor is #{anchor}" + _nearest(
            anchor, [*on_github, *(on_site or {})])
    renderers = {"GitHub": on_github} | ({"mkdocs": on_site} if on_site is not None else {})
    for renderer, anchors in renderers.items():
        if anchors.get(anchor) is not heading:
            given = next(name for name, named in anchors.items() if named is heading)
            return (f"{target}:{heading.line}, heading {heading.text!r}, is #{given} on "
                    f"{renderer}: a link to #{anchor} works on one renderer only")
    return None


def link_problem(source: str, target: str, files: frozenset[str],
                 texts: Mapping[str, str]) -> str | None:
    """Why the link `target` in the file `source` (paths from the repository's root) points
    at nothing (None: it points at what it names). `files`: the repository's files; `texts`:
    the text of each of its Markdown files."""
    path, _, anchor = target.partition("#")
    resolved = _in_repository(source, unquote(path)) if path else source
    if resolved is None:
        return "it leaves the repository"
    if not _exists(resolved, files):
        return f"no file {resolved}"
    if source.startswith(SITE) and not resolved.startswith(SITE):
        return f"{resolved} is outside {SITE}, which alone mkdocs serves"
    if anchor and resolved.endswith(".md"):
        return anchor_problem(resolved, unquote(anchor), texts[resolved])
    return None


def _titled(text: str) -> str:
    return " ".join(text.replace("`", "").split()).casefold()


def citation_problem(source: str, citation: Citation, texts: Mapping[str, str]) -> str | None:
    """Why `citation` in the file `source` names no section that exists (None: it does):
    its document is none of `texts` (each Markdown file of the repository by its path), or
    has no heading of that title."""
    if citation.doc.endswith(".md"):
        candidates = [_in_repository(source, citation.doc), citation.doc]
    else:
        candidates = [path for path in sorted(texts)
                      if posixpath.basename(path) == f"{citation.doc}.md"]
    document = next((path for path in candidates if path is not None and path in texts), None)
    if document is None:
        return f"no document {citation.doc}"
    titles = {_titled(heading.text): heading for heading in headings(texts[document])}
    if _titled(citation.title) in titles:
        return None
    close = difflib.get_close_matches(_titled(citation.title), list(titles), n=1, cutoff=0.5)
    return f"{document} has no heading {citation.title!r}" + (
        f" (nearest: {titles[close[0]].text!r})" if close else "")


# --- the docs of this repository -------------------------------------------------------------


@cache
def repository_files() -> frozenset[str]:
    """The repository's files, tracked or not ignored, that exist in the working tree."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode("utf-8").split("\0")
    return frozenset(path for path in listed if path and (ROOT / path).is_file())


@cache
def markdown_texts() -> Mapping[str, str]:
    return {path: (ROOT / path).read_text(encoding="utf-8")
            for path in repository_files() if path.endswith(".md")}


def capitalised(texts: Iterable[str]) -> list[str]:
    """The names prose gives documents without `.md`: the capitalised ones' stems."""
    return sorted({stem for stem in (posixpath.basename(path)[:-3] for path in texts
                                     if path.endswith(".md")) if stem.isupper()})


def checked_docs() -> list[str]:
    """The docs: the Markdown files at the root and in docs/."""
    return sorted(path for path in markdown_texts()
                  if "/" not in path or posixpath.dirname(path) + "/" == SITE)


def test_the_docs_checked_are_the_root_s_markdown_and_the_site_s_pages() -> None:
    docs = checked_docs()

    assert {"README.md", "ARCHITECTURE.md", "docs/index.md", "docs/messages.md"} <= set(docs)
    assert [doc for doc in docs if doc.startswith("evidence/")] == []


def test_every_intra_doc_link_names_a_file_and_heading_that_exist() -> None:
    files, texts = repository_files(), markdown_texts()
    problems = [
        f"{doc}:{link.line}: ({link.target}): {problem}"
        for doc in checked_docs() for link in links(texts[doc])
        if (problem := link_problem(doc, link.target, files, texts)) is not None
    ]

    assert problems == [], "links that point at nothing:\n" + "\n".join(problems)


def test_every_cited_section_is_a_heading_of_the_document_it_names() -> None:
    texts = markdown_texts()
    problems = [
        f"{doc}:{citation.line}: {citation.doc} \"{citation.title}\": {problem}"
        for doc in checked_docs() for citation in citations(texts[doc], capitalised(texts))
        if (problem := citation_problem(doc, citation, texts)) is not None
    ]

    assert problems == [], "sections cited that do not exist:\n" + "\n".join(problems)


# --- the rules on tables ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "on_github", "in_mkdocs"),
    [
        pytest.param("Install", "install", "install", id="one-word"),
        pytest.param("Quick start: your first spec in a minute",
                     "quick-start-your-first-spec-in-a-minute",
                     "quick-start-your-first-spec-in-a-minute", id="colon"),
        pytest.param("Where a default verify's time goes", "where-a-default-verifys-time-goes",
                     "where-a-default-verifys-time-goes", id="apostrophe"),
        pytest.param("Speed, -j and CI shards", "speed--j-and-ci-shards",
                     "speed-j-and-ci-shards", id="hyphen-runs-merged-in-mkdocs-only"),
        pytest.param("`--since REV` on `verify`, `baseline` and `check`",
                     "--since-rev-on-verify-baseline-and-check",
                     "-since-rev-on-verify-baseline-and-check", id="code-span"),
        pytest.param("Approved platform skips: `specs/platform-skips.json`",
                     "approved-platform-skips-specsplatform-skipsjson",
                     "approved-platform-skips-specsplatform-skipsjson", id="path"),
        pytest.param("`mutharness redfirst --base REV [SPEC...] [--test PATH_OR_ID]...`",
                     "mutharness-redfirst---base-rev-spec---test-path_or_id",
                     "mutharness-redfirst-base-rev-spec-test-path_or_id", id="brackets"),
        pytest.param("Café über", "café-über", "cafe-uber", id="accents"),
        pytest.param("\u2705 mutharness: all 2 mutation(s) behaved as expected",
                     "-mutharness-all-2-mutations-behaved-as-expected",
                     "mutharness-all-2-mutations-behaved-as-expected", id="emoji"),
        pytest.param("a  b", "a--b", "a-b", id="two-spaces"),
    ],
)
def test_a_heading_s_slug_is_the_one_github_and_mkdocs_make(
    heading: str, on_github: str, in_mkdocs: str
) -> None:
    found = headings(f"## {heading}\n")[0]

    assert (github_slug(found.shown_on_github), mkdocs_slug(found.text)) == (on_github, in_mkdocs)


def test_a_repeated_heading_is_numbered_as_each_renderer_numbers_it() -> None:
    found = headings("# Notes\n\n## Notes\n\n## Notes_1\n\n## Notes\n")

    assert list(github_anchors(found)) == ["notes", "notes-1", "notes_1", "notes-2"]
    assert list(mkdocs_anchors(found)) == ["notes", "notes_1", "notes_2", "notes_3"]


def test_an_explicit_id_is_the_heading_s_anchor_on_the_site_and_shown_as_text_on_github() -> None:
    found = headings("## A spec has problems {#SpecError}\n\n## Suggest {: #suggest .x }\n")

    assert [(heading.text, heading.explicit_id) for heading in found] == [
        ("A spec has problems", "SpecError"), ("Suggest", "suggest")]
    assert list(mkdocs_anchors(found)) == ["SpecError", "suggest"]
    assert list(github_anchors(found)) == ["a-spec-has-problems-specerror", "suggest--suggest-x-"]


LINKED = """\
# Page

A [file](other.md), [a heading](other.md#some-heading), [here](#page) and ![an image](img.png).
A [reference][ref], [an external one](https://example.org/x.md) and [mail](mailto:a@b.c).
`[inline code](not-a-link.md)` is code, [`code` in a link's text](code.md) a link, `a code
span over two lines` and [after it](after.md).

| a | b |
| --- | --- |
| [in a table](table.md) | x |

- a list item
  [in a list](list.md)

```text
[in a fence](fenced.md)
```

    [indented code](indented.md)

<!-- [in a comment](comment.md) -->

[ref]: by-reference.md#anchor
"""


def test_links_are_found_with_their_lines_outside_code_and_never_external() -> None:
    assert links(LINKED) == [
        Link(3, "other.md"), Link(3, "other.md#some-heading"), Link(3, "#page"),
        Link(3, "img.png"), Link(4, "by-reference.md#anchor"), Link(5, "code.md"),
        Link(6, "after.md"), Link(10, "table.md"), Link(13, "list.md"),
    ]


FILES = frozenset({"README.md", "ARCHITECTURE.md", "docs/a.md", "docs/b.md",
                   "docs/images/x.png", "src/pkg/mod.py"})
TEXTS = {
    "README.md": "# mutharness\n\n## Install\n\n## Quick start: a spec\n",
    "ARCHITECTURE.md": "# Architecture\n\n## The pipeline (`verify`)\n",
    "docs/a.md": "# A\n\n## `--since REV` on `check`\n\n## Security\n\n## Errors {#Errors}\n",
    "docs/b.md": "# B\n\n## Notes\n\n## Notes\n",
}


@pytest.mark.parametrize(
    ("source", "target", "problem"),
    [
        pytest.param("README.md", "docs/a.md", None, id="a-file"),
        pytest.param("README.md", "docs/a.md#security", None, id="a-heading"),
        pytest.param("README.md", "#install", None, id="this-file"),
        pytest.param("README.md", "#quick-start-a-spec", None, id="this-file-punctuation"),
        pytest.param("docs/a.md", "#Errors", None, id="explicit-id"),
        pytest.param("docs/a.md", "b.md#notes-1", "docs/b.md:5, heading 'Notes', is #notes_1 "
                     "on mkdocs: a link to #notes-1 works on one renderer only",
                     id="numbered-on-github-only"),
        pytest.param("docs/a.md", "images/x.png", None, id="an-image"),
        pytest.param("ARCHITECTURE.md", "src/pkg", None, id="a-directory"),
        pytest.param("ARCHITECTURE.md", "#the-pipeline-verify", None, id="github-only-file"),
        pytest.param("README.md", "docs/c.md", "no file docs/c.md", id="no-file"),
        pytest.param("README.md", "docs/a.md#securty",
                     "docs/a.md has no heading whose anchor is #securty (nearest: #security)",
                     id="no-heading"),
        pytest.param("README.md", "docs/a.md#-since-rev-on-check",
                     "docs/a.md:3, heading '--since REV on check', is #--since-rev-on-check on "
                     "GitHub: a link to #-since-rev-on-check works on one renderer only",
                     id="mkdocs-slug-only"),
        pytest.param("README.md", "docs/a.md#--since-rev-on-check",
                     "docs/a.md:3, heading '--since REV on check', is #-since-rev-on-check on "
                     "mkdocs: a link to #--since-rev-on-check works on one renderer only",
                     id="github-slug-only"),
        pytest.param("docs/a.md", "../ARCHITECTURE.md",
                     "ARCHITECTURE.md is outside docs/, which alone mkdocs serves",
                     id="site-page-out-of-the-site"),
        pytest.param("docs/a.md", "../../shared/x.md", "it leaves the repository",
                     id="out-of-the-repository"),
    ],
)
def test_a_link_points_at_a_file_of_the_repository_and_a_heading_every_renderer_anchors(
    source: str, target: str, problem: str | None
) -> None:
    assert link_problem(source, target, FILES, TEXTS) == problem


CITING = """\
The verdict is the same (README, "Quick start: a spec"), as the README's "Install" says;
ARCHITECTURE section "The pipeline (`verify`)" and "Security" in docs/a.md agree, and
so does "Notes" section of b.md. The README's "A fork is not
a fresh interpreter" is no heading. After `a span
over two lines`, README "Install" again.

```text
README, "Not a citation: code"
```
A "quoted phrase" alone, and `README, "in inline code"` too, cite nothing we check.
"""


def test_citations_are_a_quoted_title_beside_a_document_s_name() -> None:
    assert citations(CITING, ["README", "ARCHITECTURE"]) == [
        Citation(1, "README", "Quick start: a spec"),
        Citation(1, "README", "Install"),
        Citation(2, "ARCHITECTURE", "The pipeline (`verify`)"),
        Citation(2, "docs/a.md", "Security"),
        Citation(3, "b.md", "Notes"),
        Citation(3, "README", "A fork is not a fresh interpreter"),
        Citation(5, "README", "Install"),
    ]


def test_only_a_capitalised_document_s_name_or_a_path_names_a_document() -> None:
    text = 'CAUGHT "the low bound" in SURVIVED, and RELIABILITY "Forgery" but README "Install".\n'

    assert citations(text, ["README"]) == [Citation(1, "README", "Install")]


@pytest.mark.parametrize(
    ("source", "citation", "problem"),
    [
        pytest.param("docs/a.md", Citation(1, "README", "quick start: a  spec"), None,
                     id="case-and-spaces-aside"),
        pytest.param("docs/b.md", Citation(1, "ARCHITECTURE", "The pipeline (verify)"), None,
                     id="backticks-aside"),
        pytest.param("docs/b.md", Citation(1, "a.md", "Errors"), None, id="relative-path"),
        pytest.param("README.md", Citation(1, "docs/a.md", "Security"), None, id="root-path"),
        # as docs/PERFORMANCE.md once cited the README (sections long gone from it)
        pytest.param("docs/b.md", Citation(1, "README", "The warm route"),
                     "README.md has no heading 'The warm route'", id="no-such-section"),
        pytest.param("docs/b.md", Citation(1, "README", "Quick start"),
                     "README.md has no heading 'Quick start' "
                     "(nearest: 'Quick start: a spec')", id="a-heading-cut-short"),
        pytest.param("README.md", Citation(1, "GUIDE", "Install"), "no document GUIDE",
                     id="no-such-document"),
    ],
)
def test_a_citation_names_a_heading_of_the_document_it_names(
    source: str, citation: Citation, problem: str | None
) -> None:
    assert citation_problem(source, citation, TEXTS) == problem

"""The only Jinja2 user: results JSON -> byte-stable Markdown evidence documents."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2

from mutharness.errors import EnvironmentProblem, InputProblem, ResultsError
from mutharness.model.redfirst import RedFirst
from mutharness.model.results import RunResult, from_json, to_json
from mutharness.options import rederive_flags
from mutharness.paths import visible
from mutharness.repo.files import write_atomic
from mutharness.reports.markdown import escape_markdown

INDEX = "index.md"
FACTS_SUFFIX = ".json"  # beside each <spec-id>.md: the facts it was rendered from, no timings
TEMPLATES = ("spec.md.j2", "index.md.j2")
MAX_CELL_CHARS = 500
_BACKTICK_RUN = re.compile(r"`+")
_CODE_UNSAFE = frozenset("<>")  # literal in a code span, but raw HTML to a naive reader
# An absolute POSIX or Windows path with at least one directory: it names a machine, not a fact.
_ABSOLUTE_PATH = re.compile(
    r"(?<![\w.~/:\\])(?:[A-Za-z]:[\\/]|/)(?:[^\s\\/]+[\\/])+([^\s\\/]*[^\s\\/.,;:)'\"])"
)


def without_absolute_paths(value: object) -> str:
    """`value` with every absolute path cut down to `.../<its last component>`."""
    return _ABSOLUTE_PATH.sub(lambda match: ".../" + match.group(1), str(value))


def table_cell(value: object) -> str:
    """Escaped text for a table cell, at most MAX_CELL_CHARS long."""
    return escape_markdown(value, MAX_CELL_CHARS)


def plain(value: object) -> str:
    """Escaped text from the facts (an error, a reason) with no machine-specific paths."""
    return escape_markdown(without_absolute_paths(value))


def code_span(value: object) -> str:
    """A complete inline code span for a table cell: one line, every character kept.

    The delimiter is longer than any backtick run inside; `|` is escaped for GFM tables. Text
    with `<` or `>` becomes escaped text in a <code> element, so no raw markup appears.
    """
    text = " ".join(str(value).split())
    if _CODE_UNSAFE.intersection(text):
        return f"<code>{table_cell(text)}</code>"
    text = text.replace("|", "\\|")
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    if not longest:
        return f"`{text}`"
    marker = "`" * (longest + 1)
    return f"{marker} {text} {marker}"


def shell_word(value: object) -> str:
    """One word of a POSIX shell command line, quoted when it needs to be."""
    return shlex.quote(str(value))


def fence(value: object, language: str = "") -> str:
    """A fenced block whose fence is longer than any backtick run in the content.

    CRLF becomes LF and a lone CR shows as U+240D, so that a document has one kind of line
    ending and the content keeps its lines.
    """
    text = str(value).replace("\r\n", "\n").replace("\r", "\u240d")
    if not text.endswith("\n"):
        text += "\n"
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    marker = "`" * max(3, longest + 1)
    return f"{marker}{language}\n{text}{marker}"


def sha256sum_line(path: str, digest: str) -> str:
    """One line of `sha256sum` output (the GNU escaping of `\\`, LF and CR in names)."""
    if any(char in path for char in "\\\n\r"):
        escaped = path.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
        return f"\\{digest}  {escaped}"
    return f"{digest}  {path}"


def sha256sum(digests: Mapping[str, str]) -> str:
    """`sha256sum` output for path -> digest, in code point order of the paths."""
    return "".join(sha256sum_line(path, digests[path]) + "\n" for path in sorted(digests))


def link_target(value: object) -> str:
    """A relative link target for a spec id."""
    return quote(str(value), safe="-._~")


def environment(template_dir: Path | None = None) -> jinja2.Environment:
    """The Jinja2 environment: packaged templates, overridable file by file from `template_dir`."""
    loaders: list[jinja2.BaseLoader] = []
    if template_dir is not None:
        loaders.append(jinja2.FileSystemLoader(str(template_dir)))
    loaders.append(jinja2.PackageLoader("mutharness", "reports/templates"))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # the output is Markdown; every spec-derived value goes through a filter
    )
    env.filters.update(
        md=escape_markdown, cell=table_cell, plain=plain, code=code_span, fence=fence,
        link=link_target, shell=shell_word, sha256sum=sha256sum,
        machine_free=without_absolute_paths, prefix=lambda value, lead: f"{lead}{value}",
    )
    # the re-derive command from the recorded values, with this version's defaults
    env.globals["rederive"] = rederive_flags
    return env


def _template_problem(name: str, error: Exception) -> InputProblem:
    """A clear error naming the template that cannot be compiled (and the line)."""
    where = name
    if isinstance(error, jinja2.TemplateSyntaxError):
        where = f"{name} ({error.filename or name}, line {error.lineno})"
    if isinstance(error, UnicodeDecodeError):
        return InputProblem(f"the evidence template {where} is not UTF-8 text: {error}")
    return InputProblem(
        f"the evidence template {where} is broken: {type(error).__name__}: {error}",
        remedy="fix or remove the override in --template-dir (the packaged template is used "
        "for any file it does not hold)",
    )


def _render_problem(name: str, error: Exception) -> InputProblem:
    """A clear error for a template that compiled but failed on these facts."""
    return InputProblem(
        f"rendering the evidence template {name} failed: {type(error).__name__}: {error}",
        remedy="the template reads a fact this results file does not hold: an override in "
        "--template-dir is broken, or the results file is not one this mutharness wrote",
    )


def load_templates(template_dir: Path | None = None) -> dict[str, jinja2.Template]:
    """Every template, compiled: a broken override fails here, before anything runs."""
    env = environment(template_dir)
    templates: dict[str, jinja2.Template] = {}
    for name in TEMPLATES:
        try:
            templates[name] = env.get_template(name)
        except (jinja2.TemplateError, UnicodeDecodeError, OSError) as error:
            raise _template_problem(name, error) from None
    return templates


def results_problem(run: RunResult) -> str | None:
    """Why `run` cannot be rendered as evidence (None when it can)."""
    if not run.complete:
        return "its run did not complete (interrupted, stopped by an error, or still running)"
    if run.shard is not None:
        return (f"it holds shard {run.shard.shard}'s results, part of a run: merge the shards "
                "first (mutharness merge)")
    names: dict[str, str] = {INDEX: "the index"}
    for spec in run.specs:
        spec_id = spec.spec.id
        if not spec_id or spec_id in (".", "..") or any(char in spec_id for char in "/\\\0"):
            return f"a spec id {spec_id!r} is not a plain file name"
        key = f"{spec_id}.md".lower()  # case-insensitive file systems make these one file
        if key in names:
            return f"spec {spec_id!r} would be written to the same file as {names[key]}"
        names[key] = f"spec {spec_id!r}"
    return None


def spec_facts(run: RunResult, spec_id: str) -> str:
    """The facts one spec's document is rendered from, as JSON without timings, notes,
    absolute paths or HEAD (byte-stable; its `commit` is the spec's commit measured): what
    `evidence-check` reads."""
    specs = tuple(s for s in run.specs if s.spec.id == spec_id)
    measured = next((s.source_commit for s in specs if s.source_commit), run.commit)
    # HEAD moves with the commit of the evidence itself: the facts name the commit measured
    only = replace(run, commit=measured, specs=specs)
    facts = to_json(only, timings=False)
    del facts["notes"]  # how the run went (a runner's fall-back) differs by machine, no verdict
    del facts["texts"]  # the targets' texts: their digests are in depends_on
    for spec in facts["specs"]:
        del spec["sources"]
    facts["tool"] = {  # where it ran (a CI or a laptop), where the interpreters live and the
        key: value for key, value in facts["tool"].items()  # name they were invoked by
        if key != "ci" and not key.endswith("_executable")  # decide no verdict
    }
    return json.dumps(_machine_free(facts), indent=1, ensure_ascii=False,
                      sort_keys=True) + "\n"


def _machine_free(value: Any) -> Any:
    """A JSON value with every absolute path in its strings cut (keys are repo paths)."""
    if isinstance(value, str):
        return without_absolute_paths(value)
    if isinstance(value, dict):
        return {key: _machine_free(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_machine_free(item) for item in value]
    return value


def _tidy(text: str) -> str:
    """Collapse runs of blank lines and end with exactly one newline; a control character
    that reached a code span or a fence (a NUL, an ESC in a reason) shown as its escape."""
    return visible(re.sub(r"\n{3,}", "\n\n", text).strip("\n"), keep="\n\t") + "\n"


def render_documents(
    run: RunResult | Mapping[str, Any], existing: tuple[str, ...] = (),
    template_dir: Path | None = None,
) -> dict[str, str]:
    """File name -> content: Markdown for every spec in the results and the index, and each
    spec's facts beside its document. A results document is read with `from_json` first."""
    if not isinstance(run, RunResult):
        run = from_json(run)
    problem = results_problem(run)
    if problem is not None:
        raise InputProblem(f"not a mutharness results document: {problem}")
    templates = load_templates(template_dir)
    document: Mapping[str, Any] = to_json(run, timings=False)
    ids = {spec["id"] for spec in document["specs"]}
    others = sorted(name for name in existing if name not in ids)
    documents: dict[str, str] = {}
    name = TEMPLATES[0]
    try:
        for spec in document["specs"]:
            documents[f"{spec['id']}.md"] = _tidy(
                templates[name].render(run=document, spec=spec)
            )
            documents[f"{spec['id']}{FACTS_SUFFIX}"] = spec_facts(run, spec["id"])
        name = TEMPLATES[1]
        documents[INDEX] = _tidy(templates[name].render(run=document, others=others))
    except (jinja2.TemplateError, TypeError, ValueError, KeyError, AttributeError) as error:
        raise _render_problem(name, error) from None
    return documents


def _recorded(out_dir: Path, spec_id: str) -> RunResult | None:
    """The facts file already in `out_dir` for a spec (None when there is none readable)."""
    path = out_dir / f"{spec_id}{FACTS_SUFFIX}"
    try:
        return from_json(json.loads(path.read_text(encoding="utf-8")), path.name)
    except (OSError, ValueError, ResultsError):
        return None


def _kept_red_first(run: RunResult, out_dir: Path) -> RunResult:
    """`run` with each spec's red-first record from the documents it replaces: a verify
    re-renders a spec's verdicts, never drops the red-first proof recorded beside them."""
    specs = []
    for spec in run.specs:
        if spec.red_first is None and (old := _recorded(out_dir, spec.spec.id)) is not None:
            kept = [s.red_first for s in old.specs if s.spec.id == spec.spec.id and s.red_first]
            if kept:
                spec = replace(spec, red_first=kept[0])
        specs.append(spec)
    return replace(run, specs=tuple(specs))


def _write(out_dir: Path, documents: Mapping[str, str]) -> tuple[Path, ...]:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        for name, text in documents.items():
            path = out_dir / name
            write_atomic(path, text)
            written.append(path)
    except OSError as error:
        raise EnvironmentProblem(
            f"cannot write evidence into {out_dir}: {error.strerror or error}"
        ) from None
    return tuple(written)


def evidence_documents(
    run: RunResult | Mapping[str, Any], out_dir: Path, template_dir: Path | None = None
) -> dict[str, str]:
    """File name -> content of the evidence `write_evidence` would write into `out_dir`
    (each spec's red-first record already there kept); nothing is written."""
    existing = tuple(
        sorted(path.stem for path in out_dir.glob("*.md") if path.name != INDEX)
    ) if out_dir.is_dir() else ()
    if not isinstance(run, RunResult):
        run = from_json(run)
    if out_dir.is_dir():
        run = _kept_red_first(run, out_dir)
    return render_documents(run, existing, template_dir)


def write_documents(out_dir: Path, documents: Mapping[str, str]) -> tuple[Path, ...]:
    """Write documents `evidence_documents` rendered into `out_dir`, atomically each."""
    return _write(out_dir, documents)


def write_evidence(
    run: RunResult | Mapping[str, Any], out_dir: Path, template_dir: Path | None = None
) -> tuple[Path, ...]:
    """Render, then atomically write `<spec-id>.md` and `<spec-id>.json` per spec and
    `index.md` into `out_dir` (keeping each spec's red-first record already there).

    Everything is rendered before the first write, so a template error writes nothing.
    """
    return _write(out_dir, evidence_documents(run, out_dir, template_dir))


def add_red_first(
    out_dir: Path, spec_ids: Sequence[str], record: RedFirst, template_dir: Path | None = None,
) -> tuple[Path, ...]:
    """Record a red-first proof in each spec's facts file and re-render its document from
    them alone (the index is left as it is)."""
    documents: dict[str, str] = {}
    for spec_id in spec_ids:
        run = _recorded(out_dir, spec_id)
        if run is None:
            raise InputProblem(
                f"{out_dir / (spec_id + FACTS_SUFFIX)} is missing or unreadable: there is no "
                f"evidence document of spec {spec_id} to add the red-first section to",
                remedy=f"render it first: mutharness verify <spec> --evidence {out_dir}",
            )
        run = replace(run, specs=tuple(
            replace(spec, red_first=record) if spec.spec.id == spec_id else spec
            for spec in run.specs
        ))
        rendered = render_documents(run, (), template_dir)
        documents |= {name: text for name, text in rendered.items() if name != INDEX}
    return _write(out_dir, documents)

"""A run's mutation report as one self-contained HTML page: the mutation-testing-elements web
component (a pinned, checksummed copy shipped with mutharness) inlined, the report as data.

Inlined rather than loaded from a CDN: the page works offline, as a CI artifact and from a
mail, and shows what mutharness shipped, at the cost of about 230 KB per page.
"""

from __future__ import annotations

import hashlib
import json
from html import escape
from importlib import resources

from mutharness.errors import ElementsDamaged, ExitCode
from mutharness.model.results import MutationResult, RunResult
from mutharness.reports.outcome import Outcome, described
from mutharness.reports.stryker import THRESHOLDS, mutant_id, stryker_report, viewer_score

ELEMENTS_VERSION = "3.8.4"  # npm mutation-testing-elements; its schema is the pinned one
ELEMENTS_FILE = f"mutation-test-elements-{ELEMENTS_VERSION}.js"
ELEMENTS_SHA256 = "15ca2bd252303728405349e0df835ad20f1b2d2c11f5a076213e51931d777736"


def elements_script() -> str:
    """The web component's code, checked against its pinned digest."""
    data = resources.files("mutharness").joinpath("reports", "vendor", ELEMENTS_FILE).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != ELEMENTS_SHA256:
        raise ElementsDamaged(ELEMENTS_FILE, digest, ELEMENTS_SHA256)
    return data.decode("utf-8")


def _script_data(value: object) -> str:
    """JSON that cannot end or open a script element: every `<` escaped."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


GATE_STYLE = (
    "#mutharness-gate{font-family:system-ui,sans-serif;margin:0;padding:1em 1.5em}"
    "#mutharness-gate.gate-green{background:#e6f4ea;color:#0d652d}"
    "#mutharness-gate.gate-red{background:#fce8e6;color:#a50e0e}"
    "#mutharness-gate h1{font-size:1.3em;margin:0 0 .4em}"
    "#mutharness-gate li{margin:.15em 0}#mutharness-gate .documented{color:#555}"
    ".uncoloured{filter:grayscale(1)}"
)


def _gate(run: RunResult, score: float | None) -> str:
    """The gate before the viewer: the run's exit code and what it means (green only when
    every mutation behaved as its spec expects), then the mutations with no trustworthy
    verdict, those that did not behave as expected, and the documented survivors, marked."""
    code = run.exit_code()
    colour = "gate-green" if code is ExitCode.OK else "gate-red"
    rows: list[tuple[int, str, str, MutationResult]] = []
    for spec in run.specs:
        for result in spec.mutations:
            outcome = Outcome.of(result)
            rank = {Outcome.NO_VERDICT: 0, Outcome.UNEXPECTED: 1}.get(outcome, 2)
            if outcome is Outcome.AS_EXPECTED and result.mutation.expect_caught:
                continue  # caught as expected: nothing for the gate to say
            rows.append((rank, mutant_id(spec, result), described(result), result))
    documented = ' class="documented"'
    items = "".join(
        f"<li{documented if rank == 2 else ''}><code>{escape(mutant)}</code> "
        f"{escape(result.mutation.name)}: {escape(said)}</li>"
        for rank, mutant, said, result in sorted(rows, key=lambda row: (row[0], row[1])))
    errors = "".join(f"<p>{escape(spec.spec.id)}: {escape(spec.error)}</p>"
                     for spec in run.specs if spec.error)
    if viewer_misleads(code, score):
        scored = "no mutation" if score is None else f"{score:.0f} %"
        errors += ("<p>The viewer below is shown without its colours: its score counts only "
                   f"the mutations with a verdict that can be caught ({scored}), not the "
                   "gate's rule.</p>")
    return (f'<section id="mutharness-gate" class="{colour}">'
            f"<h1>mutharness: exit {int(code)}: {escape(code.summary)}</h1>{errors}"
            + (f"<ul>{items}</ul>" if items else "") + "</section>\n")


def viewer_misleads(code: ExitCode, score: float | None) -> bool:
    """Whether the viewer's colours would contradict the gate: its score green (or none) for
    a run whose exit code is not 0."""
    return code is not ExitCode.OK and (score is None or score >= THRESHOLDS["high"])


def html_report(run: RunResult) -> str:
    """The page: the gate, the component, then the report handed to it."""
    title = f"mutharness {run.commit[:12]}" if run.commit else "mutharness"
    report = stryker_report(run)
    score = viewer_score(report)
    uncoloured = ' class="uncoloured"' if viewer_misleads(run.exit_code(), score) else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{escape(title)} mutation report</title>\n<style>{GATE_STYLE}</style>\n"
        f"<script>{elements_script()}</script>\n</head>\n<body>\n{_gate(run, score)}"
        f"<mutation-test-report-app{uncoloured} title-postfix=\"{escape(title)}\">"
        "</mutation-test-report-app>\n"
        "<script>document.querySelector(\"mutation-test-report-app\").report = "
        f"{_script_data(report)};</script>\n</body>\n</html>\n"
    )

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

from mutharness.errors import ElementsDamaged
from mutharness.model.results import RunResult
from mutharness.reports.stryker import stryker_report

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


def html_report(run: RunResult) -> str:
    """The page: the component, then the report handed to it."""
    title = f"mutharness {run.commit[:12]}" if run.commit else "mutharness"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{escape(title)} mutation report</title>\n"
        f"<script>{elements_script()}</script>\n</head>\n<body>\n"
        f"<mutation-test-report-app title-postfix=\"{escape(title)}\">"
        "</mutation-test-report-app>\n"
        "<script>document.querySelector(\"mutation-test-report-app\").report = "
        f"{_script_data(stryker_report(run))};</script>\n</body>\n</html>\n"
    )

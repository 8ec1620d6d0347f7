"""JUnit XML of a run: one test case per mutation, as GitLab's and GitHub's test views read it.

A test suite per spec; each case's `classname` is the spec id (GitLab's "suite" column) and
its `name` the mutation's number and name (GitLab keeps only the first of two cases with the
same names, and a spec may give two mutations one name), with `file` and `line` where the
mutation lands. A mutation that did not behave as its spec expects is a `failure`; a run
that proves nothing (UNTRUSTWORTHY, TIMEOUT) and a spec without verdicts are `error`s; a
mutation a stopped run never reached is `skipped`. Spec text of any kind stays valid XML.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from mutharness.model.results import MutationResult, RunResult, SpecResult
from mutharness.reports.outcome import Outcome, described

# characters XML 1.0 cannot hold at all, escaped or not; written as \xNN or \uNNNN
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100
                        else f"\\u{ord(m[0]):04x}", value)


def _case(suite: ET.Element, spec: SpecResult, name: str, file: str, line: int | None,
          seconds: float) -> ET.Element:
    """A test case; `line` None where none is known (a mutation never spliced)."""
    return ET.SubElement(suite, "testcase", {
        "classname": _text(spec.spec.id), "name": _text(name), "file": _text(file),
        **({"line": str(line)} if line is not None else {}), "time": f"{seconds:.3f}",
    })


def _child(case: ET.Element, kind: str, message: str, body: str = "") -> None:
    element = ET.SubElement(case, kind, {"message": _text(message)})
    element.text = _text(body or message)


def _mutation(suite: ET.Element, spec: SpecResult, result: MutationResult) -> str | None:
    """The case of one mutation; the kind of its child (None: it passed)."""
    mutation = result.mutation
    case = _case(suite, spec, f"#{mutation.number} {mutation.name}", mutation.file,
                 result.line, result.facts.duration_s)
    outcome = Outcome.of(result)
    failing = "\n".join(result.facts.failing_ids)
    if outcome is Outcome.AS_EXPECTED:
        out = ET.SubElement(case, "system-out")
        out.text = _text(described(result) + (f":\n{failing}" if failing else ""))
        return None
    kind = "failure" if outcome is Outcome.UNEXPECTED else "error"
    _child(case, kind, described(result),
           described(result) + (f"\nfailing tests:\n{failing}" if failing else ""))
    return kind


def _suite(root: ET.Element, run: RunResult, spec: SpecResult) -> None:
    suite = ET.SubElement(root, "testsuite", {"name": _text(spec.spec.id),
                                              "file": _text(spec.spec.path)})
    kinds = [_mutation(suite, spec, result) for result in spec.mutations]
    if spec.refused:  # no verdicts at all: the baseline refused
        case = _case(suite, spec, "baseline", spec.spec.path, 1,
                     spec.baseline.duration_s if spec.baseline is not None else 0.0)
        _child(case, "error", spec.error.splitlines()[0], spec.error)
        kinds.append("error")
    done = {result.mutation.index for result in spec.mutations}
    why = spec.stopped or spec.error
    for mutation in run.planned(spec):  # a shard's run: only the shard's mutations
        if why and mutation.index not in done:
            case = _case(suite, spec, f"#{mutation.number} {mutation.name}", mutation.file,
                         None, 0.0)
            _child(case, "skipped", f"not run: {why.splitlines()[0]}")
            kinds.append("skipped")
    _count(suite, len(kinds), kinds)


def _count(element: ET.Element, tests: int, kinds: list[str | None]) -> None:
    element.set("tests", str(tests))
    element.set("failures", str(kinds.count("failure")))
    element.set("errors", str(kinds.count("error")))
    element.set("skipped", str(kinds.count("skipped")))


def junit_xml(run: RunResult) -> str:
    """The run as a JUnit XML document."""
    root = ET.Element("testsuites", {"name": "mutharness"})
    for spec in run.specs:
        _suite(root, run, spec)
    if run.error is not None or run.interrupted is not None:
        suite = ET.SubElement(root, "testsuite", {"name": "mutharness"})
        case = ET.SubElement(suite, "testcase", {"classname": "mutharness", "name": "run"})
        message = (run.error.message() if run.error is not None
                   else f"interrupted by signal {run.interrupted}: no verdict")
        _child(case, "error", message.splitlines()[0] if message else "the run failed", message)
        _count(suite, 1, ["error"])
    suites = root.findall("testsuite")
    totals = {key: sum(int(s.get(key, "0")) for s in suites)
              for key in ("tests", "failures", "errors", "skipped")}
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"

"""JUnit XML, the results format CI systems read: ``sm5 conform --junit`` and the names of the
test cases in pytest's own ``--junitxml``.

A test case per vector: ``classname`` is the instruction and category (``<instruction>.boundary``),
``name`` the vector id. ``fail`` and ``xpass`` are ``<failure>`` (the reason as the message, the
per-component diff as the text), ``crash`` and ``timeout`` are ``<error>`` of that type, ``xfail``,
``unsupported``, ``not-applicable`` and ``skip`` are ``<skipped>`` with their reason, ``pass`` is
an empty test case. The document has no timings or timestamps: same verdicts, same bytes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

from sm5.conformance.compare import Verdict
from sm5.conformance.run import RunReport
from sm5.oracle.files.atomic import atomic_write_text

#: How each verdict is written: the child element, or None for none (a pass).
ELEMENT: dict[str, str | None] = {
    "pass": None, "fail": "failure", "xpass": "failure", "crash": "error", "timeout": "error",
    "xfail": "skipped", "unsupported": "skipped", "not-applicable": "skipped", "skip": "skipped",
}
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def case_class(vector_id: str) -> str:
    """The JUnit classname of a vector: its id without the last part, dotted
    (``<instruction>/boundary/0037`` -> ``<instruction>.boundary``)."""
    head, _, _ = vector_id.rpartition("/")
    return (head or vector_id).replace("/", ".")


def xml_text(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot hold (a child's stderr may have some) shown
    as ``\\xNN``."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def junit_case_names(config: Any, report: Any) -> None:
    """Give pytest's JUnit test case of a vector its classname and name (the plugin calls this
    before pytest's JUnit writer sees the report). Without ``--junitxml``, nothing."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pytest moved it: the default names stay, nothing breaks
        return
    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    reporter = xml.node_reporter(report)
    reporter.add_attribute("classname", case_class(report.nodeid))
    reporter.add_attribute("name", report.nodeid)


def testcase(vector_id: str, verdict: Verdict) -> ET.Element:
    case = ET.Element("testcase", {"classname": case_class(vector_id), "name": vector_id})
    tag = ELEMENT.get(verdict.status, "failure")
    if tag is not None:
        reason = f"{verdict.status}: {verdict.reason}" if verdict.reason else verdict.status
        child = ET.SubElement(case, tag, {"type": verdict.status, "message": xml_text(reason)})
        if verdict.diffs:
            child.text = xml_text("\n".join(verdict.diffs))
    return case


def junit_xml(report: RunReport) -> str:
    """The JUnit XML document of a run, test cases in run order."""
    kinds = Counter(ELEMENT.get(v.status, "failure") for v in report.verdicts.values())
    counts = {"tests": str(len(report.verdicts)), "failures": str(kinds["failure"]),
              "errors": str(kinds["error"]), "skipped": str(kinds["skipped"])}
    name = f"sm5 conform {report.impl}" + (f" shard {report.shard}" if report.shard else "")
    suites = ET.Element("testsuites", {"name": "sm5", **counts})
    suite = ET.SubElement(suites, "testsuite", {"name": xml_text(name), **counts})
    for vector_id, verdict in report.verdicts.items():
        suite.append(testcase(vector_id, verdict))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, "unicode") + "\n"


def write_junit(path: Path, report: RunReport) -> None:
    atomic_write_text(path, junit_xml(report))

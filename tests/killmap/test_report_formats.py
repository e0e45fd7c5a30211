"""Every format is a view of one document: the same verdicts and the same red sets.

And the Markdown report, meant for a pull-request comment, stays under GitHub's 65,536
character limit however large the catalog, folding details and pointing at the artifact.
"""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from test_html_browser import fixture_document

from killmap.report.document import MARKDOWN_LIMIT, to_html, to_junit, to_markdown, to_stryker


class _Matrix(HTMLParser):
    """Per tbody of the kill matrix: its verdict, and the tests of its red cells."""

    def __init__(self):
        super().__init__()
        self.rows: dict[str, dict] = {}
        self.current: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tbody":
            self.current = attrs["data-name"]
            self.rows[self.current] = {"verdict": attrs["data-verdict"], "red": set()}
        elif tag == "td" and self.current and "red" in (attrs.get("class") or "").split():
            self.rows[self.current]["red"].add(attrs["title"].split(": ")[0])

    def handle_endtag(self, tag):
        if tag == "tbody":
            self.current = None


def test_every_format_shows_the_same_verdicts_and_red_sets():
    doc = fixture_document()
    want = {m["name"]: (m["verdict"], {r["id"] for r in m["red"]}) for m in doc["mutations"]}
    assert any(red for _, red in want.values()) and len({v for v, _ in want.values()}) >= 10

    again = json.loads(json.dumps(doc))
    assert {m["name"]: (m["verdict"], {r["id"] for r in m["red"]}) for m in again["mutations"]} == want

    suite = ET.fromstring(to_junit(doc))
    junit = {}
    for case in suite.iter("testcase"):
        failure = case.find("failure")
        text = failure.text if failure is not None else case.find("system-out").text
        junit[case.get("name")] = (
            failure.get("type") if failure is not None else "held",
            set(re.findall(r"^red: (\S+) \[", text, re.M)),
        )
    assert junit == want

    page = _Matrix()
    page.feed(to_html(doc))
    assert {n: (r["verdict"], r["red"]) for n, r in page.rows.items()} == want

    stryker = to_stryker(doc)
    mutants = [m for f in stryker["files"].values() for m in f["mutants"]]
    assert {m["id"]: (m["killmapVerdict"], set(m["killedBy"])) for m in mutants} == want

    markdown = to_markdown(doc)
    rows = dict(re.findall(r"^\| `([^`]+)` \| \S+ ([a-z-]+) \|", markdown, re.M))
    assert rows == {n: v for n, (v, _) in want.items()}
    counts = dict(re.findall(r"^\| `([^`]+)` \| [^|]+\| (\d+) / \d+ \|", markdown, re.M))
    assert all(int(counts[n]) == len(red) for n, (_, red) in want.items() if n in counts)
    sections = re.findall(r"^### `([^`]+)`: ([a-z-]+)\n.*?^\*\*Red:\*\* (.*?)$", markdown, re.M | re.S)
    shown = {n: (v, set(re.findall(r"`([^`]+)` \(", reds))) for n, v, reds in sections}
    assert shown == {n: w for n, w in want.items() if w[0] != "held"}


def _large_document(failed: int, held: int) -> dict:
    doc = fixture_document()
    vacuous = next(m for m in doc["mutations"] if m["verdict"] == "vacuous")
    kept = next(m for m in doc["mutations"] if m["verdict"] == "held")
    big_diff = "--- a/src/x.py\n+++ b/src/x.py\n" + "".join(f"-line {i}\n+LINE {i}\n" for i in range(400))
    mutations = []
    for i in range(failed):
        entry = copy.deepcopy(vacuous if i % 3 else doc["mutations"][2])  # vacuous and overreach
        entry.update(name=f"failing-mutation-{i:04d}", diff=big_diff if i % 7 == 0 else entry["diff"])
        mutations.append(entry)
    for i in range(held):
        mutations.append({**copy.deepcopy(kept), "name": f"held-mutation-{i:04d}"})
    doc["mutations"] = mutations
    return doc


def test_markdown_stays_under_githubs_comment_limit_for_a_large_catalog():
    doc = _large_document(failed=1500, held=3000)
    text = to_markdown(doc)
    assert len(text.encode("utf-8")) <= MARKDOWN_LIMIT
    assert text.startswith("## killmap: 3000/4500 contracts held\n")
    assert "**1500 failed:** 1000 vacuous, 500 overreach." in text
    # Worst first, every detail folded, and what did not fit counted with a pointer.
    rows = re.findall(r"^\| `([^`]+)` \| ❌ ([a-z-]+) \|", text, re.M)
    assert rows and [v for _, v in rows] == sorted((v for _, v in rows), key=["vacuous", "overreach"].index)
    assert "### " not in text and "<details><summary><code>failing-mutation-0001</code>: vacuous</summary>" in text
    assert text.count("<details>") == text.count("</details>")
    found = re.search(
        r"\*\*Not shown here\*\* \(GitHub's 65,536-character limit\): (\d+) more failed "
        r"contracts; the details of (\d+) shown above; the names of the 3000 held\. "
        r"Every contract, with its red tests and diff, is in `killmap.html` and `killmap.json` "
        r"in the reports artifact\.",
        text,
    )
    assert found, text[-800:]
    assert int(found.group(1)) == 1500 - len(rows)
    details = text.count("<details><summary><code>")
    assert int(found.group(2)) == len(rows) - details and details > 10
    assert "… (diff cut here: the whole diff is in killmap.json)" in text


def test_a_small_catalog_is_not_folded():
    text = to_markdown(fixture_document())
    assert "### `predicate-negated`: overreach" in text and "Not shown here" not in text
    assert len(text.encode("utf-8")) < MARKDOWN_LIMIT

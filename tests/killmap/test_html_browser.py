"""The HTML kill matrix, checked in a real browser (headless Chromium).

A fixture report (a real run of the verdicts project, plus one red in fixture setup so all
four causes appear) is rendered; a copy of the page gets a small script appended that
reads computed styles, applies a verdict filter, clicks a row and sorts, and writes what
it saw into the DOM. Chromium dumps that DOM and the test asserts on it.

Skipped when Chromium is absent, unless KILLMAP_REQUIRE_BROWSER=1 (CI sets it): then a
missing browser fails instead.
"""

from __future__ import annotations

import copy
import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from killmap.report.html_report import to_html

FIXTURE_REPORT = Path(__file__).resolve().parent.parent / "fixtures" / "reports" / "verdicts.json"

PROBE = """
<script>
(function () {
  var result = {causes: {}};
  ['assertion', 'crash', 'broken', 'error'].forEach(function (cause) {
    var cells = document.querySelectorAll('td.cell.red.cause-' + cause);
    result.causes[cause] = {count: cells.length,
                            color: cells.length ? getComputedStyle(cells[0]).backgroundColor : null};
  });
  var expected = document.querySelector('td.cell.expected');
  result.expectedOutline = getComputedStyle(expected).outlineStyle + ' ' + getComputedStyle(expected).outlineWidth;
  var plain = document.querySelector('td.cell.unexpected');
  result.unexpectedOutline = getComputedStyle(plain).outlineStyle;
  function visible() {
    return Array.prototype.filter.call(document.querySelectorAll('#matrix > tbody'), function (body) {
      return getComputedStyle(body).display !== 'none';
    }).map(function (body) { return body.getAttribute('data-name'); });
  }
  result.visibleBefore = visible();
  var filter = document.getElementById('verdict-filter');
  filter.value = 'broken';
  filter.dispatchEvent(new Event('change'));
  result.visibleAfterFilter = visible();
  result.shown = document.getElementById('shown').textContent;
  var row = document.querySelector('#unbound-local tr.row');
  var details = row.nextElementSibling;
  result.detailsBeforeClick = getComputedStyle(details).display;
  row.querySelector('td.name').click();
  result.detailsAfterClick = getComputedStyle(details).display;
  result.detailsDiff = details.querySelector('pre').textContent.split('\\n')[0];
  filter.value = '';
  filter.dispatchEvent(new Event('change'));
  document.getElementById('sort-name').click();
  result.byName = visible();
  document.getElementById('sort-verdict').click();
  result.byVerdict = visible();
  var out = document.createElement('pre');
  out.id = 'probe-result';
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
})();
</script>
"""


def fixture_document() -> dict:
    doc = json.loads(FIXTURE_REPORT.read_text())
    # No fixture mutation goes red in fixture setup; one made-up entry adds the fourth cause.
    template = next(m for m in doc["mutations"] if m["name"] == "lookup-table-emptied")
    extra = copy.deepcopy(template)
    extra.update(name="setup-red", verdict="wrong-cause", detail="went red in setup: tests/test_logic.py::test_lookup")
    extra["red"] = [{**template["red"][0], "cause": "error", "phase": "setup", "exception": "RuntimeError"}]
    doc["mutations"].append(extra)
    return doc


def _chromium() -> str | None:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("KILLMAP_REQUIRE_BROWSER") == "1":
            pytest.fail("KILLMAP_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install chromium)")
        pytest.skip("no chromium on PATH; set KILLMAP_REQUIRE_BROWSER=1 to fail instead")
    return found


def test_the_kill_matrix_in_headless_chromium(tmp_path):
    browser = _chromium()
    doc = fixture_document()
    page = to_html(doc)
    assert "http:" not in page and "https:" not in page and " src=" not in page  # nothing to fetch
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-extensions",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    found = re.search(r'<pre id="probe-result">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    seen = json.loads(html.unescape(found.group(1)))

    # Cells exist with the right classes, and the stylesheet really colours them.
    assert {c: v["count"] for c, v in seen["causes"].items()} == {"assertion": 11, "crash": 3, "broken": 1, "error": 1}
    colors = {c: v["color"] for c, v in seen["causes"].items()}
    assert colors == {
        "assertion": "rgb(198, 40, 40)",
        "crash": "rgb(239, 108, 0)",
        "broken": "rgb(106, 27, 154)",
        "error": "rgb(69, 90, 100)",
    }
    assert seen["expectedOutline"] == "solid 3px" and seen["unexpectedOutline"] == "none"
    # The row of predicate-negated, in the dumped DOM: its kill outlined, the overreach not.
    row = re.search(r'<tbody id="predicate-negated".*?</tr>', dom, re.S).group(0)
    assert 'class="cell red cause-assertion expected" title="tests/test_logic.py::test_is_positive_accepts_one' in row
    assert 'class="cell red cause-crash unexpected" title="tests/test_logic.py::test_label_positive' in row
    assert 'class="cell red cause-assertion unexpected" title="tests/test_logic.py::test_label_refuses' in row
    missing = re.search(r'<tbody id="predicate-constant-true".*?</tr>', dom, re.S).group(0)
    assert 'class="cell green expected missing" title="tests/test_logic.py::test_is_positive_accepts_one' in missing

    # The verdict filter hid every row but the broken ones.
    names = [m["name"] for m in doc["mutations"]]
    assert seen["visibleBefore"] == names
    broken = [m["name"] for m in doc["mutations"] if m["verdict"] == "broken"]
    assert seen["visibleAfterFilter"] == broken and len(broken) == 5
    assert seen["shown"] == f"5 of {len(names)} shown"
    # A click opened the row's details with its diff; sorting reorders the rows.
    assert (seen["detailsBeforeClick"], seen["detailsAfterClick"]) == ("none", "table-row")
    assert seen["detailsDiff"] == "--- a/src/vpkg/logic.py"
    assert seen["byName"] == sorted(names)
    assert seen["byVerdict"][:3] == ["greet-space-dropped", "predicate-constant-true", "predicate-negated"]
    assert seen["byVerdict"][-1] == "spin-guard-negated" and len(seen["byVerdict"]) == len(names)

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


def _probed(browser: str, page: str, probe_script: str, tmp_path: Path) -> tuple[str, dict]:
    """The page with the probe appended, loaded in a 1280x900 window: the DOM Chromium dumps,
    and what the probe wrote into it."""
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", probe_script + "</body>"), encoding="utf-8")
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
            "--window-size=1280,900",
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
    return dom, json.loads(html.unescape(found.group(1)))


def test_the_kill_matrix_in_headless_chromium(tmp_path):
    browser = _chromium()
    doc = fixture_document()
    page = to_html(doc)
    assert "http:" not in page and "https:" not in page and " src=" not in page  # nothing to fetch
    dom, seen = _probed(browser, page, PROBE, tmp_path)

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


READABLE = """
<script>
(function () {
  var result = {};
  var row = document.querySelector('#predicate-negated tr.row');
  var red = row.querySelector('td.cell.red');
  result.before = [getComputedStyle(red).backgroundColor, getComputedStyle(red).color, red.textContent];
  row.querySelector('td.name').click();
  result.open = row.classList.contains('open');
  result.after = [getComputedStyle(red).backgroundColor, getComputedStyle(red).color, red.textContent];
  // Hover cannot be made in a headless page: every rule that applies on hover, or to an open
  // row, is checked against the row's red cells instead.
  result.recolouring = [];
  Array.prototype.forEach.call(document.styleSheets, function (sheet) {
    Array.prototype.forEach.call(sheet.cssRules, function (rule) {
      if (!rule.selectorText || !/:hover|\\.open/.test(rule.selectorText)) { return; }
      var plain = rule.selectorText.replace(/:hover/g, '');
      var colours = rule.style.backgroundColor || rule.style.background || rule.style.color;
      row.querySelectorAll('td.cell.red').forEach(function (cell) {
        if (colours && cell.matches(plain)) { result.recolouring.push(rule.selectorText); }
      });
    });
  });
  var grid = document.querySelector('.grid');
  result.page = [document.documentElement.scrollWidth, window.innerWidth];
  result.grid = [grid.scrollWidth, grid.clientWidth];
  result.headings = Array.prototype.map.call(document.querySelectorAll('th.test'), function (th) {
    return [th.getAttribute('title'), th.textContent];
  });
  result.legend = document.querySelector('.legend').textContent;
  var out = document.createElement('pre');
  out.id = 'probe-result';
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
})();
</script>
"""


def wide_document() -> dict:
    """The fixture report with forty parametrizations of one long-named test gone red: a
    matrix wider than the window, whose columns differ only at the end of their ids."""
    doc = fixture_document()
    wide = next(m for m in doc["mutations"] if m["name"] == "predicate-negated")
    template = wide["red"][0]
    for n in range(40):
        test = f"tests/test_logic.py::test_predicate_negatives_are_refused_everywhere[case-{n}]"
        wide["red"].append({**template, "id": test})
        wide["selected"] = [*wide.get("selected", []), test]
    return doc


def test_the_matrix_stays_readable_after_a_click_names_every_mark_and_fits_the_window(tmp_path):
    browser = _chromium()
    _, seen = _probed(browser, to_html(wide_document()), READABLE, tmp_path)

    # The clicked row keeps its red cell's colour and white letter, and no rule recolours it.
    assert seen["open"] is True
    assert seen["before"] == seen["after"] == ["rgb(198, 40, 40)", "rgb(255, 255, 255)", "A"]
    assert seen["recolouring"] == []
    # The page fits the 1280 px window; the grid scrolls inside it.
    page_width, window = seen["page"]
    assert window == 1280 and page_width <= window
    grid_scroll, grid_client = seen["grid"]
    assert grid_scroll > grid_client
    # Each column's full id is its title; the forty sibling headings can be told apart.
    titles = [title for title, _ in seen["headings"]]
    shown = [text for title, text in seen["headings"] if "are_refused_everywhere" in title]
    assert len(shown) == 40 and len(set(shown)) == 40
    assert all(text.endswith(f"[case-{n}]") or "[case-" in text for n, text in enumerate(shown))
    assert "tests/test_logic.py::test_predicate_negatives_are_refused_everywhere[case-7]" in titles
    # The legend names every mark, in words.
    legend = seen["legend"]
    for words in ("an assertion failed", "ran and stayed green", "not run under this mutation", "○", "may_kill"):
        assert words in legend, words
    assert "red: search" not in legend and "Hypothesis's search failed" in legend

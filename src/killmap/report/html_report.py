"""killmap.html: one self-contained page (no network) with the kill matrix.

Mutations are rows, tests are columns: only the tests that some mutation turned red or
expected to. A red cell is coloured by its cause (assertion, crash, broken, error); an
expected cell is outlined, so a missing kill (outlined, empty) and an overreach (coloured,
not outlined) are seen at a glance; the legend names every mark. The verdicts can be
filtered and sorted, and a click on a row opens its details and diff, the row keeping its
cells' colours. The grid scrolls inside the window, never the page. Rendered from the JSON document only, like every
other format (report.py).
"""

from __future__ import annotations

import html
import json
from typing import Any

from killmap.catalog.testids import matches
from killmap.report.annotations import SEVERITY
from killmap.report.cells import raised_where, red_vs_expected  # the one rendering every format shares

CAUSES = ("assertion", "crash", "broken", "error", "search", "timeout")
# The order "sort by verdict" uses, worst first: the annotations' severity, then held.
VERDICT_ORDER = (*SEVERITY, "held")


def matrix(doc: dict[str, Any]) -> tuple[list[str], dict[tuple[str, str], dict[str, Any]]]:
    """The columns (test ids), and per (mutation, test) what happened there.

    A `kills` entry may be a prefix (a file, a class, a parametrization): it is expanded to
    the tests the mutation ran that it names, or kept as written when nothing ran.
    """
    columns: set[str] = set()
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for m in doc["mutations"]:
        ran = list(m.get("selected") or [])
        red = {r["id"]: r for r in m["red"]}
        known = ran + [t for t in red if t not in ran]
        expected = set()
        for entry in m["expected"]:
            named = [t for t in known if matches(entry, t)]
            expected.update(named or [entry])
        may = {t for t in known for entry in m.get("may_kill", ()) if matches(entry, t)}
        columns.update(red)
        columns.update(expected)
        for test in set(red) | expected:
            cells[(m["name"], test)] = {
                "cause": red[test]["cause"] if test in red else None,
                "expected": test in expected,
                "may": test in may,
                "ran": test in ran or test in red,
                "red": red.get(test),
            }
    return sorted(columns), cells


def _cell(m: dict[str, Any], test: str, cell: dict[str, Any] | None, selected: frozenset[str]) -> str:
    esc = html.escape
    if cell is None:
        state = "green" if test in selected else "idle"
        return f"<td class='cell {state}' title='{esc(test)}: {'green' if state == 'green' else 'not run'}'></td>"
    classes = ["cell"]
    if cell["cause"]:
        classes += ["red", f"cause-{cell['cause']}"]
        what = f"red ({cell['cause']}"
        if cell["red"].get("exception"):
            what += f": {cell['red']['exception']}"
        what += ")"
    else:
        classes.append("green" if cell["ran"] else "idle")
        what = "green" if cell["ran"] else "not run"
    if cell["expected"]:
        classes.append("expected")
        what += ", expected red" if cell["cause"] else ", expected red: a missing kill"
        if not cell["cause"]:
            classes.append("missing")
    elif cell["may"]:
        classes.append("may")
        what += ", may go red"
    elif cell["cause"]:
        classes.append("unexpected")
        what += ", outside the contract"
    mark = cell["cause"][0].upper() if cell["cause"] else ("○" if cell["expected"] else "")
    return f"<td class='{' '.join(classes)}' title='{esc(test)}: {esc(what)}'>{mark}</td>"


def _details(m: dict[str, Any], width: int) -> str:
    esc = html.escape
    reds = "".join(
        f"<li><code>{esc(r['id'])}</code> {esc(r['cause'])} {esc(r['exception'] or '')} "
        f"at {esc(raised_where(r['raised_at'], r.get('tree_line')))}</li>"
        for r in m["red"]
    )
    where = f"{m['file']}:{min(m['lines'])}" if m.get("lines") else m["file"]
    return (
        f"<tr class='details' hidden><td colspan='{width}'>"
        f"<p><b>{esc(m['verdict'])}</b>: {esc(m['explanation'])}.</p>"
        f"<p><b>What differed:</b> {esc(m['detail'])}</p>"
        f"<p><b>Target:</b> <code>{esc(m['target'])}</code> ({esc(m['op'])}, at <code>{esc(where)}</code>)"
        f"{' &mdash; ' + esc(m['note']) if m.get('note') else ''}</p>"
        f"<p><b>Expected red:</b> {esc(', '.join(m['expected']) or 'nothing (invariant)')}"
        f"{'; may go red: ' + esc(', '.join(m['may_kill'])) if m.get('may_kill') else ''}</p>"
        + "".join(f"<p class='warning'>warning: {esc(w)}</p>" for w in m.get("warnings", ()))
        + f"<ul>{reds}</ul><pre>{esc(m['diff'])}</pre></td></tr>"
    )


STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:100%}
h1{font-size:1.4em}
.controls{margin:.8em 0;display:flex;gap:1em;align-items:center;flex-wrap:wrap}
.legend{display:flex;flex-wrap:wrap;gap:.3em 1.2em;font-size:.9em}
.legend span{display:inline-flex;align-items:center}
.legend i{display:inline-block;width:1.4em;height:1.4em;line-height:1.4em;text-align:center;font-style:normal;
  font-size:.75em;color:#fff;margin-right:.4em;border:1px solid #bbb}
.grid{max-width:100%;max-height:80vh;overflow:auto;border:1px solid #ddd}
table{border-collapse:collapse}
th,td{border:1px solid #ddd;padding:.2em .4em}
th.test{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal;font-size:.8em;white-space:nowrap}
th.file{font-weight:normal;font-size:.75em;color:#555}
td.name{white-space:nowrap;position:sticky;left:0;background:#fff;z-index:1}
tr.row{cursor:pointer}
/* Only the row's own cells light up: a matrix cell keeps its colour and letter, so the row a
   reader picked stays readable. */
tr.row:hover td:not(.cell),tr.row.open td:not(.cell){background-color:#e3ecfa}
tr.row.open td.name{font-weight:bold;box-shadow:inset 4px 0 #1565c0}
td.verdict{white-space:nowrap;font-weight:bold;color:#b00}
td.verdict.held{color:#070}
td.cell{width:1.4em;min-width:1.4em;text-align:center;font-size:.75em;color:#fff;padding:0}
td.cell.green{background:#eef7ee}
td.cell.idle{background:#fafafa}
td.cell.cause-assertion{background:#c62828}
td.cell.cause-crash{background:#ef6c00}
td.cell.cause-broken{background:#6a1b9a}
td.cell.cause-error{background:#455a64}
td.cell.cause-search{background:#00838f}
td.cell.cause-timeout{background:#5d4037}
td.cell.expected{outline:3px solid #1565c0;outline-offset:-3px}
td.cell.missing{color:#1565c0;font-size:1em}
td.cell.may{outline:2px dashed #1565c0;outline-offset:-3px}
tr.details td{background:#fbfbfb}
pre{background:#f3f3f3;padding:.8em;overflow:auto}
"""

SCRIPT = """
(function () {
  var table = document.getElementById('matrix');
  var filter = document.getElementById('verdict-filter');
  var shown = document.getElementById('shown');
  var order = %(order)s;
  function bodies() { return Array.prototype.slice.call(table.tBodies); }
  function applyFilter() {
    var wanted = filter.value, count = 0;
    bodies().forEach(function (body) {
      var verdict = body.getAttribute('data-verdict');
      var show = !wanted || (wanted === 'failed' ? verdict !== 'held' : verdict === wanted);
      body.hidden = !show;
      if (show) { count += 1; }
    });
    shown.textContent = count + ' of ' + table.tBodies.length + ' shown';
  }
  var direction = {};
  function sortBy(key) {
    direction[key] = -(direction[key] || -1);
    var sign = direction[key];
    var rank = function (body) { return order.indexOf(body.getAttribute('data-verdict')); };
    bodies().sort(function (a, b) {
      var byName = a.getAttribute('data-name') < b.getAttribute('data-name') ? -1 : 1;
      var diff = key === 'verdict' ? rank(a) - rank(b) : 0;
      return sign * (diff || byName);
    }).forEach(function (body) { table.appendChild(body); });
  }
  function toggle(row, open) {
    var details = row.nextElementSibling;
    details.hidden = open === undefined ? !details.hidden : !open;
    row.classList.toggle('open', !details.hidden);
    row.setAttribute('aria-expanded', String(!details.hidden));
  }
  table.addEventListener('click', function (event) {
    var row = event.target.closest('tr.row');
    if (row) { toggle(row); }
  });
  filter.addEventListener('change', applyFilter);
  document.getElementById('sort-name').addEventListener('click', function () { sortBy('name'); });
  document.getElementById('sort-verdict').addEventListener('click', function () { sortBy('verdict'); });
  if (location.hash.length > 1) {
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target) { toggle(target.rows[0], true); }
  }
  applyFilter();
})();
"""


def to_html(doc: dict[str, Any]) -> str:
    esc = html.escape
    mutations = doc["mutations"]
    held = sum(m["verdict"] == "held" for m in mutations)
    columns, cells = matrix(doc)
    head = _table_head(columns)
    width = 3 + len(columns)
    bodies = [_mutation_body(m, index, columns, cells, width) for index, m in enumerate(mutations)]
    present = [v for v in VERDICT_ORDER if any(m["verdict"] == v for m in mutations)]
    options = "".join(
        f"<option value='{v}'>{v} ({sum(m['verdict'] == v for m in mutations)})</option>" for v in present
    )
    failed = len(mutations) - held
    legend = _legend()
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>killmap report</title>"
        f"<style>{STYLE}</style></head><body>"
        f"<h1>killmap: {held}/{len(mutations)} contracts held</h1>"
        f"<p class='meta'>killmap {esc(str(doc.get('killmap_version', '')))}, Python "
        f"{esc(str(doc.get('python', '')))}, pytest {esc(str(doc.get('pytest', '')))}"
        f"{', shard ' + esc(str(doc['shard'])) if doc.get('shard') else ''}"
        f"{', seed ' + esc(str(doc['seed'])) if doc.get('seed') is not None else ''}; "
        f"{doc.get('wall_seconds', 0):.1f}s. Click a row for its details and diff.</p>"
        "<div class='controls'><label>verdict <select id='verdict-filter'>"
        f"<option value=''>all ({len(mutations)})</option><option value='failed'>every failed ({failed})</option>"
        f"{options}</select></label><button id='sort-name' type='button'>sort by name</button>"
        "<button id='sort-verdict' type='button'>sort by verdict</button><span id='shown'></span></div>"
        f"<p class='legend'>{legend}</p>"
        f"<div class='grid'><table id='matrix'>{head}{''.join(bodies)}</table></div>"
        f"<script>{SCRIPT % {'order': json.dumps(list(VERDICT_ORDER))}}</script></body></html>\n"
    )


def _table_head(columns: list[str]) -> str:
    """Two header rows: each test file over its run of columns, then each test's name in it."""
    esc = html.escape
    files: list[tuple[str, int]] = []
    for test in columns:
        file = test.split("::")[0]
        if files and files[-1][0] == file:
            files[-1] = (file, files[-1][1] + 1)
        else:
            files.append((file, 1))
    return (
        "<thead><tr><th rowspan='2'>mutation</th><th rowspan='2'>verdict</th>"
        "<th rowspan='2'>red / expected</th>"
        + "".join(f"<th class='file' colspan='{n}'>{esc(f)}</th>" for f, n in files)
        + "</tr><tr>"
        + "".join(
            f"<th class='test' title='{esc(t)}' data-test='{esc(t)}'>{esc(short_test_name(t))}</th>" for t in columns
        )
        + "</tr></thead>"
    )


def _mutation_body(
    m: dict[str, Any], index: int, columns: list[str], cells: dict[tuple[str, str], dict[str, Any]], width: int
) -> str:
    """One mutation's <tbody>: its row of the matrix, and its details (shown when the row is clicked)."""
    esc = html.escape
    selected = frozenset(m.get("selected") or ())  # a row asks once per column
    row = "".join(_cell(m, test, cells.get((m["name"], test)), selected) for test in columns)
    return (
        f"<tbody id='{esc(m['name'])}' class='mutation' data-name='{esc(m['name'])}' "
        f"data-verdict='{esc(m['verdict'])}' data-index='{index}'>"
        f"<tr class='row' aria-expanded='false'><td class='name'>{esc(m['name'])}</td>"
        f"<td class='verdict {esc(m['verdict'])}'>{esc(m['verdict'])}</td>"
        f"<td class='count'>{red_vs_expected(m)}</td>{row}</tr>{_details(m, width)}</tbody>"
    )


# What each red cell's colour and letter say, in words a reader without the docs can use.
CAUSE_WORDS = {
    "assertion": "went red: an assertion failed",
    "crash": "went red: the code raised another exception",
    "broken": "went red: the mutant itself is broken (NameError, ImportError from the mutated file)",
    "error": "went red in fixture setup or teardown",
    "search": "went red: Hypothesis's search failed (a deadline, or Flaky)",
    "timeout": "went red: the project's own per-test timeout ended it (a hang)",
}


def _legend() -> str:
    """Every mark a cell can carry: the five red causes, green and grey shading, the outlines
    of the contract, and the ○ of a missing kill."""
    outline = "outline-offset:-3px;background:#eef7ee"
    items = [(f"{_swatch(c)}", c[0].upper(), CAUSE_WORDS[c]) for c in CAUSES] + [
        ("background:#eef7ee", "", "ran and stayed green"),
        ("background:#fafafa", "", "not run under this mutation"),
        (f"outline:3px solid #1565c0;{outline}", "", "blue frame: the contract expects it red (kills)"),
        (f"outline:2px dashed #1565c0;{outline}", "", "dashed frame: it may go red (may_kill)"),
        (f"outline:3px solid #1565c0;{outline};color:#1565c0", "○", "expected red but stayed green: a missing kill"),
    ]
    return "".join(f"<span><i style='{style}'>{mark}</i>{html.escape(words)}</span>" for style, mark, words in items)


def short_test_name(test: str, limit: int = 32) -> str:
    """A column's heading: the test's name in its file, cut in the middle when long, so that
    the parametrization at its end (`[case-7]`) still tells sibling columns apart."""
    name = test.split("::", 1)[1] if "::" in test else test
    if len(name) <= limit:
        return name
    cut = name.find("[")
    head, tail = (name[:cut], name[cut:]) if cut > 0 else (name, "")
    if len(tail) > limit // 2:
        tail = "…" + tail[-(limit // 2 - 1) :]
    room = limit - len(tail)
    if len(head) > room:
        head = head[:room] if tail.startswith("…") else head[: room - 1] + "…"
    return head + tail


def _swatch(cause: str) -> str:
    return {
        "assertion": "background:#c62828",
        "crash": "background:#ef6c00",
        "broken": "background:#6a1b9a",
        "error": "background:#455a64",
        "search": "background:#00838f",  # Hypothesis's deadline or Flaky (docs/randomized.md)
        "timeout": "background:#5d4037",  # the project's own per-test timeout ended the test
    }[cause]

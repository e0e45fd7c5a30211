"""Every dependency file of the verdict cache is read (and hashed) at most once per run, and
parsed at most once, however many mutations depend on it; a fully cached run parses none, since
a file whose text is unchanged answers by its hash. A memo smaller than a large project's
dependency set re-read and re-parsed every file for every mutation, and made a cached run
slower than a fresh one (benchmarks/cache_bench.py measures it on a real project)."""

from __future__ import annotations

from collections import Counter

from gatekit import copy_fixture

import killmap.verdict.cache as cache
import killmap.verdict.lab as lab
from killmap.catalog.plan import LabOptions


def counted_run(project, monkeypatch) -> tuple[Counter, Counter, list]:
    reads: Counter = Counter()
    parses: Counter = Counter()
    read, parse = cache.read_source, cache.functions_of

    def reading(path):
        reads[path.relative_to(project).as_posix()] += 1
        return read(path)

    def parsing(source):
        parses[source] += 1
        return parse(source)

    monkeypatch.setattr(cache, "read_source", reading)
    monkeypatch.setattr(cache, "functions_of", parsing)
    result = lab.run_lab(project, LabOptions(jobs=2))
    return reads, parses, result.verdicts


def test_mutations_that_share_their_dependencies_read_each_file_once_a_run(tmp_path, monkeypatch):
    project = copy_fixture("selection", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))

    reads, parses, verdicts = counted_run(project, monkeypatch)
    assert len(verdicts) == 4 and not any(v.cached for v in verdicts)
    assert {"src/selpkg/calc.py", "src/selpkg/__init__.py"} <= set(reads)  # every mutant depends on both
    assert set(reads.values()) == {1}, reads
    assert set(parses.values()) == {1}, parses

    reads, parses, verdicts = counted_run(project, monkeypatch)
    assert all(v.cached for v in verdicts)
    assert {"src/selpkg/calc.py", "src/selpkg/__init__.py"} <= set(reads)
    assert set(reads.values()) == {1}, reads
    assert not parses  # unchanged text: its hash answers


def test_a_file_changed_where_no_selected_test_runs_is_parsed_once_and_keeps_every_verdict(tmp_path, monkeypatch):
    project = copy_fixture("selection", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    counted_run(project, monkeypatch)
    calc = project / "src/selpkg/calc.py"
    calc.write_text(calc.read_text().replace('return "anchor"', 'return "an" + "chor"'))

    reads, parses, verdicts = counted_run(project, monkeypatch)
    assert all(v.cached for v in verdicts)  # no selected test runs anchor()
    assert reads["src/selpkg/calc.py"] == 1
    assert [n for source, n in parses.items() if "anchor" in source] == [1]

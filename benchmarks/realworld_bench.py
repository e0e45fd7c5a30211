"""The real-world corpora (packaging, click, werkzeug, markupsafe) as subjects of benchmarks/run.py.

The seam: this module knows the corpora (how to prepare them, which interpreter they need,
how to read their verdicts, how to estimate a partial mutgate run, their table rows);
run.py knows how to measure (its killmap driver, mutgate, the plain pytest run, the floor)
and measures a corpus exactly as it measures every other subject.

Preparation is benchmarks/realworld.py's own, imported, not copied: `prepare_env` (the venv
in benchmarks/realworld/.work/venv), `extract` (the pinned sdist, downloaded once, the
project installed in that venv, a fresh copy made its own git checkout), and the corpus's
catalog copied in as mutations/<name>.toml, as realworld.py's run does. The copies go into
run.py's private workspace, not into .work/projects, so that nothing realworld.py keeps is
touched. Anything that fails there (no network, pip, git, a malformed sdist) makes that
corpus a "skipped" subject with the reason, which the table prints.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import realworld as rw
from realworld import tomllib  # realworld.py's choice: tomli on Python 3.10

# In --quick, mutgate runs a corpus whole when that is predicted to take at most this long,
# and otherwise QUICK_MUTGATE_SUBSET mutations, extrapolated (see mutgate_plan).
FULL_RUN_BUDGET_SECONDS = 60.0
QUICK_MUTGATE_SUBSET = 3


def key_of(corpus: rw.Corpus) -> str:
    """The subject's key in run.py's runs and floors: realworld/<name>."""
    return f"realworld/{corpus.name}"


def prepare(work: Path, names: list[str] | None = None) -> list[dict]:
    """One subject per corpus (those named, or all): {"corpus", "key", "root", "catalog",
    "python", "mutgate_timeout"}, or {"corpus", "key", "skipped": why} when it cannot be
    prepared."""
    chosen = [c for c in rw.CORPORA if not names or c.name in names]
    try:
        env = rw.prepare_env(rw.DEFAULT_WORK, rw.REPO)
    except (subprocess.CalledProcessError, OSError) as exc:
        why = f"the corpus venv could not be built ({type(exc).__name__}: {exc})"
        return [{"corpus": c, "key": key_of(c), "skipped": why} for c in chosen]
    subjects = []
    for corpus in chosen:
        try:
            root = rw.extract(env, corpus, work / "realworld")
        # realworld.py reports a malformed sdist with SystemExit (it is a script); here it
        # only means this corpus cannot be measured.
        except (subprocess.CalledProcessError, OSError, tarfile.TarError, SystemExit) as exc:
            subjects.append(
                {
                    "corpus": corpus,
                    "key": key_of(corpus),
                    "skipped": f"{corpus.requirement} could not be prepared ({type(exc).__name__}: {exc})",
                }
            )
            continue
        catalog = root / "mutations" / f"{corpus.name}.toml"
        catalog.parent.mkdir(exist_ok=True)
        shutil.copyfile(corpus.catalog, catalog)
        subjects.append(
            {
                "corpus": corpus,
                "key": key_of(corpus),
                "root": root,
                "catalog": catalog,
                "python": env.python,
                "mutgate_timeout": catalog_timeout(catalog),
            }
        )
    return subjects


def catalog_timeout(catalog: Path) -> float | None:
    """The largest timeout the catalog states ([gate] or per mutation), for mutgate's --timeout.

    Every catalog holds a mutant that never ends, and mutgate waits for ever without a timeout.
    mutgate has one timeout per whole-gate run, killmap one per mutation; the largest the
    catalog allows is the one that lets every ordinary run finish (the whole gate takes
    2-20 s here) and makes an endless mutant cost mutgate what it costs killmap.
    """
    data = tomllib.loads(catalog.read_text(encoding="utf-8"))
    stated = [data.get("gate", {}).get("timeout")] + [m.get("timeout") for m in data.get("mutation", [])]
    stated = [float(t) for t in stated if t is not None]
    return max(stated) if stated else None


# --- mutgate in --quick --------------------------------------------------------------------


def mutgate_plan(names: list[str], killmap_run: dict, plain_wall: float, timeout: float | None, quick: bool) -> dict:
    """Which mutations mutgate runs ("only": [] means all), and how to scale its wall up.

    mutgate is strictly sequential: a baseline and one whole-gate run per mutation, which
    costs about one plain run (measured just before), except a mutant killmap saw time out,
    which costs mutgate its whole --timeout. That predicts a full run; in --quick a corpus
    predicted over FULL_RUN_BUDGET_SECONDS runs only the first QUICK_MUTGATE_SUBSET ordinary
    (not timed-out) mutations, like S1000's 5 of 50.
    """
    timed_out = {m["name"] for m in killmap_run.get("mutations", []) if m["verdict"] == "timeout"}
    ordinary = [n for n in names if n not in timed_out]
    waits = len(timed_out & set(names)) * (timeout or 0.0)
    plan = {
        "only": [],
        "ordinary": len(ordinary),
        "timed_out": len(timed_out & set(names)),
        "timeout": timeout,
        "predicted_seconds": round(plain_wall * (len(ordinary) + 1) + waits, 1),
    }
    if quick and plan["predicted_seconds"] > FULL_RUN_BUDGET_SECONDS and len(ordinary) > QUICK_MUTGATE_SUBSET:
        plan["only"] = ordinary[:QUICK_MUTGATE_SUBSET]
    return plan


def estimated_full_wall(subset_wall: float, plan: dict) -> float:
    """A subset's wall (baseline + its ordinary runs) scaled to every ordinary mutation, plus
    one --timeout per timed-out mutant."""
    n = len(plan["only"])
    return round(subset_wall * (plan["ordinary"] + 1) / (n + 1) + plan["timed_out"] * (plan["timeout"] or 0.0), 3)


# --- verdicts, summary and rows --------------------------------------------------------------


def ground_truth_matches(corpus: rw.Corpus, killmap_run: dict) -> tuple[int, int] | None:
    """(matching, total) of killmap's verdicts against the corpus's observed ground truth,
    by realworld.py's own comparison: the timing is only worth reading for a run that
    judged every mutation as realworld.py expects."""
    report_file = killmap_run.get("report_file")
    if not report_file or not Path(report_file).is_file():
        return None
    report = json.loads(Path(report_file).read_text(encoding="utf-8"))
    rows = rw.compare(corpus, rw.load_truth(corpus), rw.Run(killmap_run["exit"], report, ""), set())
    return sum(r.matches for r in rows), len(rows)


def summarize(subjects: list[dict], runs: dict, med: dict) -> dict:
    """Per corpus: what the table and bench.json show beyond the floor (which run.py adds)."""
    out = {}
    for subject in subjects:
        corpus, key = subject["corpus"], subject["key"]
        if "skipped" in subject:
            out[corpus.name] = {"skipped": subject["skipped"]}
            continue
        killmap_last = (runs.get(f"{key}/killmap") or [{}])[-1]
        mutgate_last = (runs.get(f"{key}/mutgate") or [{}])[-1]
        plan = mutgate_last.get("plan") or {"only": []}
        mutgate_seconds = med.get(f"{key}/mutgate")
        if plan["only"] and mutgate_seconds is not None:
            mutgate_seconds = estimated_full_wall(mutgate_seconds, plan)
        killmap_seconds = med.get(f"{key}/killmap")
        out[corpus.name] = {
            "version": corpus.version,
            "mutations": subject.get("mutations"),
            "killmap_seconds": killmap_seconds,
            "killmap_verdicts": killmap_last.get("verdicts"),
            "killmap_error": killmap_last.get("error", "")[-300:] or None,
            "ground_truth_match": ground_truth_matches(corpus, killmap_last),
            "mutgate_seconds": mutgate_seconds,
            "mutgate_estimated_from": len(plan["only"]) or None,
            "mutgate_plan": plan,
            "mutgate_summary": mutgate_last.get("summary"),
            "mutgate_error": mutgate_last.get("error", "")[-300:] or None,
            "mutgate_timeout": subject.get("mutgate_timeout"),
            "ratio_mutgate_over_killmap": (
                round(mutgate_seconds / killmap_seconds, 2) if mutgate_seconds and killmap_seconds else None
            ),
            "problems": subject.get("problems", []),
        }
    return out


def table_rows(res: dict) -> list[tuple[str, str, str]]:
    """The corpus rows of bench_results' table, in its formats (imported here: it imports us)."""
    from bench_results import floor_rows, s

    rows = []
    for name, c in res.get("realworld", {}).items():
        if "skipped" in c:
            rows.append((f"{name}", "skipped", c["skipped"][:160]))
            continue
        counts = ", ".join(f"{n} {v}" for v, n in (c["killmap_verdicts"] or {}).items())
        match = c["ground_truth_match"]
        shown = (counts or "no verdicts") + (f"; {match[0]}/{match[1]} match the ground truth" if match else "")
        if c["killmap_error"]:
            shown = "ERROR: " + c["killmap_error"].strip().splitlines()[-1][:120]
        rows.append((f"{name} ({c['mutations']} mutations): killmap wall", s(c["killmap_seconds"]), shown))
        est = f" (est. from {c['mutgate_estimated_from']})" if c["mutgate_estimated_from"] else ""
        mutgate_note = (
            "ERROR: " + c["mutgate_error"].strip().splitlines()[-1][:120]
            if c["mutgate_error"]
            else (c["mutgate_summary"] or "") + (" (on the subset)" if est else "")
        )
        rows.append((f"{name}: mutgate wall{est}", s(c["mutgate_seconds"]), mutgate_note))
        rows.append((f"{name}: mutgate / killmap", s(c["ratio_mutgate_over_killmap"], "x"), "(no target)"))
        rows += floor_rows(name, res["floor"].get(f"realworld/{name}", {}), targeted=True)
        for problem in c["problems"]:
            rows.append((f"{name}: problem", "", problem[:160]))
    return rows

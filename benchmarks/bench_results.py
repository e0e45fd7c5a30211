"""What benchmarks/run.py makes of its measurements: the floor, bench.json, the table, the plots.

The seam: run.py plans and measures (the drivers, the tools, the subjects, the repeats);
this module only reads what was measured. Nothing here runs a tool or a test.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import statistics
from pathlib import Path

import realworld_bench


def _matches(entry: str, node_id: str) -> bool:
    from killmap.catalog.testids import matches

    return matches(entry, node_id)


def floor_of(run: dict, measured: tuple[dict[str, float], float], jobs: int) -> dict:
    """The floor: one plain pytest run of the gate's tests (what CI pays anyway), plus the
    sum over mutations of the plain-run durations of the tests killmap selected, / jobs.

    The report gives only the count of selected tests; the set is rebuilt as the tests
    the mutant run reached plus the contract's tests, all tests when the selection says
    so, or none when there is no selection (judged without a run), and checked against the
    count. `exact` says whether every mutation matched.

    Also a bound no gate can beat while it honours the catalog: each mutation costs its
    selected tests' plain durations, except one that timed out, which costs its limit
    (every gate waits it out); one mutation runs on one job, so the mutations' part is at
    least the dearest mutation alone: plain run + max(sum / jobs, dearest).
    """
    durations, plain_wall = measured
    total, exact, mismatches = 0.0, True, []
    costs: list[float] = []
    for m in run["mutations"]:
        if m["selection"].startswith("all tests"):
            chosen = set(durations)
        elif not m["selection"] and not m["selected_tests"]:
            chosen = set()  # judged without running a test (a mutant that never imports)
        else:
            entries = m["expected"] + m["may_kill"]
            chosen = set(m["reached_by"]) | {t for t in durations if any(_matches(e, t) for e in entries)}
        if len(chosen) != m["selected_tests"]:
            exact = False
            mismatches.append((m["name"], len(chosen), m["selected_tests"]))
        plain = sum(durations.get(t, 0.0) for t in chosen)
        total += plain
        costs.append(m["timeout_seconds"] if m["verdict"] == "timeout" and m.get("timeout_seconds") else plain)
    scheduled = max(sum(costs) / jobs, max(costs, default=0.0))
    return {
        "seconds": plain_wall + total / jobs,
        "plain_run_seconds": plain_wall,
        "selected_over_jobs_seconds": total / jobs,
        "sum_seconds": total,
        "jobs": jobs,
        "exact": exact,
        "mismatches": mismatches,
        "bound_seconds": plain_wall + scheduled,
        "timed_out_seconds": sum(c for c, m in zip(costs, run["mutations"], strict=True) if m["verdict"] == "timeout"),
    }


# --- bench.json, the table, the plots --------------------------------------------------


def median(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 3) if values else None


def summarize(runs, floors, info1k, info10k, bundled, args, repeat, mg_only, k_values, corpora, jobs: int) -> dict:
    def walls(key):
        return [r["wall"] for r in runs.get(key, []) if "error" not in r]

    def phases(key):
        keys = ("startup", "setup", "baseline", "mutants", "tail")
        rows = [r.get("phases", {}) for r in runs.get(key, []) if r.get("phases")]
        return {k: median([p.get(k) for p in rows]) for k in keys} if rows else {}

    med = {key: median(walls(key)) for key in runs}
    res: dict = {
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "repeat": repeat,
        "quick": args.quick,
        "jobs_killmap": jobs,
        "jobs_mutgate": 1,
        "synthetic": {
            "work_iterations": args.work,
            "s1000_tests": info1k["tests"],
            "s1000_non_reaching": info1k["non_reaching_tests"],
            "s10000_tests": info10k["tests"],
            "s10000_non_reaching": info10k["non_reaching_tests"],
            "mutations": len(info1k["mutations"]),
        },
        "bundled": (
            {"skipped": bundled["skipped"]}
            if "skipped" in bundled
            else {"mutations": bundled["mutations"], "tests": bundled["tests"]}
        ),
        "median_wall_seconds": med,
        "phases_median_seconds": {key: phases(key) for key in runs if key.endswith("killmap") or "killmap" in key},
        "runs": {key: [{k: v for k, v in r.items() if k != "mutations"} for r in rs] for key, rs in runs.items()},
    }
    mg_s1000 = med.get("s1000/mutgate")
    if mg_only and mg_s1000 is not None:
        # sequential: baseline + one full-suite run per mutation
        mg_s1000 = round(mg_s1000 * (len(info1k["mutations"]) + 1) / (len(mg_only) + 1), 3)
        res["mutgate_s1000_estimated_from"] = len(mg_only)
    res["mutgate_s1000_seconds"] = mg_s1000
    ratios = {}
    if med.get("bundled/killmap") and med.get("bundled/mutgate"):
        ratios["bundled"] = round(med["bundled/mutgate"] / med["bundled/killmap"], 2)
    if med.get("s1000/killmap") and mg_s1000:
        ratios["s1000"] = round(mg_s1000 / med["s1000/killmap"], 2)
    res["ratio_mutgate_over_killmap"] = ratios
    res["realworld"] = realworld_bench.summarize(corpora, runs, med)
    # mutgate's wall (or its estimate) per subject: over the floor, the best mutgate/killmap
    # ratio a gate could reach there
    mutgate_seconds = {
        "bundled": med.get("bundled/mutgate"),
        "s1000": mg_s1000,
        **{
            realworld_bench.key_of(s["corpus"]): res["realworld"][s["corpus"].name].get("mutgate_seconds")
            for s in corpora
        },
    }
    fl = {}
    for key, rows in floors.items():
        f = median([row["seconds"] for row in rows])
        gate = med.get(f"{key}/killmap")
        fl[key] = {
            "floor_seconds": f,
            "gate_seconds": gate,
            "plain_run_seconds": median([row["plain_run_seconds"] for row in rows]),
            "selected_over_jobs_seconds": median([row["selected_over_jobs_seconds"] for row in rows]),
            "gate_over_floor": round(gate / f, 1) if gate and f else None,
            "bound_seconds": median([row["bound_seconds"] for row in rows]),
            "timed_out_seconds": median([row["timed_out_seconds"] for row in rows]),
            "mutgate_over_floor": round(mutgate_seconds[key] / f, 1) if mutgate_seconds.get(key) and f else None,
            "selection_rebuilt_exactly": all(row["exact"] for row in rows),
            "mismatches": rows[-1]["mismatches"][:10],
        }
    for row in fl.values():
        row["gate_over_bound"] = (
            round(row["gate_seconds"] / row["bound_seconds"], 2)
            if row["gate_seconds"] and row["bound_seconds"]
            else None
        )
    res["floor"] = fl
    base, grown = med.get("s1000/killmap"), med.get("s10000/killmap")
    res["non_reaching_x10"] = {
        "s1000": base,
        "s10000": grown,
        "growth_percent": round(100 * (grown / base - 1), 1) if base and grown else None,
    }
    ks = [(k, med.get(f"s1000/killmap K={k}")) for k in k_values] + [(len(info1k["mutations"]), base)]
    ks = [(k, v) for k, v in ks if v is not None]
    kp = [(k, (res["phases_median_seconds"].get(f"s1000/killmap K={k}") or {}).get("mutants")) for k in k_values] + [
        (len(info1k["mutations"]), (res["phases_median_seconds"].get("s1000/killmap") or {}).get("mutants"))
    ]
    kp = [(k, v) for k, v in kp if v is not None]
    res["k_scaling"] = {"points": ks, "fit": _fit(ks), "mutant_phase_points": kp, "mutant_phase_fit": _fit(kp)}
    loads = [r["load1"] for rs in runs.values() for r in rs]
    res["load1_median"], res["load1_max"] = median(loads), max(loads)
    res["cached_rerun_seconds"] = med.get("s1000/killmap cached rerun")
    res["cached_rerun_all_cached"] = all(
        r.get("cached") == r.get("total") for r in runs.get("s1000/killmap cached rerun", [])
    )
    # the corpora are not all held by design (vacuous, broken, timeout...): their rows say
    # how many verdicts match the ground truth instead
    synthetic = lambda key: not key.startswith(("bundled", "realworld/"))  # noqa: E731
    verdicts_ok = all(
        r.get("held") == r.get("total")
        for key, rs in runs.items()
        for r in rs
        if r["tool"] == "killmap" and synthetic(key)
    ) and all(
        r.get("ok") == r.get("total")
        for key, rs in runs.items()
        for r in rs
        if r["tool"] == "mutgate" and synthetic(key)
    )
    res["synthetic_verdicts_all_held"] = verdicts_ok
    return res


def _fit(points: list[tuple[int, float]]) -> dict | None:
    if len(points) < 2:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    icpt = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (icpt + slope * x)) ** 2 for x, y in points)
    return {
        "intercept_seconds": round(icpt, 3),
        "seconds_per_mutation": round(slope, 4),
        "r2": round(1 - ss_res / ss_tot, 4) if ss_tot else None,
    }


TARGETS = """\
targets: >=5x faster than mutgate on the bundled catalog; >=10x on S1000; wall <=1.5x the
floor on S1000, on S10000 (its non-reaching tests grown tenfold) and on each real-world
corpus; cached re-run <0.5 s"""


def s(v, unit="s"):
    return "n/a" if v is None else f"{v:.2f}{unit}"


def verdict(ok):
    return "MET" if ok else "NOT MET"


def floor_rows(name: str, f: dict, targeted: bool) -> list[tuple[str, str, str]]:
    """A subject's floor, killmap and mutgate over it, and (with a timed-out mutant) the bound."""
    g = f.get("gate_over_floor")
    rows = [
        (
            f"{name}: floor = plain run + selected / jobs",
            f"{s(f.get('floor_seconds'))} = {s(f.get('plain_run_seconds'))} + {s(f.get('selected_over_jobs_seconds'))}",
            "" if f.get("selection_rebuilt_exactly", True) else "selection not rebuilt exactly",
        ),
        (f"{name}: killmap / floor", s(g, "x"), f"<=1.5x {verdict(g and g <= 1.5)}" if targeted else "(no target)"),
        (f"{name}: mutgate / floor (best ratio allowed)", s(f.get("mutgate_over_floor"), "x"), ""),
    ]
    if f.get("timed_out_seconds"):
        # The floor counts a looping mutant at its tests' plain durations; no gate that
        # honours the catalog's timeout can call it before the limit.
        b = f.get("gate_over_bound")
        rows.append(
            (
                f"{name}: bound = plain run + max(sum / jobs, dearest), a timeout at its limit",
                s(f.get("bound_seconds")),
                f"of which timed out: {s(f.get('timed_out_seconds'))}",
            )
        )
        rows.append(
            (
                f"{name}: killmap / bound",
                s(b, "x"),
                f"(the floor's target, honouring timeouts) <=1.5x {verdict(b and b <= 1.5)}",
            )
        )
    return rows


def print_table(res: dict) -> None:
    med = res["median_wall_seconds"]
    ratio = res["ratio_mutgate_over_killmap"]
    fl = res["floor"]

    print()
    print(f"killmap benchmarks, {res['date']}, median of {res['repeat']}, killmap --jobs {res['jobs_killmap']}")
    print(TARGETS)
    print(f"{'measurement':46} {'value':>12}  target")
    rows = []
    if "skipped" in res["bundled"]:
        rows.append(("bundled catalog", "skipped", res["bundled"]["skipped"]))
    else:
        rows.append(("bundled: killmap wall", s(med.get("bundled/killmap")), ""))
        rows.append(("bundled: mutgate wall", s(med.get("bundled/mutgate")), ""))
        r = ratio.get("bundled")
        rows.append(("bundled: mutgate / killmap", s(r, "x"), f">=5x {verdict(r and r >= 5)}"))
        rows += floor_rows("bundled", fl.get("bundled", {}), targeted=False)
    est = " (est.)" if res.get("mutgate_s1000_estimated_from") else ""
    rows.append(("S1000: killmap wall", s(med.get("s1000/killmap")), ""))
    rows.append((f"S1000: mutgate wall{est}", s(res.get("mutgate_s1000_seconds")), ""))
    r = ratio.get("s1000")
    rows.append(("S1000: mutgate / killmap", s(r, "x"), f">=10x {verdict(r and r >= 10)}"))
    rows += floor_rows("S1000", fl.get("s1000", {}), targeted=True)
    if med.get("s1000/killmap --no-confirm") is not None:
        rows.append(("S1000: killmap --no-confirm (1 run)", s(med.get("s1000/killmap --no-confirm")), "(diagnostic)"))
    nr = res["non_reaching_x10"]
    rows.append(("S10000 (non-reaching x10): killmap", s(nr["s10000"]), ""))
    gp = nr["growth_percent"]
    rows.append(("  growth vs S1000", "n/a" if gp is None else f"{gp:+.1f}%", "(its floor grows too)"))
    rows += floor_rows("S10000", fl.get("s10000", {}), targeted=True)
    for label, key in (
        ("K scaling, wall: s per mutation", "fit"),
        ("K scaling, mutant phase: s per mutation", "mutant_phase_fit"),
    ):
        fit = res["k_scaling"][key]
        if fit:
            rows.append(
                (label, s(fit["seconds_per_mutation"]), f"intercept {fit['intercept_seconds']:.2f}s, r2 {fit['r2']}")
            )
    c = res["cached_rerun_seconds"]
    rows.append(("S1000: cached re-run", s(c), f"<0.5s {verdict(c is not None and c < 0.5)}"))
    rows += realworld_bench.table_rows(res)
    for name, value, target in rows:
        print(f"{name:46} {value:>12}  {target}")
    print("phases (median s: startup / setup / baseline / mutants / tail):")
    for key, p in res["phases_median_seconds"].items():
        if p:
            print(f"  {key:34} " + " / ".join(s(p.get(k)) for k in ("startup", "setup", "baseline", "mutants", "tail")))
    if not res["cached_rerun_all_cached"]:
        print("WARNING: a cached re-run was not served entirely from the cache")
    src = res.get("killmap_source_sha256", {})
    if len(set(src.values())) > 1:
        print("note: src/killmap changed during the run; the source frozen at the start was measured")
    print(
        f"machine load (1-min average before each measurement): median {res['load1_median']}, "
        f"max {res['load1_max']} on {res['machine']['cpus']} CPUs"
    )
    if not res["synthetic_verdicts_all_held"]:
        print("WARNING: a synthetic run did not come out all held / all OK: its timing compares unequal work")


PATH_COLOURS = {"swap": "#2e7d32", "fallback": "#ef6c00", "fresh": "#1565c0", "cached": "#9e9e9e", "none": "#d0d0d0"}


def plot_paths(runs: dict, path: Path) -> None:
    """Wall time per mutation, coloured by the path it took: swapped into a fork of the
    collected session, fallen back to a fresh session, fresh by rule (import-time), cached."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    subjects = [
        key
        for key in ("bundled/killmap", "s1000/killmap", "s10000/killmap", "s1000/killmap cached rerun")
        if runs.get(key) and runs[key][-1].get("mutations")
    ]
    subjects += sorted(k for k in runs if k.startswith("realworld/") and runs[k][-1].get("mutations"))
    if not subjects:
        return
    fig, axes = plt.subplots(len(subjects), 1, figsize=(12, 2.4 * len(subjects)), squeeze=False)
    for ax, key in zip(axes[:, 0], subjects, strict=True):
        mutations = runs[key][-1]["mutations"]
        ax.bar(
            range(len(mutations)),
            [m["wall"] for m in mutations],
            color=[PATH_COLOURS.get(m["path"], "#000") for m in mutations],
        )
        counts = {p: sum(m["path"] == p for m in mutations) for p in PATH_COLOURS}
        ax.set_title(f"{key}: " + ", ".join(f"{n} {p}" for p, n in counts.items() if n), fontsize=9)
        ax.set_ylabel("s per mutation", fontsize=8)
        ax.set_xticks([])
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in PATH_COLOURS.values()]
    fig.legend(handles, list(PATH_COLOURS), loc="upper right", fontsize=8, ncol=len(PATH_COLOURS))
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot(res: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    med = res["median_wall_seconds"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    # (1) tools side by side
    ax = axes[0]
    labels, km, mg, fl = [], [], [], []
    if "skipped" not in res["bundled"]:
        labels.append(f"bundled\n({res['bundled']['mutations']} mutations)")
        km.append(med.get("bundled/killmap") or 0)
        mg.append(med.get("bundled/mutgate") or 0)
        fl.append(res["floor"].get("bundled", {}).get("floor_seconds") or 0)
    labels.append("S1000\n(50 mutations, 1,000 tests)")
    km.append(med.get("s1000/killmap") or 0)
    mg.append(res.get("mutgate_s1000_seconds") or 0)
    fl.append(res["floor"].get("s1000", {}).get("floor_seconds") or 0)
    x = range(len(labels))
    est = " (S1000 estimated)" if res.get("mutgate_s1000_estimated_from") else ""
    ax.bar([i - 0.27 for i in x], mg, 0.27, label=f"mutgate 0.1.1, sequential{est}")
    ax.bar(list(x), km, 0.27, label=f"killmap --jobs {res['jobs_killmap']}")
    ax.bar([i + 0.27 for i in x], fl, 0.27, label="floor")
    ax.set_xticks(list(x), labels)
    for i, (a, b, c) in enumerate(zip(mg, km, fl, strict=True)):
        for dx, v in ((-0.27, a), (0, b), (0.27, c)):
            if v:
                ax.text(i + dx, v, f"{v:.1f}" if v >= 1 else f"{v:.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylim(top=max(mg + km + fl + [1.0]) * 12)  # headroom for the legend
    ax.set_ylabel("wall seconds (median, log scale)")
    ax.set_title("gate wall time vs mutgate and the floor")
    ax.legend(fontsize=8, loc="upper left")
    # (2) non-reaching x10, by phase
    ax = axes[1]
    keys = ["s1000/killmap", "s10000/killmap"]
    names = [
        f"{res['synthetic']['s1000_non_reaching']} non-reaching\n({res['synthetic']['s1000_tests']} tests)",
        f"{res['synthetic']['s10000_non_reaching']} non-reaching\n({res['synthetic']['s10000_tests']} tests)",
    ]
    bottom = [0.0, 0.0]
    for phase in ("startup", "setup", "baseline", "mutants", "tail"):
        vals = [res["phases_median_seconds"].get(k, {}).get(phase) or 0 for k in keys]
        ax.bar(names, vals, bottom=bottom, label=phase)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.set_ylabel("seconds (median per phase)")
    gp = res["non_reaching_x10"]["growth_percent"]
    ax.set_title(f"non-reaching tests x10: {gp:+.0f}% wall" if gp is not None else "non-reaching tests x10")
    ax.legend(fontsize=8)
    # (3) K scaling
    ax = axes[2]
    pts = res["k_scaling"]["points"]
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label="killmap wall")
    mp = res["k_scaling"]["mutant_phase_points"]
    if mp:
        ax.plot([p[0] for p in mp], [p[1] for p in mp], "s-", label="of which: mutant phase")
    fit = res["k_scaling"]["fit"]
    if fit:
        xs = [0, max(p[0] for p in pts)]
        ax.plot(
            xs,
            [fit["intercept_seconds"] + fit["seconds_per_mutation"] * v for v in xs],
            "--",
            label=f"fit: {fit['intercept_seconds']:.1f}s + {fit['seconds_per_mutation']:.2f}s x K",
        )
    if res.get("cached_rerun_seconds") is not None:
        ax.axhline(
            res["cached_rerun_seconds"],
            color="gray",
            ls=":",
            label=f"cached re-run, K=50: {res['cached_rerun_seconds']:.2f}s",
        )
    ax.set_xlabel("mutations K (S1000)")
    ax.set_ylabel("wall seconds (median)")
    ax.set_title("mutations K")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    fig.suptitle(f"killmap benchmarks, {res['date'][:10]}, {res['machine']['cpus']} CPUs, median of {res['repeat']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- the speed page's tables -------------------------------------------------------------
# docs/speed.md includes these files (pymdownx.snippets): the figures on the site are the
# benchmark's own output, never typed by hand. One file per Python minor version, since the
# baseline's recorder differs (coverage's C tracer before 3.12, sys.monitoring after).

DOCS_SPEED = Path(__file__).resolve().parents[1] / "docs" / "speed"
GENERATED_NOTE = (
    "<!-- Generated by benchmarks/bench_results.py from bench.json: do not edit. Re-run the benchmark "
    "(python3 benchmarks/run.py) or regenerate from a kept bench.json "
    "(python3 benchmarks/bench_results.py reports/bench/bench.json). -->"
)


def measured_path(res: dict) -> Path:
    """docs/speed/measured-<major>.<minor>.md for the Python the benchmark ran under."""
    return DOCS_SPEED / f"measured-{'.'.join(res['machine']['python'].split('.')[:2])}.md"


def _secs(v: float | None, digits: int | None = None) -> str:
    if v is None:
        return "n/a"
    return f"{v:.{digits if digits is not None else (2 if v < 100 else 1)}f} s"


def _times(v: float | None, digits: int | None = None) -> str:
    if v is None:
        return "n/a"
    return f"{v:.{digits if digits is not None else (2 if v < 10 else 1)}f}x"


def _yes(ok) -> str:
    return "yes" if ok else "no"


def _paired(runs: dict, num: str, den: str) -> list[float]:
    """Per repeat, num's wall over den's: the two ran side by side, so their ratio drifts
    less with the machine's load than either wall does."""
    a = [r.get("wall") for r in runs.get(num, []) if "error" not in r]
    b = [r.get("wall") for r in runs.get(den, []) if "error" not in r]
    return [x / y for x, y in zip(a, b, strict=False) if x and y]


def _run_header(res: dict) -> str:
    end = _dt.datetime.fromisoformat(res["date"])
    start = end - _dt.timedelta(seconds=res.get("elapsed_seconds") or 0)
    python = ".".join(res["machine"]["python"].split(".")[:2])
    command = f"python{python} benchmarks/run.py" + (" --quick" if res.get("quick") else "")
    return (
        f"Measured {start:%Y-%m-%d %H:%M}-{end:%H:%M} by `{command}`, median of {res['repeat']}, "
        f"Python {res['machine']['python']}, {res['machine']['cpus']} CPUs, killmap `--jobs {res['jobs_killmap']}`; "
        f"1-minute load average before the measurements {res['load1_median']} (median), {res['load1_max']} (max)."
    )


def markdown_rows(res: dict) -> list[tuple[str, str, str, str]]:
    """(measurement, result, target, met?) rows, in the table's order; a row whose figures
    this run did not measure is left out."""
    med, runs, fl = res["median_wall_seconds"], res.get("runs", {}), res["floor"]
    rows = []
    ratio = res["ratio_mutgate_over_killmap"]
    if "skipped" not in res["bundled"] and ratio.get("bundled"):
        paired = ", ".join(_times(r) for r in _paired(runs, "bundled/mutgate", "bundled/killmap"))
        rows.append(
            (
                f"bundled catalog, {res['bundled']['mutations']} mutations: mutgate "
                f"{_secs(med.get('bundled/mutgate'))} / killmap {_secs(med.get('bundled/killmap'))}",
                _times(ratio["bundled"]) + (f" (paired: {paired})" if paired else ""),
                "≥5x",
                _yes(ratio["bundled"] >= 5),
            )
        )
    syn = res["synthetic"]
    if ratio.get("s1000"):
        est = " (est.)" if res.get("mutgate_s1000_estimated_from") else ""
        rows.append(
            (
                f"synthetic S1000, {syn['mutations']} mutations over {syn['s1000_tests']:,} tests: mutgate "
                f"{_secs(res.get('mutgate_s1000_seconds'))}{est} / killmap {_secs(med.get('s1000/killmap'))}",
                _times(ratio["s1000"]),
                "≥10x",
                _yes(ratio["s1000"] >= 10),
            )
        )
    f = fl.get("s1000", {})
    if f.get("gate_over_floor"):
        no_confirm = med.get("s1000/killmap --no-confirm")
        rows.append(
            (
                f"S1000: killmap / floor ({_secs(f['floor_seconds'])} = plain run {_secs(f['plain_run_seconds'])} "
                f"+ selected ÷ jobs {_secs(f['selected_over_jobs_seconds'])})",
                _times(f["gate_over_floor"], 2)
                + (f" (killmap {_secs(no_confirm)} with `--no-confirm`)" if no_confirm else ""),
                "≤1.5x",
                _yes(f["gate_over_floor"] <= 1.5),
            )
        )
    nr = res["non_reaching_x10"]
    f = fl.get("s10000", {})
    if f.get("gate_over_floor"):
        rows.append(
            (
                f"non-reaching tests grown tenfold (S10000, {syn['s10000_tests']:,} tests): killmap "
                f"{_secs(nr['s10000'])} / floor {_secs(f['floor_seconds'])} (= plain run "
                f"{_secs(f['plain_run_seconds'])} + selected ÷ jobs {_secs(f['selected_over_jobs_seconds'])}); "
                f"{nr['growth_percent']:+.1f}% over S1000",
                _times(f["gate_over_floor"], 2),
                "≤1.5x",
                _yes(f["gate_over_floor"] <= 1.5),
            )
        )
    for name, c in res.get("realworld", {}).items():
        f = fl.get(f"realworld/{name}", {})
        if "skipped" in c or not c.get("killmap_seconds"):
            continue
        match = c.get("ground_truth_match")
        matched = f" ({match[0]}/{match[1]} match the ground truth)" if match else ""
        est = " (est.)" if c.get("mutgate_estimated_from") else ""
        result = [_times(c.get("ratio_mutgate_over_killmap"))]
        result.append(f"killmap / floor ({_secs(f.get('floor_seconds'), 1)}) {_times(f.get('gate_over_floor'), 1)}")
        met = [f"floor {_yes(f.get('gate_over_floor') and f['gate_over_floor'] <= 1.5)}"]
        if f.get("gate_over_bound"):
            result.append(f"killmap / bound ({_secs(f.get('bound_seconds'), 1)}) {_times(f['gate_over_bound'], 2)}")
            met.append(f"bound {_yes(f['gate_over_bound'] <= 1.5)}")
        rows.append(
            (
                f"{name} {c['version']} corpus, {c['mutations']} mutations: killmap "
                f"{_secs(c['killmap_seconds'], 1)}{matched}; mutgate {_secs(c.get('mutgate_seconds'), 1)}{est}",
                "; ".join(result),
                "≤1.5x floor",
                ", ".join(met),
            )
        )
    k = res.get("k_scaling", {})
    fit, phase = k.get("fit"), k.get("mutant_phase_fit")
    if fit and fit.get("r2") is not None:
        counts = " / ".join(str(point[0]) for point in k["points"])
        text = f"{_secs(fit['seconds_per_mutation'])} per mutation, r² {fit['r2']:.3f}"
        if phase and phase.get("r2") is not None:
            text += f" (mutant phase {_secs(phase['seconds_per_mutation'])}, r² {phase['r2']:.3f})"
        rows.append((f"gate time as mutations grow ({counts})", text, "linear", _yes(fit["r2"] >= 0.95)))
    cached = res.get("cached_rerun_seconds")
    if cached is not None:
        rows.append(("cached re-run of S1000, nothing changed", _secs(cached), "<0.5 s", _yes(cached < 0.5)))
    return rows


def markdown_table(res: dict) -> str:
    """The generated file: a note not to edit it, which run produced it, and the table."""
    lines = [GENERATED_NOTE, "", _run_header(res), "", "| measurement | result | target | met? |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in markdown_rows(res)]
    return "\n".join(lines) + "\n"


def write_markdown(res: dict, *paths: Path) -> list[Path]:
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(markdown_table(res), encoding="utf-8")
    return list(paths)


if __name__ == "__main__":
    # Regenerate the speed page's table from a kept bench.json, without measuring again.
    import argparse
    import json

    ap = argparse.ArgumentParser(description="write the speed page's table from bench.json")
    ap.add_argument("bench_json", type=Path, nargs="?", default=Path("reports/bench/bench.json"))
    ap.add_argument("--out", type=Path, default=None, help="default: docs/speed/measured-<python>.md")
    cli = ap.parse_args()
    results = json.loads(cli.bench_json.read_text(encoding="utf-8"))
    print("wrote", *write_markdown(results, cli.out or measured_path(results)))

"""Code that a line recorder can get wrong, for the tests that hold a recorder (the line
monitor, the probes) to coverage's C tracer: except headers, elif tests, lambdas,
generators resumed later, closures, comprehensions, decorators, coroutines, match, a module
imported or reloaded after the recorder started."""

from __future__ import annotations

import textwrap

from gatekit import copy_fixture, gate_env, run_gate


def recorded_by(tmp_path) -> dict[tuple[str, ...], list[str]]:
    """What the report says recorded each baseline of the basic fixture, by default and with
    `--reach-tracer coverage`, keyed by those arguments."""
    project = copy_fixture("basic", tmp_path)
    env = gate_env(project)
    recorded = {}
    for args in ((), ("--reach-tracer", "coverage")):
        run = run_gate(project, "run", "--no-cache", *args, env=env)
        assert run.code == 0, run.stderr
        recorded[args] = [b["reach_recorded_by"] for b in run.report["baselines"]]
    return recorded


TARGET = textwrap.dedent("""
    import asyncio
    import functools


    def classify(n):
        if n < 0:
            return "negative"
        elif n == 0:
            return "zero"
        elif (n % 2
              == 0):
            return "even"
        return "odd"


    def guarded(value):
        try:
            return int(value)
        except (TypeError,
                ValueError) as exc:
            return str(exc)[:3]
        finally:
            pass


    def counter(limit):
        total = 0
        while total < limit:
            total += 1
            yield total
        else:
            yield -1


    def closure(base):
        def add(x):
            return base + x
        square = lambda y: (
            y * y)
        return add(square(base))


    def comprehension(items):
        return [i * 2 for i in items if i % 3], {k: v for k, v in zip(items, items)}


    def logged(func):
        @functools.wraps(func)
        def wrapper(*args):
            return func(*args)
        return wrapper


    @logged
    def decorated(x):
        return x + 1


    class Shape:
        def __init__(self, sides):
            self.sides = sides

        @property
        def name(self):
            return {3: "triangle", 4: "square"}.get(self.sides, "other")


    async def awaited(x):
        await asyncio.sleep(0)
        return x * 3


    def orphan():
        yield 1
        yield "resumed after its function is gone"


    def matcher(command):
        match command.split():
            case ["go", direction]:
                return direction
            case _:
                return None
""")

LATE = textwrap.dedent("""
    def late(x):
        if x:
            return "late"
        return "never"
""")

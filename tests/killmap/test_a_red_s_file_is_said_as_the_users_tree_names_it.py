"""A red test's `raised_at` names the file as the user's tree does: a project that puts
`tests/..` on sys.path (sortedcontainers' tests/context.py) imports its package through it,
and `tests/../sortedcontainers/sortedlist.py` was said on the console, in the HTML and the
JUnit report, and matched no mutated file, so the line in the user's tree was never given."""

from __future__ import annotations

import os

from killmap.engine.inrun.failures import _relative


def test_a_frame_reached_through_dot_dot_is_said_below_the_sandbox_without_it(tmp_path):
    sandbox = str(tmp_path) + os.sep
    frame = (os.path.join(str(tmp_path), "tests", "..", "pkg", "mod.py"), 12)
    assert _relative(frame, sandbox) == (os.path.join("pkg", "mod.py"), 12)
    assert _relative(("/elsewhere/lib/x.py", 3), sandbox) == ("/elsewhere/lib/x.py", 3)

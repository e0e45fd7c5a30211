"""`killmap comment`: the pull request's one comment, posted once and edited on later pushes,
against a local stand-in for GitHub's REST API that records every request (issue 29.3)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pytest

REPORT = Path(__file__).resolve().parent.parent / "fixtures" / "reports" / "verdicts.json"
LIMIT = 65_536


class FakeGitHub(ThreadingHTTPServer):
    """Issue comments of one repository, o/r, kept in memory; every request recorded."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[tuple[str, str, dict | None, str]] = []
        self.comments: list[dict] = [{"id": 1, "body": "LGTM, but see the gate"}]  # someone else's

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: FakeGitHub

    def log_message(self, *args) -> None:  # quiet
        pass

    def _answer(self, status: int, payload) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self) -> tuple[str, dict | None]:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        path = urlparse(self.path).path
        self.server.requests.append((self.command, path, body, self.headers.get("Authorization", "")))
        return path, body

    def do_GET(self) -> None:
        path, _ = self._record()
        assert path == "/repos/o/r/issues/7/comments"
        self._answer(200, self.server.comments)

    def do_POST(self) -> None:
        path, body = self._record()
        assert path == "/repos/o/r/issues/7/comments" and body is not None
        comment = {"id": 100 + len(self.server.comments), "body": body["body"], "html_url": "http://example.invalid/c"}
        self.server.comments.append(comment)
        self._answer(201, comment)

    def do_PATCH(self) -> None:
        path, body = self._record()
        assert body is not None
        for comment in self.server.comments:
            if path == f"/repos/o/r/issues/comments/{comment['id']}":
                comment["body"] = body["body"]
                return self._answer(200, comment)
        self._answer(404, {"message": "Not Found"})


@contextmanager
def fake_github() -> Iterator[FakeGitHub]:
    server = FakeGitHub()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def github():
    with fake_github() as server:
        yield server


def comment(tmp_path: Path, github: FakeGitHub, *args: str) -> subprocess.CompletedProcess:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    env = {
        "PATH": "/usr/bin:/bin",
        "GITHUB_API_URL": github.url,
        "GITHUB_TOKEN": "secret-token",
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_EVENT_PATH": str(event),
    }
    return subprocess.run(
        [sys.executable, "-m", "killmap", "comment", *args], cwd=tmp_path, env=env, capture_output=True, text=True
    )


def reports(tmp_path: Path, broken: str = "refusal-check-deleted") -> tuple[Path, Path]:
    """The fixture report as the base, and a head where one contract that held went vacuous."""
    base = json.loads(REPORT.read_text())
    head = copy.deepcopy(base)
    for entry in head["mutations"]:
        if entry["name"] == broken:
            entry["verdict"] = "vacuous"
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    return tmp_path / "base.json", tmp_path / "head.json"


def test_the_first_push_creates_one_comment_and_the_second_edits_it(tmp_path, github):
    base, head = reports(tmp_path)
    first = comment(tmp_path, github, str(head), "--base", str(base))
    assert first.returncode == 0, first.stderr
    assert [(method, path) for method, path, _, _ in github.requests] == [
        ("GET", "/repos/o/r/issues/7/comments"),
        ("POST", "/repos/o/r/issues/7/comments"),
    ]
    assert all(auth == "Bearer secret-token" for *_, auth in github.requests)
    body = github.comments[-1]["body"]
    assert body.startswith("<!-- killmap -->\n### killmap diff: 1 regression")
    assert "| ❌ regressed | `refusal-check-deleted` | held | vacuous |" in body
    assert "<details><summary>the full killmap report</summary>" in body and "## killmap: " in body

    github.requests.clear()
    _, head = reports(tmp_path, broken="clamp-constant")  # the second push breaks another contract
    second = comment(tmp_path, github, str(head), "--base", str(base))
    assert second.returncode == 0, second.stderr
    assert [(method, path) for method, path, _, _ in github.requests] == [
        ("GET", "/repos/o/r/issues/7/comments"),
        ("PATCH", f"/repos/o/r/issues/comments/{github.comments[-1]['id']}"),
    ]
    assert len(github.comments) == 2 and github.comments[0]["body"] == "LGTM, but see the gate"
    assert "`clamp-constant`" in github.comments[-1]["body"]
    assert "`refusal-check-deleted` | held" not in github.comments[-1]["body"]


def test_a_large_report_and_diff_stay_within_githubs_comment_limit(tmp_path, github):
    base = json.loads(REPORT.read_text())
    many = [
        dict(entry, name=f"{entry['name']}-{n}", diff=entry["diff"] * 20)
        for n in range(120)
        for entry in base["mutations"]
    ]
    base["mutations"] = many
    head = copy.deepcopy(base)
    for entry in head["mutations"]:
        entry["verdict"] = "vacuous" if entry["verdict"] == "held" else entry["verdict"]
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    done = comment(tmp_path, github, "head.json", "--base", "base.json")
    assert done.returncode == 0, done.stderr
    body = github.comments[-1]["body"]
    assert len(body.encode("utf-8")) <= LIMIT
    assert "more changes not shown" in body and "<details><summary>the full killmap report</summary>" in body


def test_a_missing_token_or_pull_request_is_one_line_and_exit_2(tmp_path, github):
    _, head = reports(tmp_path)

    def run(*args: str, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "killmap", "comment", str(head), "--repo", "o/r", *args],
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin", "GITHUB_API_URL": github.url, **env},
            capture_output=True,
            text=True,
        )

    no_token = run("--pr", "7")
    assert no_token.returncode == 2
    assert no_token.stderr == "killmap: field 'GITHUB_TOKEN': not set, and the comment needs it\n"
    no_pull_request = run(GITHUB_TOKEN="t")
    assert no_pull_request.returncode == 2 and no_pull_request.stderr.count("\n") == 1
    assert "comment needs --pr or a pull_request event" in no_pull_request.stderr
    assert github.requests == []

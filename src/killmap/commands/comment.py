"""`killmap comment REPORT.json [--base BASE.json]`: one pull-request comment, kept current.

The comment carries the diff against the base (report/diff_report.py) and the full Markdown
report folded under it, within GitHub's 65,536-character limit. It is found again by a hidden
marker and edited on later pushes, so a pull request has one killmap comment, not one per push.
GitHub's REST API through urllib: GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL (a test
points it at a local server), and the pull request's number from --pr or GITHUB_EVENT_PATH.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from killmap.commands.shared import EXIT_HELD
from killmap.errors import GateError

PAGE = 100


def add_parser(sub) -> None:
    comment = sub.add_parser("comment", help="post or update the pull request's one killmap comment")
    comment.add_argument("report", type=Path, metavar="REPORT", help="the head's killmap.json")
    comment.add_argument("--base", type=Path, default=None, help="the base's killmap.json: the diff goes on top")
    comment.add_argument("--pr", type=int, default=None, help="the pull request (default: from GITHUB_EVENT_PATH)")
    comment.add_argument("--repo", default=None, help="OWNER/NAME (default: GITHUB_REPOSITORY)")
    comment.set_defaults(main=main)


def main(args: argparse.Namespace) -> int:
    body = build_body(args.report, args.base)
    api = GitHub(
        os.environ.get("GITHUB_API_URL") or "https://api.github.com",
        _required("GITHUB_TOKEN", os.environ.get("GITHUB_TOKEN")),
        _required("--repo or GITHUB_REPOSITORY", args.repo or os.environ.get("GITHUB_REPOSITORY")),
    )
    number = args.pr if args.pr is not None else _pull_request_number()
    found = api.find_comment(number)
    if found is None:
        created = api.request("POST", f"/issues/{number}/comments", {"body": body})
        print(f"killmap: commented on pull request #{number}: {created.get('html_url', '')}")
    else:
        api.request("PATCH", f"/issues/comments/{found}", {"body": body})
        print(f"killmap: updated the comment on pull request #{number}")
    return EXIT_HELD


def build_body(report: Path, base: Path | None) -> str:
    from killmap.report import diff_report
    from killmap.report.document import to_markdown

    head = diff_report.read_report(report)
    if head["schema"] != diff_report.GATE_SCHEMA:
        raise GateError("comment takes a gate report (killmap.json)", file=str(report), field="schema")
    diff = diff_report.compare(diff_report.read_report(base), head) if base is not None else None
    return diff_report.comment_body(diff, to_markdown(head, diff_report.room_for_report(diff)))


def _required(name: str, value: str | None) -> str:
    if not value:
        raise GateError("not set, and the comment needs it", field=name)
    return value


def _pull_request_number() -> int:
    path = os.environ.get("GITHUB_EVENT_PATH")
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8")) if path else {}
        return int(event["pull_request"]["number"])
    except (OSError, ValueError, KeyError, TypeError):
        raise GateError("comment needs --pr or a pull_request event (GITHUB_EVENT_PATH)", field="--pr") from None


class GitHub:
    """The three calls the comment needs, on one repository."""

    def __init__(self, api: str, token: str, repo: str):
        self.base = f"{api.rstrip('/')}/repos/{repo}"
        self.token = token

    def request(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        # Here, not at the top: every command builds this module's parser, and urllib.request
        # (http.client, email) is 20 ms of a cached gate's 0.25 s.
        import urllib.error
        import urllib.request

        data = json.dumps(payload).encode("utf-8") if payload is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("Accept", "application/vnd.github+json")
        request.add_header("X-GitHub-Api-Version", "2022-11-28")
        request.add_header("User-Agent", "killmap")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise GateError(f"GitHub answered {exc.code} {exc.reason} to {method} {path}", field="comment") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise GateError(f"GitHub could not be reached for {method} {path}: {exc}", field="comment") from None

    def find_comment(self, number: int) -> int | None:
        """The id of the pull request's killmap comment (the one with the marker), if any."""
        from killmap.report.diff_report import MARKER

        page = 1
        while True:
            comments = self.request("GET", f"/issues/{number}/comments?per_page={PAGE}&page={page}") or []
            for comment in comments:
                if MARKER in (comment.get("body") or ""):
                    return int(comment["id"])
            if len(comments) < PAGE:
                return None
            page += 1

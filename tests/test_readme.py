"""The README's walkthrough, run as written: every ``http`` block of its Walkthrough section is
sent through the API with a real token, in order, and every ``json`` block that follows one is
checked against the answer (the fields it shows must be there, with those values). Edit the
README and this test runs the new text; change the API and the README must follow.

Also: the README starts with the two commands and stays short, and no page of the
documentation points outside the repository."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.conftest import Api

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
HEADER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*: ")
SAVED = {"organizations": "org", "ledgers": "ledger"}


def walkthrough_blocks() -> list[tuple[str, str]]:
    section = README.split("\n## Walkthrough\n", 1)[1].split("\n## ", 1)[0]
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(section)]


def contains(answer: Any, shown: Any) -> bool:
    """Whether ``answer`` holds everything ``shown`` shows (objects: those keys; arrays: the
    same length, item by item)."""
    if isinstance(shown, dict):
        return isinstance(answer, dict) and all(
            key in answer and contains(answer[key], value) for key, value in shown.items()
        )
    if isinstance(shown, list):
        return (
            isinstance(answer, list)
            and len(answer) == len(shown)
            and all(contains(a, s) for a, s in zip(answer, shown, strict=True))
        )
    return answer == shown


def test_the_walkthrough_runs_as_written(api: Api):
    ids: dict[str, str] = {}
    last: Any = None
    requests = 0
    for language, text in walkthrough_blocks():
        if language == "json":
            assert last is not None, "an answer block must follow a request"
            assert contains(last, json.loads(text)), (text, last)
            continue
        if language != "http":
            continue
        request_line, *rest = text.splitlines()
        headers = {}
        while rest and HEADER.match(rest[0]):
            name, _, value = rest.pop(0).partition(": ")
            headers["HTTP_" + name.upper().replace("-", "_")] = value
        body = "\n".join(rest).strip() + "\n"
        method, path = request_line.split()
        path = path.format(**ids)
        if method == "GET":
            response = api.get(path, **headers)
        elif path.endswith("/transaction-templates"):
            response = api.post(path, body, content_type="text/plain", **headers)
        else:
            response = api.post(path, json.loads(body), **headers)
        assert response.status_code in {200, 201}, (request_line, response.content)
        last = response.json() if "json" in response["Content-Type"] else response.content
        collection = path.rsplit("/", 1)[-1]
        if collection in SAVED:
            ids[SAVED[collection]] = last["id"]
        requests += 1
    assert requests >= 9 and set(ids) == set(SAVED.values())


def test_the_readme_starts_with_the_two_commands_and_stays_short():
    first_block = BLOCK.search(README)
    assert first_block is not None and README.index(first_block.group(0)) < 20
    commands = [line.split("#")[0].strip() for line in first_block.group(2).splitlines()]
    assert commands == ["make run", "make test"]
    lines = README.splitlines()
    assert len(lines) <= 180


def test_the_documentation_stands_alone():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        text = page.read_text()
        for phrase in ("../shared", "API-CONTRACT", "STYLE.md", "the contract", "seed/"):
            assert phrase not in text, f"{page.name} mentions {phrase!r}"
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
            if "://" not in target:
                assert (page.parent / target).exists(), f"{page.name} links {target}"

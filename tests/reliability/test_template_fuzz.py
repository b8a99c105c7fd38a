"""Template fuzzing through the HTTP API, with a real token.

Generated and mutated template texts (token soup, character and token mutations of valid
templates, random valid shapes, arbitrary bytes) are sent to the template endpoint: the answer
is 201, or 400 ``0017`` whose description starts with ``line L, column C:`` (a position inside
the text), or 400 ``0049`` for an empty one (``0047`` for bytes that are not UTF-8), never a
5xx. Every template accepted is then posted with random variables (right and wrong types,
missing and extra names, known and unknown aliases): the answer is one of the documented
refusals or a posting, never a 5xx, and ``check_ledger`` still passes at the end.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templates_dsl.compile import compile_template
from tests.reliability.conftest import scaled
from tests.reliability.test_posting_model import SHAPE, Shape
from tests.templates_dsl.test_fuzz import ALPHABET, TOKEN_RE, VOCABULARY
from tests.templates_dsl.test_parser import SAMPLES
from tests.transactions.conftest import FUND, HOLD, PAYMENT, Book
from transactions.integrity import ledger_check
from transactions.models import Transaction

# The parser's own fuzz alphabet, plus the NUL that PostgreSQL cannot store (found this way).
CHARACTERS = ALPHABET + "\x00"
WORDS = [*VOCABULARY, "\x00", '"a\x00b"']
POSITION = re.compile(r"^line (\d+), column (\d+): \S")
BRL_SAMPLES = [s.replace("USD", "BRL") for s in SAMPLES] + [FUND, PAYMENT, HOLD]
FIGURES: Counter[str] = Counter()
FUZZ = settings(
    max_examples=scaled(300, 5_000),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def mutate_characters(data: st.DataObject, text: str) -> str:
    for _ in range(data.draw(st.integers(1, 4))):
        index = data.draw(st.integers(0, len(text)))
        operation = data.draw(st.sampled_from(["delete", "insert", "swap"]))
        if operation == "delete":
            text = text[:index] + text[index + data.draw(st.integers(1, 8)) :]
        elif operation == "insert":
            text = text[:index] + data.draw(st.sampled_from(CHARACTERS)) + text[index:]
        elif len(text) > 1:
            other = data.draw(st.integers(0, len(text) - 1))
            chars = list(text)
            i, j = sorted((min(index, len(text) - 1), other))
            chars[i], chars[j] = chars[j], chars[i]
            text = "".join(chars)
    return text


def mutate_tokens(data: st.DataObject, text: str) -> str:
    tokens = TOKEN_RE.findall(text)
    for _ in range(data.draw(st.integers(1, 3))):
        if not tokens:
            break
        index = data.draw(st.integers(0, len(tokens) - 1))
        operation = data.draw(st.sampled_from(["delete", "duplicate", "swap", "replace"]))
        if operation == "delete":
            del tokens[index]
        elif operation == "duplicate":
            tokens.insert(index, tokens[index])
        elif operation == "swap":
            other = data.draw(st.integers(0, len(tokens) - 1))
            tokens[index], tokens[other] = tokens[other], tokens[index]
        else:
            tokens[index] = " " + data.draw(st.sampled_from(WORDS)) + " "
    return "".join(tokens)


@st.composite
def template_texts(draw: Any) -> str:
    kind = draw(st.sampled_from(["soup", "characters", "tokens", "shape", "sample", "text"]))
    FIGURES[f"generated {kind}"] += 1
    if kind == "soup":
        return " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=40)))
    if kind == "text":
        return draw(st.text(max_size=120))
    if kind == "shape":
        shape = Shape(
            draw(st.from_regex(r"[A-Z][A-Z0-9_]{0,8}", fullmatch=True)),
            **{name: draw(strategy) for name, strategy in SHAPE.items()},
            pending=draw(st.booleans()),
        )
        if not shape.tos and shape.remaining is None:
            return shape.text().replace("(distribute  )", "(distribute)")
        return shape.text()
    sample = draw(st.sampled_from(BRL_SAMPLES))
    if kind == "sample":
        return sample
    data = draw(st.data())
    return mutate_characters(data, sample) if kind == "characters" else mutate_tokens(data, sample)


def assert_template_answer(response: Any, body: bytes) -> None:
    status = response.status_code
    assert status < 500, (status, response.content)
    if status in (200, 201):
        FIGURES["template accepted"] += 1
        return
    error = response.json()
    assert set(error) <= {"code", "title", "description", "fields"}, error
    if status == 409:
        assert error["code"] == "0027", error
        FIGURES["template 409 0027"] += 1
        return
    assert status == 400, (status, error)
    FIGURES[f"template 400 {error['code']}"] += 1
    if error["code"] == "0017":
        match = POSITION.match(error["description"])
        assert match, error
        line, column = int(match.group(1)), int(match.group(2))
        text = body.decode("utf-8")
        lines = text.split("\n")
        assert 1 <= line <= len(lines) + 1, (line, len(lines))
        assert 1 <= column <= len(lines[line - 1] if line <= len(lines) else "") + 1, error
    elif error["code"] == "0049":
        assert not body.decode("utf-8").strip() or body.decode("utf-8").lstrip()[0] == ";"
    else:
        assert error["code"] == "0047", error
        with pytest.raises(UnicodeDecodeError):
            body.decode("utf-8")


AMOUNTS: list[Any] = [
    0,
    1,
    7,
    2_500,
    10**6,
    10**18,
    10**19,
    2**63,
    -1,
    -(10**6),
    1.5,
    True,
    None,
    "",
    "12",
    "0042",
    "12a",
    "-5",
    "\u0663",
    "9" * 25,
    [],
    {},
]
ALIASES: list[Any] = [
    "@alice",
    "@bob",
    "@fees/platform",
    "@external/BRL",
    "@nobody",
    "alice",
    "",
    "@",
    "@a b",
    7,
    None,
    ["@alice"],
    "@" + "x" * 101,
]


def random_variables(rng: random.Random, text: str) -> dict[str, Any]:
    """Variables drawn from ``rng``, so that what is drawn never depends on the answers."""
    compiled = compile_template(text)
    amounts, accounts = compiled.amount_variables(), compiled.account_variables()
    if "total" in amounts and rng.random() < 0.6:
        return consistent_variables(rng, amounts, accounts)
    variables: dict[str, Any] = {}
    same = rng.randint(1, 5_000) if rng.random() < 0.5 else None  # often adds up
    for name in amounts:
        if same is not None:
            variables[name] = same
        else:
            variables[name] = rng.choice(AMOUNTS) if rng.random() < 0.3 else rng.randint(0, 5_000)
    for name in accounts:
        variables[name] = rng.choice(ALIASES if rng.random() < 0.3 else ALIASES[:4])
    if variables and rng.random() < 0.15:
        variables.pop(rng.choice(sorted(variables)))
    if rng.random() < 0.15:
        variables[rng.choice(["extra", "$extra", "$" + next(iter(variables), "x")])] = 1
    return variables


def consistent_variables(
    rng: random.Random, amounts: tuple[str, ...], accounts: tuple[str, ...]
) -> dict[str, Any]:
    """Variables that add up for the shapes of ``Shape``: the sources split the total, the
    destinations take part of it, sources and destinations apart."""
    total = rng.randint(1, 5_000)
    sources = [n for n in amounts if n.startswith("a")]
    cut = rng.randint(0, total)
    split = [total - cut, cut] if len(sources) == 2 else [total]
    variables: dict[str, Any] = {"total": total, **dict(zip(sources, split, strict=True))}
    variables.update({n: rng.randint(0, total // 4) for n in amounts if n.startswith("b")})
    for name in accounts:
        pool = ["@alice", "@external/BRL"] if name.startswith("f") else ["@bob", "@fees/platform"]
        variables[name] = rng.choice(pool)
    return variables


POSTING_STATUSES = {
    201: None,
    400: {"0009", "0047", "0053"},
    404: {"0007"},
    422: {"0008", "0018", "0024", "0030", "0034", "0073", "0085", "0090"},
}


def post_randomly(book: Book, code: str, text: str, rng: random.Random) -> None:
    for _ in range(rng.randint(1, 3)):
        body: dict[str, Any] = {
            "transactionTypeCode": code,
            "variables": random_variables(rng, text),
        }
        if rng.random() < 0.5:
            body["pending"] = rng.random() < 0.5
        response = book.post(body)
        status = response.status_code
        assert status in POSTING_STATUSES, (status, response.content, body)
        FIGURES[f"posting {status}"] += 1
        if status != 201:
            error = response.json()
            assert error["code"] in POSTING_STATUSES[status], (error, body)
            FIGURES[f"posting {status} {error['code']}"] += 1


@pytest.fixture
def funded(book: Book) -> Book:
    book.fund("@alice", 10**9)
    return book


@pytest.mark.slow
def test_no_template_text_makes_the_api_fail(funded):
    book, url = funded, f"{funded.url}/transaction-templates"

    @FUZZ
    @given(text=template_texts(), seed=st.integers(0, 2**32))
    def run(text: str, seed: int) -> None:
        FIGURES["texts tried"] += 1
        body = text.encode("utf-8")
        response = book.api.post(url, body, content_type="text/plain")
        assert_template_answer(response, body)
        if response.status_code != 201:
            return
        code = compile_template(text).code
        assert book.api.get(f"{url}/{quote(code, safe='')}").content == body
        post_randomly(book, code, text, random.Random(seed))
        if code not in {"FUND", "PAYMENT_WITH_FEE", "PAYMENT_HELD"}:
            assert book.api.delete(f"{url}/{quote(code, safe='')}").status_code == 204

    run()
    report = ledger_check(Transaction.objects.first().ledger)
    assert report.ok, report.violations
    print("template fuzz figures:", dict(sorted(FIGURES.items())))


@pytest.mark.slow
def test_no_bytes_make_the_template_endpoints_fail(book):
    url = f"{book.url}/transaction-templates"

    @settings(FUZZ, max_examples=scaled(40, 400))
    @given(body=st.binary(max_size=200))
    def run(body: bytes) -> None:
        for method, target in (("post", url), ("put", f"{url}/FUND")):
            response = getattr(book.api.client, method)(
                target, body, content_type="application/octet-stream"
            )
            assert_template_answer(response, body)
            if response.status_code == 201:
                book.api.delete(f"{url}/{compile_template(body.decode()).code}")

    run()


@pytest.mark.parametrize("code", ["A/B", "PAY/IN/BRL", "v1.2", "A-B"])
def test_a_template_whose_code_holds_a_slash_or_a_dot_stays_reachable(book, code):
    """Found by the fuzzing: codes may hold "/", which the item routes used to refuse, so such
    a template could be created but never read, replaced or deleted."""
    url = f"{book.url}/transaction-templates"
    text = FUND.replace("(code FUND)", f"(code {code})")
    assert book.api.post(url, text, content_type="text/plain").status_code == 201
    for item in (f"{url}/{code}", f"{url}/{quote(code, safe='')}"):
        assert book.api.get(item).content.decode() == text
    assert book.api.get(f"{book.url}/transaction-types/{code}").content.decode() == text
    changed = text.replace("Deposit", "Changed")
    assert book.api.put(f"{url}/{code}", changed, content_type="text/plain").status_code == 200
    assert book.api.delete(f"{url}/{code}").status_code == 204
    assert book.api.get(f"{url}/{code}").status_code == 404

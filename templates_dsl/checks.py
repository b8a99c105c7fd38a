"""Static checks of a parsed template, run when a template is saved."""

from __future__ import annotations

import re
from typing import NamedTuple

from organizations.models import Account
from templates_dsl import ast, limits
from templates_dsl.errors import TemplateError
from templates_dsl.lexer import VARIABLE_RE

ASSET_RE = re.compile(r"[A-Z0-9]+")
MAX_SCALE = 18
MAX_METADATA_KEY_LENGTH = 100
MAX_METADATA_VALUE_LENGTH = 2000
MAX_SOURCE_LENGTH = 256  # a rate's source (``instruments.models.Rate.source``)
CONVERSION_PREFIX = Account.CONVERSION_PREFIX

Problem = tuple[ast.Span, str]


def check_template(t: ast.Template) -> None:
    """Raise ``TemplateError`` at the first offending node, in text order; return when valid."""
    problems = [
        *_size_problems(t),
        *_metadata_problems(t),
        *_send_problems(t.send),
        *_convert_problems(t.convert, t.send),
        *_distribute_problems(t.distribute, t.send, t.convert),
        *_variable_problems(t),
        *_alias_problems(t),
    ]
    if problems:
        span, message = min(problems, key=lambda problem: problem[0])
        raise TemplateError.at(span, message)


def _size_problems(t: ast.Template) -> list[Problem]:
    """More legs or distinct variables than ``limits`` allow: at the first one past the limit."""
    problems: list[Problem] = []
    legs = t.legs()
    if len(legs) > limits.MAX_LEGS:
        span = sorted(leg.span for leg in legs)[limits.MAX_LEGS]
        problems.append(
            (
                span,
                f"more than {limits.MAX_LEGS} legs; expected at most "
                f"{limits.MAX_LEGS} legs (from and to) in one template",
            )
        )
    uses = [(term.span, term.variable) for amount in t.amounts() for term in amount.terms]
    uses += [(leg.account.span, leg.account.variable) for leg in legs]
    declared: dict[str, ast.Span] = {}
    for span, name in sorted((span, name) for span, name in uses if name is not None):
        declared.setdefault(name, span)
    if len(declared) > limits.MAX_VARIABLES:
        span = sorted(declared.values())[limits.MAX_VARIABLES]
        problems.append(
            (
                span,
                f"more than {limits.MAX_VARIABLES} variables; expected at most "
                f"{limits.MAX_VARIABLES} variables in one template",
            )
        )
    return problems


def _metadata_problems(t: ast.Template) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[str] = set()
    for index, (key, value) in enumerate(t.metadata):
        span = t.metadata_spans[index] if index < len(t.metadata_spans) else t.span
        if key in seen:
            problems.append((span, f"duplicate metadata key '{key}'; expected each key once"))
        seen.add(key)
        if len(key) > MAX_METADATA_KEY_LENGTH:
            problems.append(
                (span, f"metadata key longer than {MAX_METADATA_KEY_LENGTH} characters")
            )
        if isinstance(value, str) and len(value) > MAX_METADATA_VALUE_LENGTH:
            problems.append(
                (span, f"metadata value longer than {MAX_METADATA_VALUE_LENGTH} characters")
            )
    return problems


class Expected(NamedTuple):
    """What a from or to must name: the send's asset and scale, or the converted ones."""

    asset: str
    scale: int
    what: str  # "send" or "converted", for the message


def _amount_problems(amount: ast.Amount, expected: Expected | None) -> list[Problem]:
    problems: list[Problem] = []
    for term in amount.terms:
        if term.literal is not None and not 0 <= term.literal <= ast.MAX_AMOUNT:
            problems.append((term.span, f"amount {term.literal}; expected 0 to {ast.MAX_AMOUNT}"))
    if expected is None:
        problems += _scale_problems(amount.scale, amount.scale_span)
    elif amount.scale != expected.scale:
        problems.append(
            (
                amount.scale_span,
                f"scale {amount.scale}; expected the {expected.what} scale {expected.scale}",
            )
        )
    return problems


def _scale_problems(scale: int, span: ast.Span) -> list[Problem]:
    if not 0 <= scale <= MAX_SCALE:
        return [(span, f"scale {scale}; expected a scale from 0 to 18")]
    return []


def _asset_problems(asset: str | None, span: ast.Span, expected: Expected) -> list[Problem]:
    if asset != expected.asset:
        return [(span, f"asset '{asset}'; expected the {expected.what} asset {expected.asset}")]
    return []


def _code_problems(asset: str, span: ast.Span) -> list[Problem]:
    if not ASSET_RE.fullmatch(asset):
        return [(span, f"asset '{asset}'; expected an asset code of upper-case letters and digits")]
    return []


def _send_problems(send: ast.Send) -> list[Problem]:
    problems = _amount_problems(send.amount, None)
    problems += _code_problems(send.asset, send.asset_span)
    if not send.sources:
        problems.append((send.span, "(source) holds no (from ...); expected at least one"))
    expected = Expected(send.asset, send.amount.scale, "send")
    for source in send.sources:
        problems += _asset_problems(source.asset, source.asset_span, expected)
        problems += _amount_problems(source.amount, expected)
    return problems


def _convert_problems(convert: ast.Convert | None, send: ast.Send) -> list[Problem]:
    if convert is None:
        return []
    problems = _code_problems(convert.asset, convert.asset_span)
    problems += _scale_problems(convert.scale, convert.scale_span)
    if convert.asset == send.asset:
        problems.append(
            (convert.asset_span, f"asset '{convert.asset}'; expected an asset other than the "
             f"send asset {send.asset}: (convert ...) delivers the send in another asset")
        )  # fmt: skip
    if convert.rate_source is not None and not 0 < len(convert.rate_source) <= MAX_SOURCE_LENGTH:
        problems.append(
            (convert.span, f"rate-source of 1 to {MAX_SOURCE_LENGTH} characters expected")
        )
    return problems


def _distribute_problems(
    distribute: ast.Distribute, send: ast.Send, convert: ast.Convert | None
) -> list[Problem]:
    problems: list[Problem] = []
    expected = (
        Expected(send.asset, send.amount.scale, "send")
        if convert is None
        else Expected(convert.asset, convert.scale, "converted")
    )
    if not distribute.tos and distribute.remaining is None:
        problems.append(
            (distribute.span, "(distribute) holds no (to ...); expected at least one destination")
        )
    for to in distribute.tos:
        if to.remaining or to.amount is None:
            problems.append(
                (
                    to.span,
                    "':remaining' outside (distribute :remaining ...); "
                    "expected ':amount ASSET AMOUNT'",
                )
            )
            continue
        problems += _asset_problems(to.asset, to.asset_span, expected)
        problems += _amount_problems(to.amount, expected)
    remaining = distribute.remaining
    if remaining is not None and (not remaining.remaining or remaining.amount is not None):
        problems.append(
            (
                remaining.span,
                "a (to ... :amount ...) inside (distribute :remaining ...); "
                "expected (to ACCOUNT :remaining ...)",
            )
        )
    return problems


def _descriptions(t: ast.Template) -> list[tuple[str, ast.Span]]:
    described: list[tuple[str | None, ast.Span]] = [(t.description, t.description_span)]
    described += [(node.description, node.description_span) for node in t.froms()]
    described += [(node.description, node.description_span) for node in t.destinations()]
    return [(text, span) for text, span in described if text is not None]


def _alias_problems(t: ast.Template) -> list[Problem]:
    """The ledger's conversion accounts move only through ``(convert ...)``."""
    return [
        (leg.account.span, f"{leg.account.alias}: the ledger's conversion accounts move only "
         "through (convert ...); expected another account")
        for leg in t.legs()
        if leg.account.alias is not None and leg.account.alias.startswith(CONVERSION_PREFIX)
    ]  # fmt: skip


def _variable_problems(t: ast.Template) -> list[Problem]:
    problems: list[Problem] = []
    amounts = t.amount_variables()
    accounts = t.account_variables()
    amount_names = set(amounts)
    for node in t.legs():
        name = node.account.variable
        if name is not None and name in amount_names:
            problems.append(
                (
                    node.account.span,
                    f"${name} is used both as an amount and as an account; "
                    "expected a separate variable for each",
                )
            )
    declared = set(amounts) | set(accounts)
    listing = ", ".join(f"${name}" for name in (*amounts, *accounts))
    for text, span in _descriptions(t):
        for match in VARIABLE_RE.finditer(text):
            if match.group()[1:] not in declared:
                expected = (
                    f"one of {listing}"
                    if listing
                    else "a declared variable, and this template declares none"
                )
                problems.append(
                    (
                        span,
                        f"undeclared variable {match.group()} in description; expected {expected}",
                    )
                )
    return problems

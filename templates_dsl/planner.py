"""Evaluate a checked template with a request's variables into the legs of a posting."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ledgerproject.amounts import format_amount
from ledgerproject.errors import ErrorCode, LedgerError
from organizations.models import Account
from templates_dsl import ast, limits
from templates_dsl.lexer import ALIAS_RE, VARIABLE_RE

MAX_VARIABLE_AMOUNT = ast.MAX_AMOUNT

Direction = Literal["DEBIT", "CREDIT"]


@dataclass(frozen=True)
class Leg:
    """One operation to write: an account, its side, and an integer amount in an asset at a
    scale (the send's, or for the destinations of a conversion the converted ones)."""

    alias: str
    direction: Direction
    amount: int
    description: str
    chart_of_accounts: str
    asset: str
    scale: int


class Rate(Protocol):
    """The rate a converting template's send is delivered at (``instruments.conversion``)."""

    def convert(self, amount: int, scale: int, to_scale: int) -> int: ...

    def as_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class PostingPlan:
    """What a template and its variables post: debits first, then credits, zero legs dropped."""

    code: str
    asset: str
    scale: int
    total: int
    description: str | None
    pending: bool
    metadata: dict[str, ast.MetadataValue]
    group_name: str
    legs: tuple[Leg, ...]
    hold_duration: int | None = None  # seconds; a pending posting's default expiry
    # A converting template's record of its conversion: the rate, and the amounts sent and
    # delivered (``Transaction.conversion``).
    conversion: dict[str, Any] | None = None


def plan_posting(
    template: ast.Template, variables: Mapping[str, object], rate: Rate | None = None
) -> PostingPlan:
    """Raise ``LedgerError`` (0009, 0047, 0053, 0073, 0090) when the variables do not fit.
    A template that converts (``(convert ...)``) needs the ``rate`` its send is delivered at:
    the sources send the send amount S; the asset's conversion account receives S, the
    converted asset's conversion account sends D, S converted (rounded half to even), and the
    destinations share D as they would share S in a template that does not convert."""
    if len(variables) > limits.MAX_VARIABLES:
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            f"variables may hold at most {limits.MAX_VARIABLES} names; this request has "
            f"{len(variables)}.",
            fields={"variables": f"at most {limits.MAX_VARIABLES} names"},
        )
    values = _values(template, _by_name(variables))
    total = _evaluate(template.send.amount, values)
    if total == 0:
        raise LedgerError(ErrorCode.TRANSACTION_VALUE_MISMATCH, "Nothing to send: the amount is 0.")
    debits = [_evaluate(source.amount, values) for source in template.send.sources]
    if sum(debits) != total:
        raise LedgerError(
            ErrorCode.TRANSACTION_VALUE_MISMATCH,
            f"The sources add up to {sum(debits)} but the amount sent is {total}.",
        )
    delivered, conversion = _delivered(template, total, rate)
    credits = [
        _evaluate(to.amount, values) if to.amount is not None else 0
        for to in template.distribute.tos
    ]
    remainder = _remainder(template, delivered, sum(credits))

    substitute = _substitution(values, template)
    legs: list[Leg] = []
    pairs: list[tuple[ast.From | ast.To, Direction, int]] = [
        *(
            (source, "DEBIT", amount)
            for source, amount in zip(template.send.sources, debits, strict=True)
        ),
        *(
            (to, "CREDIT", amount)
            for to, amount in zip(template.distribute.tos, credits, strict=True)
        ),
    ]
    if template.distribute.remaining is not None:
        pairs.append((template.distribute.remaining, "CREDIT", remainder))
    sent = (template.send.asset, template.send.amount.scale)
    asset, scale = template.delivered()
    for node, direction, amount in pairs:
        if amount == 0:
            continue
        ref = node.account
        alias = ref.alias if ref.alias is not None else str(values[str(ref.variable)])
        legs.append(
            Leg(
                alias=alias,
                direction=direction,
                amount=amount,
                description=substitute(node.description or ""),
                chart_of_accounts=node.chart_of_accounts or "",
                asset=sent[0] if isinstance(node, ast.From) else asset,
                scale=sent[1] if isinstance(node, ast.From) else scale,
            )
        )
    if conversion is not None:
        legs = _with_conversion_legs(legs, sent, (asset, scale), total, delivered)
    _refuse_ambiguous(template, legs, values)
    description = template.description
    return PostingPlan(
        code=template.code,
        asset=template.send.asset,
        scale=template.send.amount.scale,
        total=total,
        description=substitute(description) if description is not None else None,
        pending=bool(template.pending),
        hold_duration=template.hold_duration,
        metadata=dict(template.metadata),
        group_name=template.group_name,
        legs=tuple(legs),
        conversion=conversion,
    )


def _delivered(
    template: ast.Template, total: int, rate: Rate | None
) -> tuple[int, dict[str, Any] | None]:
    """What the destinations share: the send amount, or it converted at ``rate``, with the
    record of the conversion."""
    convert = template.convert
    if convert is None:
        return total, None
    if rate is None:
        raise ValueError("a template that converts is planned with its rate")
    scale = template.send.amount.scale
    delivered = rate.convert(total, scale, convert.scale)
    if delivered == 0:
        raise LedgerError(
            ErrorCode.TRANSACTION_VALUE_MISMATCH,
            f"{format_amount(total, scale, template.send.asset)} converts to 0 "
            f"{convert.asset} at scale {convert.scale} at the rate: nothing to deliver.",
        )
    if delivered > ast.MAX_AMOUNT:
        raise LedgerError(
            ErrorCode.TRANSACTION_VALUE_MISMATCH,
            f"{format_amount(total, scale, template.send.asset)} converts to more than the "
            f"largest amount {ast.MAX_AMOUNT} at scale {convert.scale}.",
        )
    record = {
        "rate": rate.as_json(),
        "sent": {"assetCode": template.send.asset, "amount": total, "scale": scale},
        "delivered": {"assetCode": convert.asset, "amount": delivered, "scale": convert.scale},
    }
    return delivered, record


def _with_conversion_legs(
    legs: list[Leg],
    sent: tuple[str, int],
    delivered_in: tuple[str, int],
    total: int,
    delivered: int,
) -> list[Leg]:
    """Each asset balances on its own: the send's conversion account receives what the sources
    send, and the converted asset's conversion account sends what the destinations receive.
    Debits first, then credits, as in every plan. Both say what was converted into what."""
    said = (
        f"Conversion of {format_amount(total, sent[1], sent[0])} to "
        f"{format_amount(delivered, delivered_in[1], delivered_in[0])}"
    )
    received = Leg(
        alias=f"{Account.CONVERSION_PREFIX}{sent[0]}", direction="CREDIT", amount=total,
        description=said, chart_of_accounts="", asset=sent[0], scale=sent[1],
    )  # fmt: skip
    sent_out = Leg(
        alias=f"{Account.CONVERSION_PREFIX}{delivered_in[0]}", direction="DEBIT",
        amount=delivered, description=said, chart_of_accounts="", asset=delivered_in[0],
        scale=delivered_in[1],
    )  # fmt: skip
    debits = [leg for leg in legs if leg.direction == "DEBIT"]
    credits = [leg for leg in legs if leg.direction == "CREDIT"]
    return [*debits, sent_out, received, *credits]


def _by_name(variables: Mapping[str, object]) -> dict[str, object]:
    given: dict[str, object] = {}
    for key, value in variables.items():
        if not isinstance(key, str):
            raise LedgerError(
                ErrorCode.BAD_REQUEST,
                "Variable names must be strings.",
                fields={"variables": "variable names must be strings"},
            )
        name = key.removeprefix("$")
        if name in given:
            raise LedgerError(
                ErrorCode.BAD_REQUEST,
                f"The variable {name} is given twice, as {name} and as ${name}.",
                fields={f"variables.{name}": f"given both as {name} and as ${name}"},
            )
        given[name] = value
    return given


def _values(template: ast.Template, given: dict[str, object]) -> dict[str, int | str]:
    amounts = template.amount_variables()
    accounts = template.account_variables()
    needed = template.variables
    missing = [name for name in needed if name not in given]
    if missing:
        raise LedgerError(
            ErrorCode.MISSING_FIELDS,
            "Missing variables: " + ", ".join(missing) + ".",
            fields={f"variables.{name}": "required by the template" for name in missing},
        )
    unexpected = [name for name in given if name not in needed]
    if unexpected:
        raise LedgerError(
            ErrorCode.UNEXPECTED_FIELDS,
            "Variables the template does not use: " + ", ".join(unexpected) + ".",
            fields={f"variables.{name}": "not used by the template" for name in unexpected},
        )
    values: dict[str, int | str] = {}
    invalid: dict[str, str] = {}
    for name in amounts:
        amount = _amount_value(given[name])
        if isinstance(amount, int):
            values[name] = amount
        else:
            invalid[f"variables.{name}"] = amount
    for name in accounts:
        alias = given[name]
        if not (isinstance(alias, str) and ALIAS_RE.fullmatch(alias)):
            invalid[f"variables.{name}"] = "must be an account alias such as @alice"
        elif alias.startswith(Account.CONVERSION_PREFIX):
            invalid[f"variables.{name}"] = "a conversion account moves only through a conversion"
        else:
            values[name] = alias
    if invalid:
        names = ", ".join(key.removeprefix("variables.") for key in invalid)
        raise LedgerError(ErrorCode.BAD_REQUEST, f"Invalid variables: {names}.", fields=invalid)
    return values


def _amount_value(value: Any) -> int | str:
    """The amount, or why it is refused."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        if len(value.lstrip("0")) > len(str(MAX_VARIABLE_AMOUNT)):
            return f"must be at most {MAX_VARIABLE_AMOUNT}"
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return "must be a non-negative integer or a string of digits"
    if value < 0:
        return "must not be negative"
    if value > MAX_VARIABLE_AMOUNT:
        return f"must be at most {MAX_VARIABLE_AMOUNT}"
    return value


def _evaluate(amount: ast.Amount, values: Mapping[str, int | str]) -> int:
    result = 0
    for term in amount.terms:
        result += (
            int(values[term.variable]) if term.variable is not None else int(term.literal or 0)
        )
    if result > ast.MAX_AMOUNT:
        names = amount.variables()
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            f"An amount adds up to {result}, more than the largest amount {ast.MAX_AMOUNT}.",
            fields={f"variables.{name}": "makes an amount too large" for name in names} or None,
        )
    return result


def _remainder(template: ast.Template, total: int, credits: int) -> int:
    """What the remaining destination receives of ``total`` (the amount sent, or delivered)."""
    what = "the amount delivered" if template.convert is not None else "the amount sent"
    if credits > total:
        raise LedgerError(
            ErrorCode.TRANSACTION_VALUE_MISMATCH,
            f"The destinations add up to {credits}, more than {what}, {total}.",
        )
    remainder = total - credits
    if remainder > 0 and template.distribute.remaining is None:
        raise LedgerError(
            ErrorCode.TRANSACTION_VALUE_MISMATCH,
            f"The destinations add up to {credits} but {what} is {total}, and the "
            f"template has no (distribute :remaining ...) to receive the other {remainder}.",
        )
    return remainder


def _refuse_ambiguous(
    template: ast.Template, legs: list[Leg], values: Mapping[str, int | str]
) -> None:
    debited = {leg.alias for leg in legs if leg.direction == "DEBIT"}
    both = [leg.alias for leg in legs if leg.direction == "CREDIT" and leg.alias in debited]
    if not both:
        return
    alias = both[0]
    fields = {
        f"variables.{name}": f"{alias} is both a source and a destination"
        for name in template.account_variables()
        if values[name] == alias
    }
    raise LedgerError(
        ErrorCode.AMBIGUOUS_ACCOUNT,
        f"The account {alias} is both a source and a destination.",
        fields=fields or None,
    )


def _substitution(values: Mapping[str, int | str], template: ast.Template) -> Callable[[str], str]:
    """``$name`` in a description becomes the variable's value: an amount as money at the
    template's scale with its asset (``10000`` at scale 2 in BRL is ``100.00 BRL``: every
    amount of a template is at the send scale), an account as its alias. In a template that
    converts, an amount variable used only in the destinations' amounts reads in the converted
    asset and scale. The static checks made sure every ``$name`` there is a declared variable,
    so one pass of one pattern does it."""

    def text_of(match: re.Match[str]) -> str:
        name = match.group()[1:]
        value = values[name]
        if not isinstance(value, int):
            return value
        asset, scale = template.unit_of(name)
        return format_amount(value, scale, asset)

    def substitute(text: str) -> str:
        if "$" not in text:  # no name to replace (most texts): no pattern to run
            return text
        return VARIABLE_RE.sub(text_of, text)

    return substitute

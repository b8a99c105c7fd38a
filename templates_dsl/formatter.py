"""Canonical template text from an AST: fixed element order, two-space indentation."""

from __future__ import annotations

from templates_dsl import ast
from templates_dsl.lexer import NAME_RE
from templates_dsl.parser import metadata_value

_INDENT = "  "

Node = str | tuple[str, list["Node"]]


def format_template(t: ast.Template) -> str:
    """The canonical text of ``t``; ``parse(format_template(t)) == t``."""
    children: list[Node] = [f"(chart-of-accounts-group-name {t.group_name})"]
    if t.metadata:
        entries = " ".join(f"({key} {_metadata(value)})" for key, value in t.metadata)
        children.append(f"(metadata {entries})")
    children.append(f"(code {t.code})")
    if t.description is not None:
        children.append(f"(description {quote(t.description)})")
    if t.pending is not None:
        children.append(f"(pending {'true' if t.pending else 'false'})")
    if t.hold_duration is not None:
        children.append(f"(hold-duration {t.hold_duration})")
    children.append(_send(t.send))
    if t.convert is not None:
        children.append(_convert(t.convert))
    children.append(_distribute(t.distribute))
    return _render((f"(transaction-template {t.version}", children), 0) + "\n"


def quote(text: str) -> str:
    escaped = (
        text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    )
    return f'"{escaped}"'


def format_amount(amount: ast.Amount) -> str:
    terms = "+".join(
        f"${term.variable}" if term.variable is not None else str(term.literal)
        for term in amount.terms
    )
    return f"{terms}|{amount.scale}"


def _metadata(value: ast.MetadataValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if NAME_RE.fullmatch(value) and metadata_value(value) == value:
        return value
    return quote(value)


def _account(account: ast.AccountRef) -> str:
    return account.alias if account.alias is not None else f"${account.variable}"


def _options(node: ast.From | ast.To) -> list[Node]:
    options: list[Node] = []
    if node.description is not None:
        options.append(f"(description {quote(node.description)})")
    if node.chart_of_accounts is not None:
        options.append(f"(chart-of-accounts {node.chart_of_accounts})")
    return options


def _send(send: ast.Send) -> Node:
    froms: list[Node] = [
        (
            f"(from {_account(s.account)} :amount {s.asset} {format_amount(s.amount)}",
            _options(s),
        )
        for s in send.sources
    ]
    return (f"(send {send.asset} {format_amount(send.amount)}", [("(source", froms)])


def _convert(convert: ast.Convert) -> str:
    source = convert.rate_source
    if source is None:
        return f"(convert {convert.asset}|{convert.scale})"
    shown = source if NAME_RE.fullmatch(source) else quote(source)
    return f"(convert {convert.asset}|{convert.scale} (rate-source {shown}))"


def _to(to: ast.To) -> Node:
    if to.remaining or to.amount is None:
        head = f"(to {_account(to.account)} :remaining"
    else:
        head = f"(to {_account(to.account)} :amount {to.asset} {format_amount(to.amount)}"
    return (head, _options(to))


def _distribute(distribute: ast.Distribute) -> Node:
    children = [_to(to) for to in distribute.tos]
    if distribute.remaining is not None:
        children.append(("(distribute :remaining", [_to(distribute.remaining)]))
    return ("(distribute", children)


def _render(node: Node, depth: int) -> str:
    if isinstance(node, str):
        return _INDENT * depth + node
    head, children = node
    lines = [_INDENT * depth + head, *(_render(child, depth + 1) for child in children)]
    return "\n".join(lines) + ")"

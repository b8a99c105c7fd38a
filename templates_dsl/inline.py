"""Inline transactions: the posting's template comes with the request instead of being stored.

Two spellings, one tree. Template-language text goes through the parser and the static checks
(``compile_template``), so its errors name a line and a column. The JSON spelling maps one to
one onto the syntax tree (``ast.Template``): each object is a node, each key a field, nothing is
parsed from a string, and the same static checks run on the tree. Its errors name the JSON path
of the offending value (``$.send.source[0].amount.scale``): while building, every node gets a
span of its own (line 1, column = its number in document order), which the checks report as
usual and ``json_path_error`` turns back into the path.

The JSON shape (names of the template language in camelCase)::

    {"chartOfAccountsGroupName": NAME, "code": NAME?, "description": str?, "pending": bool?,
     "metadata": {NAME: str | int | bool}?,
     "send": {"asset": ASSET, "amount": AMOUNT, "source": [FROM, ...]},
     "convert": {"asset": ASSET, "scale": 0..18, "rateSource": str?}?,
     "distribute": {"to": [TO, ...], "remaining": REMAINING?}}
    AMOUNT    = {"terms": [{"variable": "amount"} | {"literal": 100}, ...], "scale": 0..18}
    ACCOUNT   = {"alias": "@alice"} | {"variable": "source"}
    FROM, TO  = {"account": ACCOUNT, "asset": ASSET, "amount": AMOUNT,
                 "description": str?, "chartOfAccounts": NAME?}
    REMAINING = {"account": ACCOUNT, "description": str?, "chartOfAccounts": NAME?}
"""

from __future__ import annotations

from typing import Any

from ledgerproject.errors import ErrorCode, LedgerError
from templates_dsl import ast, limits
from templates_dsl.checks import MAX_SCALE, check_template
from templates_dsl.compile import compile_template
from templates_dsl.errors import TemplateError
from templates_dsl.lexer import ALIAS_RE, NAME_RE, VARIABLE_RE
from templates_dsl.parser import MAX_METADATA_INTEGER_DIGITS

INLINE_CODE = "INLINE"
"""The code of a JSON template that names none (the grammar needs one; nothing stores it)."""


def template_from_text(text: str) -> ast.Template:
    """Template-language text, parsed and checked as a stored template's would be."""
    return compile_template(text)


def _problem(error: ErrorCode, path: str, message: str) -> LedgerError:
    return LedgerError(error, f"{path}: {message}", fields={path: message})


class _Builder:
    """Builds the tree from JSON, numbering the spans it hands out so that they lead back to
    the JSON path they came from."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.nodes = 0

    def span(self, path: str) -> ast.Span:
        self.nodes += 1
        if self.nodes > 20 * limits.MAX_LEGS:
            raise _problem(ErrorCode.BAD_REQUEST, path, "the transaction has too many parts")
        self.paths.append(path)
        return ast.Span(1, len(self.paths))

    def obj(self, value: Any, path: str, required: set[str], optional: set[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _problem(ErrorCode.BAD_REQUEST, path, "expected an object")
        missing = sorted(required - set(value))
        if missing:
            raise _problem(ErrorCode.MISSING_FIELDS, f"{path}.{missing[0]}", "required")
        unknown = sorted(set(value) - required - optional)
        if unknown:
            raise _problem(ErrorCode.UNEXPECTED_FIELDS, f"{path}.{unknown[0]}", "unexpected field")
        return value

    def text(self, value: Any, path: str, *, name: bool = False, null: bool = False) -> Any:
        if value is None and null:
            return None
        if not isinstance(value, str):
            raise _problem(ErrorCode.BAD_REQUEST, path, "expected a string")
        if name and NAME_RE.fullmatch(value) is None:
            raise _problem(ErrorCode.INVALID_SCRIPT, path, "expected a name of A-Z a-z 0-9 _ . - /")
        if len(value) > limits.MAX_TEMPLATE_BYTES:
            raise _problem(ErrorCode.BAD_REQUEST, path, "too long")
        return value

    def integer(self, value: Any, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _problem(ErrorCode.BAD_REQUEST, path, "expected an integer")
        return value

    def array(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            raise _problem(ErrorCode.BAD_REQUEST, path, "expected an array")
        if len(value) > limits.MAX_LEGS:
            raise _problem(ErrorCode.INVALID_SCRIPT, path, f"at most {limits.MAX_LEGS} items")
        return value

    def variable(self, value: Any, path: str) -> str:
        name = self.text(value, path)
        name = name if name.startswith("$") else f"${name}"
        if VARIABLE_RE.fullmatch(name) is None:
            raise _problem(ErrorCode.INVALID_SCRIPT, path, "expected a variable name")
        return name[1:]

    def amount(self, value: Any, path: str) -> ast.Amount:
        node = self.obj(value, path, {"terms", "scale"}, set())
        span = self.span(path)
        terms = []
        for index, item in enumerate(self.array(node["terms"], f"{path}.terms")):
            at = f"{path}.terms[{index}]"
            term = self.obj(item, at, set(), {"variable", "literal"})
            if len(term) != 1:
                raise _problem(ErrorCode.BAD_REQUEST, at, "expected one of variable, literal")
            if "variable" in term:
                name = self.variable(term["variable"], f"{at}.variable")
                terms.append(ast.Term(variable=name, span=self.span(f"{at}.variable")))
            else:
                literal = self.integer(term["literal"], f"{at}.literal")
                if not 0 <= literal <= ast.MAX_AMOUNT:
                    raise _problem(ErrorCode.BAD_REQUEST, f"{at}.literal", "out of range")
                terms.append(ast.Term(literal=literal, span=self.span(f"{at}.literal")))
        if not terms:
            raise _problem(ErrorCode.INVALID_SCRIPT, f"{path}.terms", "expected at least one term")
        scale = self.integer(node["scale"], f"{path}.scale")
        if not 0 <= scale <= MAX_SCALE:
            raise _problem(ErrorCode.INVALID_SCRIPT, f"{path}.scale", f"expected 0 to {MAX_SCALE}")
        return ast.Amount(
            terms=tuple(terms), scale=scale, span=span, scale_span=self.span(f"{path}.scale")
        )

    def account(self, value: Any, path: str) -> ast.AccountRef:
        node = self.obj(value, path, set(), {"alias", "variable"})
        if len(node) != 1:
            raise _problem(ErrorCode.BAD_REQUEST, path, "expected one of alias, variable")
        if "alias" in node:
            alias = self.text(node["alias"], f"{path}.alias")
            if ALIAS_RE.fullmatch(alias) is None:
                raise _problem(ErrorCode.INVALID_SCRIPT, f"{path}.alias", "expected @ and a name")
            return ast.AccountRef(alias=alias, span=self.span(f"{path}.alias"))
        name = self.variable(node["variable"], f"{path}.variable")
        return ast.AccountRef(variable=name, span=self.span(f"{path}.variable"))

    def leg(self, value: Any, path: str, *, remaining: bool = False) -> dict[str, Any]:
        required = {"account"} if remaining else {"account", "asset", "amount"}
        node = self.obj(value, path, required, {"description", "chartOfAccounts"})
        span = self.span(path)
        fields: dict[str, Any] = {"account": self.account(node["account"], f"{path}.account")}
        if not remaining:
            fields["asset"] = self.text(node["asset"], f"{path}.asset", name=True)
            fields["asset_span"] = self.span(f"{path}.asset")
            fields["amount"] = self.amount(node["amount"], f"{path}.amount")
        fields["description"] = self.text(node.get("description"), f"{path}.description", null=True)
        fields["description_span"] = self.span(f"{path}.description")
        fields["chart_of_accounts"] = self.text(
            node.get("chartOfAccounts"), f"{path}.chartOfAccounts", name=True, null=True
        )
        return {**fields, "span": span}

    def metadata(self, value: Any, path: str) -> tuple[tuple[tuple[str, Any], ...], list[Any]]:
        node = self.obj(value, path, set(), set(value) if isinstance(value, dict) else set())
        pairs, spans = [], []
        for key, item in node.items():
            at = f"{path}.{key}"
            self.text(key, at, name=True)
            if isinstance(item, int) and not isinstance(item, bool):
                if len(str(abs(item))) > MAX_METADATA_INTEGER_DIGITS:
                    raise _problem(ErrorCode.BAD_REQUEST, at, "integer too large")
            elif not isinstance(item, (str, bool)):
                raise _problem(ErrorCode.BAD_REQUEST, at, "expected a string, integer or boolean")
            pairs.append((key, item))
            spans.append(self.span(at))
        return tuple(pairs), spans

    def convert(self, value: Any) -> ast.Convert:
        node = self.obj(value, "$.convert", {"asset", "scale"}, {"rateSource"})
        span = self.span("$.convert")
        asset = self.text(node["asset"], "$.convert.asset", name=True)
        asset_span = self.span("$.convert.asset")
        return ast.Convert(
            asset=asset,
            scale=self.integer(node["scale"], "$.convert.scale"),
            rate_source=self.text(node.get("rateSource"), "$.convert.rateSource", null=True),
            span=span,
            asset_span=asset_span,
            scale_span=self.span("$.convert.scale"),
        )

    def template(self, doc: Any) -> ast.Template:
        optional = {"code", "description", "pending", "metadata", "convert"}
        top = self.obj(doc, "$", {"chartOfAccountsGroupName", "send", "distribute"}, optional)
        span = self.span("$")
        group = self.text(top["chartOfAccountsGroupName"], "$.chartOfAccountsGroupName", name=True)
        code = self.text(top.get("code", INLINE_CODE), "$.code", name=True)
        description = self.text(top.get("description"), "$.description", null=True)
        description_span = self.span("$.description")
        pending = top.get("pending")
        if pending is not None and not isinstance(pending, bool):
            raise _problem(ErrorCode.BAD_REQUEST, "$.pending", "expected true or false")
        metadata, metadata_spans = self.metadata(top.get("metadata", {}), "$.metadata")
        send_doc = self.obj(top["send"], "$.send", {"asset", "amount", "source"}, set())
        send_span = self.span("$.send")
        asset = self.text(send_doc["asset"], "$.send.asset", name=True)
        asset_span = self.span("$.send.asset")
        amount = self.amount(send_doc["amount"], "$.send.amount")
        sources = [
            ast.From(**self.leg(item, f"$.send.source[{i}]"))
            for i, item in enumerate(self.array(send_doc["source"], "$.send.source"))
        ]
        convert = self.convert(top["convert"]) if top.get("convert") is not None else None
        dist = self.obj(top["distribute"], "$.distribute", {"to"}, {"remaining"})
        dist_span = self.span("$.distribute")
        tos = [
            ast.To(**self.leg(item, f"$.distribute.to[{i}]"))
            for i, item in enumerate(self.array(dist["to"], "$.distribute.to"))
        ]
        remaining = None
        if dist.get("remaining") is not None:
            leg = self.leg(dist["remaining"], "$.distribute.remaining", remaining=True)
            remaining = ast.To(remaining=True, **leg)
        return ast.Template(
            group_name=group,
            code=code,
            description=description,
            pending=pending,
            metadata=metadata,
            send=ast.Send(
                asset=asset,
                amount=amount,
                sources=tuple(sources),
                span=send_span,
                asset_span=asset_span,
            ),
            distribute=ast.Distribute(tos=tuple(tos), remaining=remaining, span=dist_span),
            convert=convert,
            span=span,
            description_span=description_span,
            metadata_spans=tuple(metadata_spans),
        )


def template_from_json(doc: Any) -> ast.Template:
    """The tree a JSON transaction describes, checked like a stored template; refusals name
    the JSON path (0017 for what the checks refuse, 0009/0047/0053 for the JSON's shape)."""
    builder = _Builder()
    template = builder.template(doc)
    try:
        check_template(template)
    except TemplateError as error:
        index = error.column - 1
        path = builder.paths[index] if error.line == 1 and 0 <= index < len(builder.paths) else "$"
        raise _problem(ErrorCode.INVALID_SCRIPT, path, error.message) from None
    return template

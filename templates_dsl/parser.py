"""The SLY LALR(1) parser of the template notation: ``parse(text)`` gives an ``ast.Template``."""
# ruff: noqa: F811, F821

from __future__ import annotations

from typing import Any

from sly import Parser
from sly.lex import Token

from templates_dsl import ast, limits
from templates_dsl.errors import TemplateError, empty_template_error, position
from templates_dsl.lexer import Lexeme, TemplateLexer, tokenize

MAX_METADATA_INTEGER_DIGITS = 18

_KEYWORDS = {
    "TRANSACTION_TEMPLATE": "transaction-template",
    "GROUP_NAME": "chart-of-accounts-group-name",
    "METADATA": "metadata",
    "CODE": "code",
    "DESCRIPTION": "description",
    "PENDING": "pending",
    "HOLD_DURATION": "hold-duration",
    "SEND": "send",
    "CONVERT": "convert",
    "SOURCE": "source",
    "FROM": "from",
    "DISTRIBUTE": "distribute",
    "TO": "to",
    "CHART_OF_ACCOUNTS": "chart-of-accounts",
    "RATE_SOURCE": "rate-source",
}
_WORDS = {"NAME", "VERSION", *_KEYWORDS}
_NAMES = _WORDS | {"INTEGER", "TRUE", "FALSE"}
_DISPLAY = {
    "LPAREN": "'('",
    "RPAREN": "')'",
    "PLUS": "'+'",
    "PIPE": "'|'",
    "AMOUNT": "':amount'",
    "REMAINING": "':remaining'",
    "STRING": 'a quoted string such as "text"',
    "VARIABLE": "a variable such as $amount",
    "ALIAS": "an alias such as @alias",
    "INTEGER": "an integer",
    "VERSION": "the version marker v1",
    "TRUE": "true",
    "FALSE": "false",
    **{token: f"'{word}'" for token, word in _KEYWORDS.items()},
    "$end": "the end of the text",
}
_ORDER = list(_DISPLAY)

_ELEMENTS = {
    "group_name": ("(chart-of-accounts-group-name ...)", True),
    "metadata": ("(metadata ...)", False),
    "code": ("(code ...)", True),
    "description": ("(description ...)", False),
    "pending": ("(pending ...)", False),
    "hold_duration": ("(hold-duration ...)", False),
    "send": ("(send ...)", True),
    "convert": ("(convert ...)", False),
    "distribute": ("(distribute ...)", True),
}


def metadata_value(text: str) -> ast.MetadataValue:
    """The value a bare metadata word stands for: true/false, a canonical integer, else text."""
    if text == "true":
        return True
    if text == "false":
        return False
    if (
        text.isascii()
        and text.isdigit()
        and len(text) <= MAX_METADATA_INTEGER_DIGITS
        and (text == "0" or not text.startswith("0"))
    ):
        return int(text)
    return text


def _integer(lexeme: Lexeme, what: str) -> int:
    digits = lexeme.text.lstrip("0")
    if len(digits) > len(str(ast.MAX_AMOUNT)) or int(lexeme.text) > ast.MAX_AMOUNT:
        raise TemplateError.at(
            lexeme.span, f"{what} '{lexeme.text[:30]}' is larger than {ast.MAX_AMOUNT}"
        )
    return int(lexeme.text)


def _describe_expected(expected: set[str], previous: str) -> str:
    if "NAME" in expected:
        rest = expected - _NAMES
        if "STRING" in rest:
            return "a metadata value: a name, a quoted string, an integer, true or false"
        return _join(["a name", *(_DISPLAY[t] for t in sorted(rest, key=_ORDER.index))])
    if expected == {"VARIABLE", "INTEGER"}:
        if previous == "PLUS":
            return "a variable or an integer after '+'"
        return "an amount such as $amount|2"
    if expected == {"PLUS", "PIPE"}:
        return "'+' or '|' and a scale, as in $amount|2"
    if expected == {"INTEGER"} and previous == "PIPE":
        return "a scale such as 2"
    if expected == {"ALIAS", "VARIABLE"}:
        return "an account such as @alias or $variable"
    return _join([_DISPLAY.get(t, t) for t in sorted(expected, key=_sort_key)])


def _sort_key(token: str) -> int:
    return _ORDER.index(token) if token in _DISPLAY else len(_ORDER)


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " or " + parts[-1]


class _Taken(Exception):
    """A probe's token was taken (shifted, or reduced by): the parser has an action for it."""


class _Refused(Exception):
    def __init__(self, at_start: bool) -> None:
        self.at_start = at_start


class _Unread:
    """The value of a probe's token: reading it means the parser has taken the token."""

    def __getattr__(self, name: str) -> Any:
        raise _Taken


class TemplateParser(Parser):
    tokens = TemplateLexer.tokens
    start = "template"
    track_positions = False

    def __init__(self, text: str, resume: tuple[list[Any], list[Any]] | None = None) -> None:
        self.text = text
        # A probe (``_takes``) starts from a saved parser state instead of the first one.
        self.resume = resume

    def restart(self) -> None:
        super().restart()
        if self.resume is not None:
            states, symbols = self.resume
            self.statestack[:] = states
            self.symstack[:] = symbols
            self.state = states[-1]

    def error(self, token: Any) -> None:
        if self.resume is not None:
            raise _Refused(at_start=self.statestack == self.resume[0])
        expected = self.expected()
        previous = self.symstack[-1].type if self.symstack else "$end"
        wanted = _describe_expected(expected, previous)
        if token is None:
            span = position(self.text, len(self.text))
            raise TemplateError.at(span, f"unexpected end of the text; expected {wanted}")
        lexeme: Lexeme = token.value
        shown = self.text[token.index : token.end]
        if len(shown) > 40:
            shown = shown[:37] + "..."
        raise TemplateError.at(lexeme.span, f"unexpected '{shown}'; expected {wanted}")

    def expected(self) -> set[str]:
        """The tokens the parser has an action for where it stopped. SLY does not say, so each
        token is tried from a copy of the parser's stacks (a few steps each, on the error path
        only)."""
        saved = (list(self.statestack), list(self.symstack))
        return {name for name in (*TemplateLexer.tokens, "$end") if self._takes(saved, name)}

    def _takes(self, saved: tuple[list[Any], list[Any]], name: str) -> bool:
        probe = TemplateParser(self.text, resume=saved)
        token = Token()
        token.type, token.value = name, _Unread()

        def tokens() -> Any:
            yield token
            raise _Taken  # the parser asked for the token after it

        try:
            probe.parse(iter(()) if name == "$end" else tokens())
        except _Refused as refused:
            return not refused.at_start
        except (_Taken, TemplateError):  # a rule's own check: the parser reduced by it
            return True
        return True  # accepted: the end of the text

    @_("LPAREN TRANSACTION_TEMPLATE VERSION elements RPAREN")
    def template(self, p: Any) -> ast.Template:
        elements: dict[str, tuple[ast.Span, Any]] = p.elements
        for key, (label, required) in _ELEMENTS.items():
            if required and key not in elements:
                raise TemplateError.at(
                    p.RPAREN.span, f"missing {label}; expected it before this ')'"
                )
        description = elements.get("description")
        metadata = elements.get("metadata")
        pending = elements.get("pending")
        hold = elements.get("hold_duration")
        convert = elements.get("convert")
        return ast.Template(
            version="v1",
            group_name=elements["group_name"][1],
            code=elements["code"][1],
            description=description[1] if description else None,
            pending=pending[1] if pending else None,
            hold_duration=hold[1] if hold else None,
            metadata=tuple((key, value) for key, value, _ in metadata[1]) if metadata else (),
            metadata_spans=tuple(span for _, _, span in metadata[1]) if metadata else (),
            send=elements["send"][1],
            distribute=elements["distribute"][1],
            convert=convert[1] if convert else None,
            span=p.LPAREN.span,
            description_span=description[0] if description else ast.NO_SPAN,
        )

    @_("")
    def elements(self, p: Any) -> dict[str, tuple[ast.Span, Any]]:
        return {}

    @_("elements element")
    def elements(self, p: Any) -> dict[str, tuple[ast.Span, Any]]:
        key, span, value = p.element
        if key in p.elements:
            label = _ELEMENTS[key][0]
            raise TemplateError.at(span, f"duplicate {label}; expected at most one")
        p.elements[key] = (span, value)
        return p.elements

    @_("LPAREN GROUP_NAME name RPAREN")
    def element(self, p: Any) -> tuple[str, ast.Span, Any]:
        return "group_name", p.LPAREN.span, p.name.text

    @_("LPAREN METADATA entries RPAREN")
    def element(self, p: Any) -> tuple[str, ast.Span, Any]:
        return "metadata", p.LPAREN.span, tuple(p.entries)

    @_("LPAREN CODE name RPAREN")
    def element(self, p: Any) -> tuple[str, ast.Span, Any]:
        return "code", p.LPAREN.span, p.name.text

    @_("description")
    def element(self, p: Any) -> tuple[str, ast.Span, Any]:
        return "description", p.description.span, p.description.text

    @_("LPAREN PENDING TRUE RPAREN", "LPAREN PENDING FALSE RPAREN")
    def element(self, p: Any) -> tuple[str, ast.Span, Any]:
        return "pending", p.LPAREN.span, p[2].text == "true"

    @_("LPAREN HOLD_DURATION INTEGER RPAREN")
    def element(self, p: Any) -> tuple[str, ast.Span, Any]:
        lexeme: Lexeme = p.INTEGER
        seconds = _integer(lexeme, "hold-duration")
        if not 1 <= seconds <= limits.MAX_HOLD_SECONDS:
            raise TemplateError.at(
                lexeme.span,
                f"hold-duration must be from 1 to {limits.MAX_HOLD_SECONDS} seconds (366 days)",
            )
        return "hold_duration", p.LPAREN.span, seconds

    @_("LPAREN SEND name amount LPAREN SOURCE froms RPAREN RPAREN")
    def element(self, p: Any) -> tuple[str, ast.Span, Any]:
        send = ast.Send(
            asset=p.name.text,
            amount=p.amount,
            sources=tuple(p.froms),
            span=p.LPAREN0.span,
            asset_span=p.name.span,
        )
        return "send", p.LPAREN0.span, send

    @_("LPAREN CONVERT name PIPE INTEGER rate_source RPAREN")
    def element(self, p: Any) -> tuple[str, ast.Span, Any]:
        convert = ast.Convert(
            asset=p.name.text,
            scale=_integer(p.INTEGER, "scale"),
            rate_source=p.rate_source,
            span=p.LPAREN.span,
            asset_span=p.name.span,
            scale_span=p.INTEGER.span,
        )
        return "convert", p.LPAREN.span, convert

    @_("")
    def rate_source(self, p: Any) -> str | None:
        return None

    @_("LPAREN RATE_SOURCE name RPAREN", "LPAREN RATE_SOURCE STRING RPAREN")
    def rate_source(self, p: Any) -> str | None:
        return str(p[2].text)

    @_("LPAREN DISTRIBUTE destinations RPAREN")
    def element(self, p: Any) -> tuple[str, ast.Span, Any]:
        tos, remaining = p.destinations
        distribute = ast.Distribute(tos=tuple(tos), remaining=remaining, span=p.LPAREN.span)
        return "distribute", p.LPAREN.span, distribute

    @_("")
    def entries(self, p: Any) -> list[tuple[str, ast.MetadataValue, ast.Span]]:
        return []

    @_("entries LPAREN name value RPAREN")
    def entries(self, p: Any) -> list[tuple[str, ast.MetadataValue, ast.Span]]:
        p.entries.append((p.name.text, p.value, p.LPAREN.span))
        return p.entries

    @_("word", "INTEGER", "TRUE", "FALSE")
    def value(self, p: Any) -> ast.MetadataValue:
        return metadata_value(p[0].text)

    @_("STRING")
    def value(self, p: Any) -> ast.MetadataValue:
        return p.STRING.text

    @_("")
    def froms(self, p: Any) -> list[ast.From]:
        return []

    @_("froms LPAREN FROM account AMOUNT name amount options RPAREN")
    def froms(self, p: Any) -> list[ast.From]:
        description = p.options.get("description")
        chart = p.options.get("chart")
        p.froms.append(
            ast.From(
                account=p.account,
                asset=p.name.text,
                amount=p.amount,
                description=description.text if description else None,
                chart_of_accounts=chart.text if chart else None,
                span=p.LPAREN.span,
                asset_span=p.name.span,
                description_span=description.span if description else ast.NO_SPAN,
            )
        )
        return p.froms

    @_("")
    def destinations(self, p: Any) -> tuple[list[ast.To], ast.To | None]:
        return [], None

    @_("destinations to")
    def destinations(self, p: Any) -> tuple[list[ast.To], ast.To | None]:
        p.destinations[0].append(p.to)
        return p.destinations

    @_("destinations LPAREN DISTRIBUTE REMAINING remaining_tos RPAREN")
    def destinations(self, p: Any) -> tuple[list[ast.To], ast.To | None]:
        tos, remaining = p.destinations
        if remaining is not None:
            raise TemplateError.at(
                p.LPAREN.span, "duplicate (distribute :remaining ...); expected at most one"
            )
        return tos, p.remaining_tos

    @_("to")
    def remaining_tos(self, p: Any) -> ast.To:
        if not p.to.remaining:
            raise TemplateError.at(
                p.to.span,
                "a (to ... :amount ...) inside (distribute :remaining ...); "
                "expected (to ACCOUNT :remaining ...)",
            )
        return p.to

    @_("remaining_tos to")
    def remaining_tos(self, p: Any) -> ast.To:
        raise TemplateError.at(
            p.to.span,
            "a second (to ...) inside (distribute :remaining ...); expected exactly one",
        )

    @_("LPAREN TO account AMOUNT name amount options RPAREN")
    def to(self, p: Any) -> ast.To:
        return self._to(p, asset=p.name, amount=p.amount)

    @_("LPAREN TO account REMAINING options RPAREN")
    def to(self, p: Any) -> ast.To:
        return self._to(p, asset=None, amount=None)

    def _to(self, p: Any, *, asset: Lexeme | None, amount: ast.Amount | None) -> ast.To:
        description = p.options.get("description")
        chart = p.options.get("chart")
        return ast.To(
            account=p.account,
            asset=asset.text if asset else None,
            amount=amount,
            remaining=amount is None,
            description=description.text if description else None,
            chart_of_accounts=chart.text if chart else None,
            span=p.LPAREN.span,
            asset_span=asset.span if asset else ast.NO_SPAN,
            description_span=description.span if description else ast.NO_SPAN,
        )

    @_("")
    def options(self, p: Any) -> dict[str, Lexeme]:
        return {}

    @_("options description")
    def options(self, p: Any) -> dict[str, Lexeme]:
        return self._option(p.options, "description", p.description)

    @_("options LPAREN CHART_OF_ACCOUNTS name RPAREN")
    def options(self, p: Any) -> dict[str, Lexeme]:
        return self._option(p.options, "chart", Lexeme(p.name.text, p.LPAREN.span))

    def _option(self, options: dict[str, Lexeme], key: str, value: Lexeme) -> dict[str, Lexeme]:
        if key in options:
            label = "(description ...)" if key == "description" else "(chart-of-accounts ...)"
            raise TemplateError.at(value.span, f"duplicate {label}; expected at most one")
        options[key] = value
        return options

    @_("LPAREN DESCRIPTION STRING RPAREN")
    def description(self, p: Any) -> Lexeme:
        return Lexeme(p.STRING.text, p.LPAREN.span)

    @_("ALIAS")
    def account(self, p: Any) -> ast.AccountRef:
        return ast.AccountRef(alias=p.ALIAS.text, span=p.ALIAS.span)

    @_("VARIABLE")
    def account(self, p: Any) -> ast.AccountRef:
        return ast.AccountRef(variable=p.VARIABLE.text[1:], span=p.VARIABLE.span)

    @_("terms PIPE INTEGER")
    def amount(self, p: Any) -> ast.Amount:
        terms: list[ast.Term] = p.terms
        return ast.Amount(
            terms=tuple(terms),
            scale=_integer(p.INTEGER, "scale"),
            span=terms[0].span,
            scale_span=p.INTEGER.span,
        )

    @_("term")
    def terms(self, p: Any) -> list[ast.Term]:
        return [p.term]

    @_("terms PLUS term")
    def terms(self, p: Any) -> list[ast.Term]:
        p.terms.append(p.term)
        return p.terms

    @_("VARIABLE")
    def term(self, p: Any) -> ast.Term:
        return ast.Term(variable=p.VARIABLE.text[1:], span=p.VARIABLE.span)

    @_("INTEGER")
    def term(self, p: Any) -> ast.Term:
        return ast.Term(literal=_integer(p.INTEGER, "amount"), span=p.INTEGER.span)

    @_("word", "INTEGER", "TRUE", "FALSE")
    def name(self, p: Any) -> Lexeme:
        return p[0]

    @_(*sorted(_WORDS))
    def word(self, p: Any) -> Lexeme:
        return p[0]


def parse(text: str) -> ast.Template:
    """Parse template text; ``TemplateError`` (0017) when it does not parse, 0049 when empty."""
    tokens = tokenize(text)
    if not tokens:
        raise empty_template_error()
    template: ast.Template = TemplateParser(text).parse(iter(tokens))
    return template

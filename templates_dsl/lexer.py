"""The SLY lexer of the template notation: tokens carrying their text and 1-based position."""
# ruff: noqa: F821

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sly import Lexer

from templates_dsl.ast import Span
from templates_dsl.errors import TemplateError, position

NAME_RE = re.compile(r"[A-Za-z0-9_.\-/]+")
VARIABLE_RE = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*")
ALIAS_RE = re.compile(r"@[A-Za-z0-9_\-/.]{1,100}")
MAX_ALIAS_LENGTH = 101

_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
_NAME_END = r"(?![A-Za-z0-9_.\-/])"


@dataclass(frozen=True, slots=True)
class Lexeme:
    """A token's value: the text it stands for (strings unescaped) and where it starts."""

    text: str
    span: Span


class TemplateLexer(Lexer):
    tokens = {
        LPAREN,
        RPAREN,
        PLUS,
        PIPE,
        AMOUNT,
        REMAINING,
        STRING,
        VARIABLE,
        ALIAS,
        NAME,
        INTEGER,
        VERSION,
        TRUE,
        FALSE,
        TRANSACTION_TEMPLATE,
        GROUP_NAME,
        METADATA,
        CODE,
        DESCRIPTION,
        PENDING,
        HOLD_DURATION,
        SEND,
        SOURCE,
        FROM,
        DISTRIBUTE,
        TO,
        CHART_OF_ACCOUNTS,
        CONVERT,
        RATE_SOURCE,
    }

    ignore = " \t\r"
    ignore_comment = r";[^\n]*"

    LPAREN = r"\("
    RPAREN = r"\)"
    PLUS = r"\+"
    PIPE = r"\|"
    AMOUNT = r":amount" + _NAME_END
    REMAINING = r":remaining" + _NAME_END
    VARIABLE = r"\$[A-Za-z_][A-Za-z0-9_]*"
    NAME = r"[A-Za-z0-9_.\-/]+"
    NAME["v1"] = VERSION
    NAME["V1"] = VERSION
    NAME["true"] = TRUE
    NAME["false"] = FALSE
    NAME["transaction-template"] = TRANSACTION_TEMPLATE
    NAME["chart-of-accounts-group-name"] = GROUP_NAME
    NAME["metadata"] = METADATA
    NAME["code"] = CODE
    NAME["description"] = DESCRIPTION
    NAME["pending"] = PENDING
    NAME["hold-duration"] = HOLD_DURATION
    NAME["send"] = SEND
    NAME["source"] = SOURCE
    NAME["from"] = FROM
    NAME["distribute"] = DISTRIBUTE
    NAME["to"] = TO
    NAME["chart-of-accounts"] = CHART_OF_ACCOUNTS
    NAME["convert"] = CONVERT
    NAME["rate-source"] = RATE_SOURCE

    def __init__(self) -> None:
        self.text = ""
        self.lineno = 1

    @_(r"\n+")
    def ignore_newline(self, t: Any) -> None:
        self.lineno += len(t.value)

    @_(r'"(?:[^"\\\n]|\\.)*"')
    def STRING(self, t: Any) -> Any:
        t.value = self._unescape(t.value, t.index)
        return t

    @_(r"@[A-Za-z0-9_\-/.]+")
    def ALIAS(self, t: Any) -> Any:
        if len(t.value) > MAX_ALIAS_LENGTH:
            raise self._error(t.index, f"alias '{t.value[:20]}...' is longer than 100 characters")
        return t

    def NAME(self, t: Any) -> Any:
        if t.value.isdigit():
            t.type = "INTEGER"
        return t

    def error(self, t: Any) -> None:
        char = t.value[0]
        if char == '"':
            raise self._error(
                t.index, "unterminated string; expected a closing '\"' on the same line"
            )
        if char == ":":
            raise self._error(t.index, "unexpected ':'; expected ':amount' or ':remaining'")
        if char == "$":
            raise self._error(t.index, "unexpected '$'; expected a variable such as $amount")
        if char == "@":
            raise self._error(t.index, "unexpected '@'; expected an alias such as @alias")
        raise self._error(t.index, f"unexpected character {char!r}")

    def _unescape(self, raw: str, start: int) -> str:
        out: list[str] = []
        i = 1
        while i < len(raw) - 1:
            char = raw[i]
            if char == "\\":
                escaped = raw[i + 1]
                if escaped not in _ESCAPES:
                    raise self._error(
                        start + i,
                        f"unknown escape '\\{escaped}'; expected \\\", \\\\, \\n or \\t",
                    )
                out.append(_ESCAPES[escaped])
                i += 2
            else:
                out.append(char)
                i += 1
        return "".join(out)

    def _error(self, index: int, message: str) -> TemplateError:
        return TemplateError.at(position(self.text, index, self.lineno), message)


def tokenize(text: str) -> list[Any]:
    """All tokens of ``text``, each ``value`` a :class:`Lexeme`; a fresh lexer every call."""
    nul = text.find("\x00")
    if nul >= 0:  # nothing can store it (PostgreSQL text refuses NUL); say where it is
        raise TemplateError.at(position(text, nul), "unexpected NUL character")
    lexer = TemplateLexer()
    tokens = []
    line_start = previous = -1  # the newline before the current line; each gap scanned once
    for token in lexer.tokenize(text):
        newline = text.rfind("\n", previous + 1, token.index)
        if newline >= 0:
            line_start = newline
        previous = token.index
        span = Span(token.lineno, token.index - line_start)
        token.value = Lexeme(token.value, span)
        tokens.append(token)
    return tokens

"""The error raised for template text that does not parse or fails the static checks."""

from __future__ import annotations

from ledgerproject.errors import ErrorCode, LedgerError
from templates_dsl.ast import Span


class TemplateError(LedgerError):
    """400 ``0017``, described as ``line L, column C: message``."""

    def __init__(self, line: int, column: int, message: str) -> None:
        self.line = line
        self.column = column
        self.message = message
        super().__init__(ErrorCode.INVALID_SCRIPT, f"line {line}, column {column}: {message}")

    @classmethod
    def at(cls, span: Span, message: str) -> TemplateError:
        return cls(span.line, span.column, message)


def empty_template_error() -> LedgerError:
    return LedgerError(ErrorCode.EMPTY_DSL, "The template text is empty.")


def position(text: str, index: int, line: int | None = None) -> Span:
    """The 1-based line and column of ``text[index]``; the column counts from the last newline."""
    if line is None:
        line = text.count("\n", 0, index) + 1
    return Span(line, index - text.rfind("\n", 0, index))

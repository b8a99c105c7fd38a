"""The transactions' small book, for the event tests."""

from tests.transactions.conftest import Book, book  # noqa: F401 - the fixture, re-exported

__all__ = ["Book"]

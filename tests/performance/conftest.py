"""The posting book of tests/transactions, re-exported for the performance tests."""

from tests.transactions.conftest import Book, book  # noqa: F401 - the fixture, re-exported

__all__ = ["Book"]

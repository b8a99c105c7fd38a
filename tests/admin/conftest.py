"""The posting tests' small book (BRL, @alice, @bob, @fees/platform, FUND, PAYMENT_WITH_FEE,
PAYMENT_HELD), for the back-office tests."""

from tests.transactions.conftest import FUND, HOLD, PAYMENT, Book, book  # noqa: F401

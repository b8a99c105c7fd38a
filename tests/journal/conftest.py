from __future__ import annotations

from typing import Any

import pytest

from tests.transactions.conftest import Book, make_book


@pytest.fixture
def book(api: Any, ledger_url: str) -> Book:
    return make_book(api, ledger_url)

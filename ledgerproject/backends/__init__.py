"""Django's PostgreSQL and SQLite backends with one change: their schema editors write the
tenant tables' composite keys (``ledgerproject.tenancy``). Settings select them."""

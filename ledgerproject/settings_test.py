"""Settings for the test suite: the ordinary settings with development defaults and fast hashing."""

import os

os.environ.setdefault("LEDGER_DEV_DEFAULTS", "1")
# A checkout's .env (make run) must not change what the tests see, in-process or in the
# subprocesses they start: the suite runs the same from a fresh clone.
os.environ.setdefault("LEDGER_ENV_FILE", "")

from ledgerproject.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Tests drive thousands of requests with one token; the throttling tests turn it on themselves.
API_THROTTLE_RATES = {"read": None, "write": None}

# The tests seal a ledger's journal when they choose (journal.services.seal); the sealer thread
# has tests of its own.
JOURNAL_SEALING = "off"

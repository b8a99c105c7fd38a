"""Settings for the test suite: the ordinary settings with development defaults and fast hashing."""

import os

os.environ.setdefault("LEDGER_DEV_DEFAULTS", "1")

from ledgerproject.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Tests drive thousands of requests with one token; the throttling tests turn it on themselves.
API_THROTTLE_RATES = {"read": None, "write": None}

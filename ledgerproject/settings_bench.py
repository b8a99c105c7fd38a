"""Settings for ``make bench``: the ordinary production settings, plus the bench-only reference
floor endpoint (``bench.urls``). Never used outside the benchmark."""

import os

os.environ.setdefault("LEDGER_DEV_DEFAULTS", "1")
os.environ.setdefault("CONN_MAX_AGE", "600")
# The load generator posts far above any per-token budget: the bench measures the posting
# path, not the throttle, so per-token throttling is off here.
os.environ.setdefault("THROTTLE_READ_RATE", "off")
os.environ.setdefault("THROTTLE_WRITE_RATE", "off")

from ledgerproject.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "ERROR"},
}

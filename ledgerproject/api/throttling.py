"""Per-token request throttling: one budget for reads and one for writes, each token counted
apart. Rates come from ``settings.API_THROTTLE_RATES`` (``THROTTLE_READ_RATE`` and
``THROTTLE_WRITE_RATE`` in the environment), read at each request so that they can change
without re-importing this module. A request over its budget is 429 in the error envelope, with
``Retry-After``.

Throttling is off unless a rate is set. Counts live in the ``throttle`` cache, which every
server process shares: Redis when ``REDIS_URL`` is set, else a table of the database. A count
kept per process would be no limit at all (each of N workers would allow the whole budget).
DRF's sliding window reads and writes the history apart, so two requests racing on one token
may both be counted as the first: the limit is approximate by a request or two, never by a
process's worth.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import caches
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from ledgerproject.api.permissions import is_read


class TokenRateThrottle(SimpleRateThrottle):
    scope = "read"

    def __init__(self) -> None:
        # The scope (and so the rate) depends on the request: chosen in ``allow_request``.
        self.rate: str | None = None
        self.num_requests: int | None = None
        self.duration: int | None = None

    @property
    def cache(self) -> Any:
        """The shared ``throttle`` cache (unless one was set), looked up only when a budget is
        counted: a throttle is made for each request, and most requests count none (throttling
        is off by default)."""
        return self.__dict__.get("_cache") or caches["throttle"]

    @cache.setter
    def cache(self, value: Any) -> None:
        self._cache = value

    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request: Request, view: Any) -> bool:
        if all(rate is None for rate in settings.API_THROTTLE_RATES.values()):
            return True  # throttling off: no budget to choose
        self.scope = "read" if is_read(request, view) else "write"
        self.rate = self.get_rate()
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        token = getattr(request, "auth", None)
        if token is None or getattr(token, "pk", None) is None:
            return None
        return self.cache_format % {"scope": self.scope, "ident": token.pk}

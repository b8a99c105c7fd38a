"""The event worker (``manage.py deliver_webhooks``): webhooks and RabbitMQ, each unable to
stop the other.

One thread (the caller's) does all the database work in short transactions (``delivery``);
a pool of ``WEBHOOK_CONCURRENCY`` threads does the requests and nothing else (``network``).
Each turn recovers lapsed attempts, dispatches new events, records the attempts that finished,
claims due deliveries until the pool is full (at most ``WEBHOOK_CONCURRENCY_PER_ORGANIZATION``
in flight for one organization, so one organization's slow receivers cannot take every slot)
and publishes to RabbitMQ. An unreachable broker is logged, retried after a backoff that
doubles from ``AMQP_RETRY_BASE`` to ``AMQP_RETRY_MAX`` seconds, and shown in ``health()``;
webhooks go on meanwhile."""

from __future__ import annotations

import collections
import concurrent.futures
import logging
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.utils import timezone

from ledgerproject.formats import render_timestamp
from outbox import broker, delivery, network

log = logging.getLogger("ledger.worker")

COUNTS = ("dispatched", "sent", "failed", "refused", "retried", "recovered", "published")


class Broker:
    """The worker's side of RabbitMQ: its state and backoff. ``off``: not configured;
    ``standby``: another worker holds the publishing lease (or none was tried yet); ``up``:
    this worker publishes; ``down``: the broker failed, tried again after the backoff."""

    def __init__(self, target: broker.Publisher | None, say: Callable[[str], None]) -> None:
        self.target, self.say = target, say
        self.state = "off" if target is None else "standby"
        self.since = timezone.now()
        self.error = ""
        self.failures = 0
        self.next_try = 0.0

    def publish(self) -> int:
        """Publish one batch of what is pending (a turn never waits for a whole backlog),
        unless the broker is down and its backoff still runs."""
        if self.target is None or time.monotonic() < self.next_try:
            return 0
        try:
            published = broker.publish_pending(self.target)
        except broker.OUTAGES as error:
            self._down(f"{type(error).__name__}: {error}" if str(error) else type(error).__name__)
            return 0
        if published is None:
            if self.state != "down":
                self.state = "standby"
            return 0
        if self.state == "down":
            self.say(f"RabbitMQ is reachable again, after {self.failures} failed tries.")
        if self.state != "up":
            self.state, self.since, self.failures = "up", timezone.now(), 0
        return published

    def _down(self, error: str) -> None:
        assert self.target is not None
        self.target.close()
        broker.stop_publishing()  # a worker that can reach the broker may take over meanwhile
        self.failures += 1
        wait = min(settings.AMQP_RETRY_MAX, settings.AMQP_RETRY_BASE * 2 ** (self.failures - 1))
        self.next_try = time.monotonic() + wait
        if self.state != "down":
            self.state, self.since = "down", timezone.now()
        self.error = error
        self.say(f"RabbitMQ is unreachable ({error}); webhooks go on; next try in {wait:g} s.")

    def close(self) -> None:
        if self.target is not None:
            self.target.close()
            broker.stop_publishing()

    def health(self) -> dict[str, Any]:
        retry_in = max(0.0, self.next_try - time.monotonic()) if self.state == "down" else None
        return {
            "state": self.state,
            "since": render_timestamp(self.since),
            "lastError": self.error or None,
            "failedTries": self.failures,
            "nextTryInSeconds": None if retry_in is None else round(retry_in, 1),
        }


class Worker:
    def __init__(self, say: Callable[[str], None] = log.warning) -> None:
        self.pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=settings.WEBHOOK_CONCURRENCY, thread_name_prefix="webhook"
        )
        self.in_flight: dict[concurrent.futures.Future[network.Answer], delivery.Claim] = {}
        self.counts: collections.Counter[str] = collections.Counter()
        self.broker = Broker(broker.publisher(), say)
        # Set to stop: a turn then only records the attempts in flight as they finish.
        self.stopping = False

    def turn(self) -> bool:
        """One round of every step; answers whether any of them had work."""
        worked = self.record_finished()
        if self.stopping:
            return worked
        if recovered := delivery.recover():
            self.counts["recovered"] += recovered
            worked = True
        if dispatched := delivery.fan_out():
            self.counts["dispatched"] += dispatched
            worked = True
        worked = self.fill() or worked
        if published := self.broker.publish():
            self.counts["published"] += published
            worked = True
        return worked

    def fill(self) -> bool:
        """Claim due deliveries while the pool has room; their requests start at once."""
        claimed = False
        while not self.stopping and len(self.in_flight) < settings.WEBHOOK_CONCURRENCY:
            claim = delivery.claim()
            if claim is None:
                break
            future = self.pool.submit(
                network.post,
                claim.url,
                claim.body,
                claim.headers,
                timeout=settings.WEBHOOK_TIMEOUT,
                allow_private=settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
            )
            self.in_flight[future] = claim
            claimed = True
        return claimed

    def record_finished(self) -> bool:
        finished = [future for future in self.in_flight if future.done()]
        for future in finished:
            try:
                answer = future.result()
            except Exception as error:  # noqa: BLE001 - recorded as the attempt's failure
                answer = network.Answer(error=f"The attempt failed: {error!r}"[:2000])
            outcome = delivery.record(self.in_flight.pop(future), answer)
            if outcome is not None:
                self.counts[outcome.kind] += 1
                self.counts["retried"] += outcome.retried
        return bool(finished)

    def wait(self, seconds: float) -> None:
        """Until an attempt finishes, or ``seconds`` pass."""
        if self.in_flight:
            concurrent.futures.wait(
                self.in_flight, timeout=seconds, return_when=concurrent.futures.FIRST_COMPLETED
            )
        else:
            time.sleep(seconds)

    def finish(self) -> None:
        """Wait for the attempts in flight (each ends by its deadline) and record them."""
        concurrent.futures.wait(self.in_flight)
        self.record_finished()

    def close(self) -> None:
        self.finish()
        self.pool.shutdown()
        self.broker.close()

    def summary(self) -> str:
        c = self.counts
        line = (
            f"{c['dispatched']} events dispatched; deliveries: {c['sent']} sent, "
            f"{c['failed']} failed, {c['refused']} refused, {c['retried']} to retry"
        )
        if c["recovered"]:
            line += f", {c['recovered']} recovered from a stopped worker"
        if self.broker.state == "off":
            return line + "; RabbitMQ not configured."
        line += f"; {c['published']} events published to RabbitMQ"
        if self.broker.state == "down":
            line += f" (RabbitMQ unreachable: {self.broker.error})"
        return line + "."

    def health(self) -> dict[str, Any]:
        return {
            "at": render_timestamp(timezone.now()),
            "inFlight": len(self.in_flight),
            "counts": {name: self.counts[name] for name in COUNTS},
            "broker": self.broker.health(),
        }

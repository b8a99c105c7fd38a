"""One webhook request against receivers that misbehave on 127.0.0.1: one deadline for the whole
exchange, whatever the receiver does; a bound on what is read of an answer; and the address
rule, IPv4 carried inside IPv6 included."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
import tracemalloc

import pytest

from outbox import network
from tests.outbox.hostile import Hostile


def _post(url: str, timeout: float) -> network.Answer:
    return network.post(url, b"{}", [("Ledger-Delivery-Id", "d")], timeout=timeout,
                        allow_private=True)  # fmt: skip


def test_a_receiver_that_trickles_its_answer_is_cut_off_at_the_deadline():
    with Hostile("drip", pace=0.4) as receiver:
        started = time.monotonic()
        answer = _post(receiver.url, timeout=1.5)
        took = time.monotonic() - started
    assert answer.status_code is None and answer.error.startswith("Timed out"), answer
    assert 1.4 <= took < 3.0, took  # each byte came in time; the whole answer did not
    assert 2 <= receiver.sent <= 5


def test_a_receiver_that_never_answers_is_cut_off_at_the_deadline():
    with Hostile("hang") as receiver:
        started = time.monotonic()
        answer = _post(receiver.url, timeout=1.0)
        assert time.monotonic() - started < 3.0
    assert answer.error == "Timed out: no complete answer within 1 s.", answer


def test_a_tls_handshake_that_never_ends_is_cut_off_at_the_deadline():
    with Hostile("hang") as receiver:
        started = time.monotonic()
        answer = _post(receiver.url.replace("http://", "https://"), timeout=1.0)
        assert time.monotonic() - started < 3.0
    assert answer.error.startswith("Timed out"), answer


def test_a_huge_answer_is_read_only_up_to_the_bound():
    with Hostile("huge", size=96 << 20) as receiver:
        tracemalloc.start()
        try:
            answer = _post(receiver.url, timeout=10)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        time.sleep(0.3)  # the receiver finds the connection closed
        sent = receiver.sent
    assert answer.status_code == 200 and answer.ok
    assert answer.body == "x" * network.KEPT_CHARACTERS
    assert peak < 1 << 20, peak  # the 96 MiB answer never reached memory
    assert sent < 32 << 20, sent  # what the kernel's buffers took before the close, at most


def test_an_answer_is_kept_and_a_non_http_answer_is_an_error():
    with Hostile("ok") as receiver:
        answer = _post(receiver.url, timeout=5)
    assert (answer.status_code, answer.body, answer.error) == (200, "thanks", "")
    with Hostile("garbage") as receiver:
        answer = _post(receiver.url, timeout=5)
    assert answer.status_code is None and answer.error.startswith("The answer is not valid HTTP")


def test_nothing_is_sent_to_a_refused_address():
    with Hostile("ok") as receiver:
        answer = network.post(receiver.url, b"{}", [], timeout=5, allow_private=False)
        assert receiver.arrivals == []
    assert answer.refused and answer.status_code is None
    assert answer.error == "Not sent: the host resolves to a non-public address (127.0.0.1)."


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
        "0.0.0.0", "224.0.0.1", "::1", "::", "fe80::1", "fc00::1", "ff02::1",
        "::ffff:127.0.0.1",  # IPv4-mapped
        "::127.0.0.1",  # IPv4-compatible
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "64:ff9b:1::1",  # NAT64, local use
        "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo, client 10.0.0.1
        "::ffff:0:a9fe:a9fe",  # IPv4-translated (SIIT) 169.254.169.254
        "fec0::1",  # site-local
    ],
)  # fmt: skip
def test_non_public_addresses_are_refused_in_every_form(address):
    assert network.refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"],
)
def test_public_addresses_pass(address):
    assert network.refusal(ipaddress.ip_address(address)) is None


def test_the_carried_address_is_named():
    reason = network.refusal(ipaddress.ip_address("64:ff9b::a9fe:a9fe"))
    assert reason == "a non-public address (64:ff9b::a9fe:a9fe, which carries 169.254.169.254)"


def test_a_unicode_host_and_path_travel_as_ascii():
    """A name in Unicode goes as IDNA in Host, a path in Unicode percent-encoded (h11 sends
    ASCII only): such a URL is delivered, not failed on every attempt."""
    with Hostile("ok") as receiver:
        url = receiver.url.replace("/hook", "/h\u00fck?q=\u00e9")
        answer = _post(url, timeout=5)
        assert answer.ok, answer
        (head,) = receiver.heads
    assert head.startswith(b"POST /h%C3%BCk?q=%C3%A9 HTTP/1.1\r\n")


def test_a_name_server_that_never_answers_delays_no_other_lookup(monkeypatch):
    """Each lookup has a thread of its own: a receiver whose name never resolves holds up no
    one else's (a shared pool of resolver threads would, once its threads all hung)."""
    release = threading.Event()
    real = socket.getaddrinfo

    def slow_for_one(host, *args, **kwargs):
        if host == "never.example":
            release.wait(20)
        return real("127.0.0.1", *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_for_one)
    try:
        for _ in range(8):
            answer = _post("http://never.example/hook", timeout=0.2)
            assert answer.error.startswith("Timed out: the host did not resolve"), answer
        with Hostile("ok") as receiver:
            started = time.monotonic()
            answer = _post(receiver.url.replace("127.0.0.1", "fine.example"), timeout=5)
            assert answer.ok and time.monotonic() - started < 2, answer
    finally:
        release.set()

"""``db.new_id``: every row's id. A UUIDv7 of the standard library's own type (the ORM, psycopg
and orjson each take it as any other ``uuid.UUID``), and ids made one after the other in a
process sort in the order they were made, within a millisecond too: primary-key indexes grow
at their end, and keyset pages in creation order follow the ids."""

from __future__ import annotations

import threading
import time
import uuid

import orjson

from ledgerproject.db import new_id


def test_a_version_7_uuid_of_the_standard_type() -> None:
    made = new_id()
    assert type(made) is uuid.UUID
    assert made.version == 7
    assert made.variant == uuid.RFC_4122
    assert orjson.dumps(made) == f'"{made}"'.encode()


def test_the_id_starts_with_the_millisecond_it_was_made_in() -> None:
    before = time.time_ns() // 1_000_000
    made = new_id()
    after = time.time_ns() // 1_000_000
    assert before <= made.int >> 80 <= after + 1  # one ahead when the last ms was used up


def test_ids_made_in_a_row_increase_and_never_repeat() -> None:
    made = [new_id() for _ in range(20_000)]  # many within each millisecond
    assert made == sorted(made)
    assert len(set(made)) == len(made)


def test_threads_never_share_an_id() -> None:
    found: list[list[uuid.UUID]] = [[] for _ in range(8)]

    def make(out: list[uuid.UUID]) -> None:
        out.extend(new_id() for _ in range(5_000))

    threads = [threading.Thread(target=make, args=(out,)) for out in found]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [i for out in found for i in out]
    assert len(set(every)) == len(every) == 40_000
    assert all(out == sorted(out) for out in found)


def test_a_forked_process_never_repeats_its_parent_s_ids() -> None:
    """gunicorn forks its workers from a process that may have made ids already: a worker must
    not inherit the state that would make it repeat another's."""
    import os

    before = new_id()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its ids to the pipe, then gone without running pytest's exit
        os.close(read)
        os.write(write, "\n".join(str(new_id()) for _ in range(2_000)).encode())
        os._exit(0)
    os.close(write)
    mine = {new_id() for _ in range(2_000)}
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    theirs = {uuid.UUID(text) for text in b"".join(chunks).decode().split("\n")}
    assert len(theirs) == 2_000
    assert not (mine & theirs) and before not in theirs
    # made in the same millisecond, they still differ in their random bits
    assert {u.int & ((1 << 62) - 1) for u in mine}.isdisjoint(
        {u.int & ((1 << 62) - 1) for u in theirs}
    )

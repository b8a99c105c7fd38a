"""check_ledger finds the books or the journal changed behind the service's back, and names
what changed: the transaction, the entry, the block."""

from __future__ import annotations

import contextlib
import io
import uuid

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction

from journal import merkle
from journal.models import Block
from journal.services import seal
from organizations.models import Ledger
from outbox.models import Event
from transactions.against_journal import check_books_match_journal


@contextlib.contextmanager
def triggers_off():
    """Behind the service's back: the database's own triggers do not fire (inside the test's
    transaction, so everything comes back after it)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = replica")
            yield cursor
            cursor.execute("SET LOCAL session_replication_role = origin")
            return
        cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
        kept = cursor.fetchall()
        for name, _ in kept:
            cursor.execute(f'DROP TRIGGER "{name}"')
        yield cursor
        for _, text in kept:
            cursor.execute(text)


def _sealed(book):
    book.fund("@alice", 5_000)
    paid = book.pay(100, 5).json()
    book.pay(7, 0)
    ledger = Ledger.objects.get(pk=uuid.UUID(book.url.rsplit("/", 1)[1]))
    seal(ledger.organization_id, ledger.pk)
    return ledger, paid["id"]


def _violations():
    err = io.StringIO()
    with pytest.raises(CommandError, match=r"violation"):
        call_command("check_ledger", stdout=io.StringIO(), stderr=err)
    return err.getvalue()


def test_a_healthy_sealed_ledger_passes(book):
    _sealed(book)
    out = io.StringIO()
    call_command("check_ledger", stdout=out, stderr=io.StringIO())
    assert "the books match their journal" in out.getvalue()


def test_a_rewritten_description_is_named_by_its_transaction(book, books_left_unbalanced):
    _, tx = _sealed(book)
    with triggers_off() as cursor:
        cursor.execute(
            "UPDATE transactions_transaction SET description = %s WHERE id = %s",
            ["nothing to see", tx if connection.vendor == "postgresql" else tx.replace("-", "")],
        )
    text = _violations()
    assert f"transaction {tx}: description no longer as its journal entry has it" in text


def test_a_rewritten_operation_amount_is_named_by_its_transaction(book, books_left_unbalanced):
    _, tx = _sealed(book)
    with triggers_off() as cursor:
        cursor.execute(
            "UPDATE transactions_operation SET amount = amount + 1 WHERE transaction_id = %s "
            "AND type = 'CREDIT'",
            [tx if connection.vendor == "postgresql" else tx.replace("-", "")],
        )
    assert f"transaction {tx}: operations no longer as its journal entry has it" in _violations()


def test_a_rewritten_block_root_is_named_by_its_block(book):
    _sealed(book)
    with triggers_off() as cursor:
        cursor.execute("UPDATE journal_block SET root = %s", ["ab" * 32])
    text = _violations()
    assert "block 0: its root does not match its entries' hashes" in text
    assert "block 0: its hash does not match its header" in text


def test_a_rewritten_entry_is_named_with_its_block_and_position(book):
    _, tx = _sealed(book)
    event = Event.objects.get(resource_id=tx, type="transaction.posted")
    data = dict(event.data, description="rewritten")
    Event.objects.filter(pk=event.pk).update(data=data)
    text = _violations()
    assert "block 0, entry " in text
    assert (
        f"transaction {tx} (transaction.posted, event {event.event_id}) no longer matches" in text
    )


def test_a_broken_chain_is_named_where_it_breaks(book):
    ledger, _ = _sealed(book)
    book.pay(3, 0)
    seal(ledger.organization_id, ledger.pk)
    with triggers_off() as cursor:
        cursor.execute("UPDATE journal_block SET previous_hash = %s WHERE height = 1", ["0" * 64])
    assert "block 1: the chain breaks here" in _violations()


def test_a_removed_entry_is_found_once_by_its_position(book):
    _, tx = _sealed(book)
    Event.objects.filter(resource_id=tx).delete()
    text = _violations()
    assert text.count("missing (no entry stored in the block's range has its hash") == 1
    assert "no longer matches its hash" not in text
    assert f"transaction {tx}: has no journal entry" in text


def test_an_account_status_changed_behind_the_service_is_named(book):
    _sealed(book)
    alice = book.accounts["@alice"]["id"]
    with triggers_off() as cursor:
        cursor.execute(
            "UPDATE organizations_account SET allow_sending = %s WHERE id = %s",
            [False, alice if connection.vendor == "postgresql" else alice.replace("-", "")],
        )
    assert f"account {alice}: allowSending no longer as its journal entry has it" in _violations()


def test_the_database_refuses_to_change_or_remove_a_block(book):
    _sealed(book)
    for statement in ("UPDATE journal_block SET root = 'x'", "DELETE FROM journal_block"):
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(statement)
    assert Block.objects.count() == 1


def test_the_admin_dashboard_button_names_a_tampered_entry(book, admin_client):
    ledger, tx = _sealed(book)
    event = Event.objects.get(resource_id=tx, type="transaction.posted")
    Event.objects.filter(pk=event.pk).update(data=dict(event.data, description="rewritten"))
    page = admin_client.post(
        f"/admin/organizations/ledger/{ledger.pk}/dashboard/", {"check": "1"}
    ).content.decode()
    assert (
        f"transaction {tx} (transaction.posted, event {event.event_id}) no longer matches" in page
    )


def test_the_books_check_reads_a_slice_at_a_time(book, django_assert_max_num_queries):
    """Linear in the ledger's size: a fixed number of queries per slice of rows, not per row."""
    ledger, _ = _sealed(book)
    for index in range(30):
        book.account(f"@extra{index}")
        book.pay(1, 0)
    with django_assert_max_num_queries(20):
        assert check_books_match_journal(ledger) == []


def test_a_rewritten_actor_is_named(book):
    _, tx = _sealed(book)
    with triggers_off() as cursor:
        cursor.execute(
            "UPDATE transactions_transaction SET actor_name = %s WHERE id = %s",
            ["someone else", tx if connection.vendor == "postgresql" else tx.replace("-", "")],
        )
    assert f"transaction {tx}: actor no longer as its journal entry has it" in _violations()


def test_an_entry_added_between_two_blocks_is_named(book):
    ledger, _ = _sealed(book)
    book.pay(3, 0)
    seal(ledger.organization_id, ledger.pk)
    first = Block.objects.get(ledger_id=ledger.pk, height=0)
    # Block 0's own event lies between its last entry and block 1's first: passed off as an
    # entry, it is one that no block covers.
    forged = Event.objects.get(type="block.sealed", resource_id=first.pk)
    Event.objects.filter(pk=forged.pk).update(type="account.updated")
    text = _violations()
    assert f"block 1: account {first.pk} (account.updated, event {forged.event_id}) lies " in text


def test_a_deleted_template_brought_back_is_named(book):
    _sealed(book)
    listed = book.api.get(f"{book.url}/transaction-templates", HTTP_ACCEPT="application/json")
    template = listed.json()[0]
    deleted = book.api.delete(f"{book.url}/transaction-templates/{template['code']}")
    assert deleted.status_code == 204
    with triggers_off() as cursor:
        cursor.execute("UPDATE templates_dsl_transactiontemplate SET deleted_at = NULL")
    assert f"template {template['id']}: its journal entry has it deleted" in _violations()


def test_a_transaction_removed_from_the_books_is_named(book, books_left_unbalanced):
    _, tx = _sealed(book)
    raw = tx if connection.vendor == "postgresql" else tx.replace("-", "")
    with triggers_off() as cursor:
        cursor.execute("DELETE FROM transactions_operation WHERE transaction_id = %s", [raw])
        cursor.execute("DELETE FROM transactions_idempotencykey WHERE transaction_id = %s", [raw])
        cursor.execute("DELETE FROM transactions_transaction WHERE id = %s", [raw])
    assert f"transaction {tx}: in the journal, but no longer stored" in _violations()


def test_an_entry_removed_and_another_changed_in_one_block_are_named_as_such(book):
    """Named as what they are, not as every later entry changed."""
    ledger, tx = _sealed(book)
    removed = Event.objects.get(resource_id=tx, type="transaction.posted")
    Event.objects.filter(pk=removed.pk).delete()
    last = Event.objects.filter(ledger_id=ledger.pk).exclude(type="block.sealed").latest("seq")
    Event.objects.filter(pk=last.pk).update(data={**last.data, "description": "added"})
    text = _violations()
    assert text.count("missing (no entry stored") == 2
    assert "is not an entry it sealed" in text
    assert "no longer matches its hash" not in text


def test_entries_moved_within_a_block_are_named(book):
    ledger, _ = _sealed(book)
    first, second = Event.objects.filter(ledger_id=ledger.pk).order_by("seq")[1:3]
    fields = ("event_id", "type", "resource_id", "created_at", "data")
    swapped = {name: getattr(first, name) for name in fields}
    Event.objects.filter(pk=first.pk).update(event_id=uuid.uuid4())
    Event.objects.filter(pk=second.pk).update(**swapped)
    Event.objects.filter(pk=first.pk).update(**{name: getattr(second, name) for name in fields})
    text = _violations()
    assert text.count("is not where the block sealed it (entries moved)") == 2


def test_blocks_of_both_entry_forms_verify_and_a_rewritten_reason_is_named(
    book, admin_client, monkeypatch
):
    """Blocks sealed before the reason existed keep form 1; later ones hash the reason too
    (form 2), and check_ledger builds each block's entries in its own form."""
    monkeypatch.setattr(merkle, "FORM", 1)
    ledger, tx = _sealed(book)
    monkeypatch.setattr(merkle, "FORM", 2)
    act = f"/admin/transactions/transaction/{tx}/act/revert/"
    assert admin_client.post(act, {"_confirm": "1", "reason": "Sent twice"}).status_code == 302
    seal(ledger.organization_id, ledger.pk)
    assert list(Block.objects.order_by("height").values_list("entry_form", flat=True)) == [1, 2]
    out = io.StringIO()
    call_command("check_ledger", stdout=out, stderr=io.StringIO())
    assert "the books match their journal" in out.getvalue()
    event = Event.objects.get(type="transaction.reverted")
    assert merkle.entry_of(event)["reason"] == "Sent twice"
    assert "reason" not in merkle.entry_of(event, 1)
    Event.objects.filter(pk=event.pk).update(reason="Why not")
    text = _violations()
    assert "block 1, entry " in text
    assert f"(transaction.reverted, event {event.event_id}) no longer matches" in text

"""A template read once is kept in the process (PostgreSQL) and checked, not read, by the
accounts' statement: a replaced, deleted or re-created template is seen by the very next
posting, whichever process changed it (a direct row update stands for another process)."""

from __future__ import annotations

from django.utils import timezone

from templates_dsl.models import TransactionTemplate
from tests.conftest import assert_error
from tests.transactions.conftest import FUND

BODY = {"transactionTypeCode": "FUND", "variables": {"amount": 100, "account": "@alice"}}


def test_a_template_replaced_elsewhere_is_used_at_the_next_posting(book):
    assert book.post(BODY).json()["description"] == "Deposit"  # cached now
    replaced = FUND.replace('(description "Deposit")', '(description "Top-up")')
    TransactionTemplate.objects.filter(code="FUND").update(
        text=replaced, description="Top-up", updated_at=timezone.now()
    )
    assert book.post(BODY).json()["description"] == "Top-up"


def test_a_template_replaced_through_the_api_is_used_at_the_next_posting(book):
    book.post(BODY)
    replaced = FUND.replace("(to $account :amount", "(to $account :amount").replace(
        '(description "Deposit")', '(description "Via API")'
    )
    url = f"{book.url}/transaction-templates/FUND"
    assert book.api.put(url, replaced, content_type="text/plain").status_code == 200
    assert book.post(BODY).json()["description"] == "Via API"


def test_a_template_deleted_elsewhere_is_not_found_at_the_next_posting(book):
    assert book.post(BODY).status_code == 201
    TransactionTemplate.objects.filter(code="FUND").update(deleted_at=timezone.now())
    assert_error(book.post(BODY), 404, "0007")


def test_a_template_deleted_and_created_again_is_the_new_one(book):
    book.post(BODY)
    url = f"{book.url}/transaction-templates"
    assert book.api.delete(f"{url}/FUND").status_code == 204
    again = FUND.replace('(description "Deposit")', '(description "Second life")')
    assert book.api.post(url, again, content_type="text/plain").status_code == 201
    assert book.post(BODY).json()["description"] == "Second life"


def test_a_posting_refused_by_a_stale_plan_is_planned_again(book):
    """The cached plan needs ``account``; the new text names it ``target``."""
    book.post(BODY)
    renamed = FUND.replace("$account", "$target")
    TransactionTemplate.objects.filter(code="FUND").update(text=renamed, updated_at=timezone.now())
    body = {"transactionTypeCode": "FUND", "variables": {"amount": 1, "target": "@alice"}}
    assert book.post(body).status_code == 201

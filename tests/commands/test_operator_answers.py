"""What operators read: unknown ids fail with a non-zero exit, a repeated revocation says so,
a refused posting keeps the API's explanation, a dry run says that nothing was written."""

from __future__ import annotations

import json
import uuid

from organizations.models import ApiToken
from tests.commands.helpers import attempt, run, scope
from tests.conftest import make_token
from transactions.models import Transaction

PAY = ["--template", "PAYMENT_WITH_FEE", "--var", "fee=100", "--var", "source=@alice"]
PAY += ["--var", "destination=@bob"]


def test_check_ledger_refuses_an_unknown_ledger_or_organization(book):
    unknown = str(uuid.uuid4())
    _, _, error = attempt("check_ledger", "--ledger", unknown)
    assert error.returncode == 1
    assert str(error) == f"No ledger matches --ledger {unknown}: nothing was checked."
    _, _, error = attempt("check_ledger", "--organization", unknown)
    assert f"--organization {unknown}" in str(error)
    out, _ = run("check_ledger", *scope(book))
    assert "0 violation(s)" in out and "OK: 1 ledger(s) checked" in out


def test_revoking_twice_says_it_was_already_revoked(db):
    make_token("ci-bot")
    first, _ = run("revoke_token", "ci-bot")
    assert first.strip() == "Revoked token 'ci-bot'."
    revoked_at = ApiToken.objects.get(name="ci-bot").revoked_at
    second, _ = run("revoke_token", "ci-bot")
    assert "Token 'ci-bot' was already revoked (at " in second and "unchanged" in second
    assert ApiToken.objects.get(name="ci-bot").revoked_at == revoked_at
    _, _, error = attempt("revoke_token", "nobody")
    assert error.returncode == 1 and "No token named 'nobody'" in str(error)


def test_a_refusal_keeps_the_apis_explanation(book):
    book.fund("@alice", 10_000)
    _, _, error = attempt("post_transaction", *scope(book), *PAY, "--var", "amount=25.00")
    api = book.post(
        {
            "transactionTypeCode": "PAYMENT_WITH_FEE",
            "variables": {"amount": "25.00", "fee": 100, "source": "@alice", "destination": "@bob"},
        }
    ).json()
    assert str(error).startswith(f"{api['code']} {api['title']}: {api['description']}")
    assert f"amount: {api['fields']['variables.amount']}" in str(error)
    assert Transaction.objects.count() == 1  # the funding only


def test_a_dry_run_says_so_and_writes_nothing(book):
    book.fund("@alice", 10_000)
    before = Transaction.objects.count()
    out, err = run("post_transaction", *scope(book), *PAY, "--var", "amount=2500", "--dry-run")
    printed = json.loads(out)
    assert printed["dryRun"] is True and printed["amount"] == {"amount": 2600, "scale": 2}
    assert "Dry run: every check passed; nothing was written." in err
    assert Transaction.objects.count() == before
    assert book.available("@alice") == 10_000

"""The ledger kept per process (``transactions.copies``, PostgreSQL): a POST to a posting
endpoint runs on the process's copy of its ledger, confirmed by the statement that locks its
balances. Whatever changed meanwhile, the client sees what it would have seen had the ledger
been read first, and nothing is written twice. Changes are made in plain SQL, as another
process would make them (no signal reaches this one)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ledgerproject import kept
from ledgerproject.api.authentication import TokenPrincipal
from organizations.models import ApiToken
from tests.conftest import Api, assert_error, make_token
from transactions import copies
from transactions.models import ScheduledPosting, Transaction

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: ledgers and tokens are kept in memory only there",
    ),
]

PAY = {
    "transactionTypeCode": "PAYMENT_WITH_FEE",
    "variables": {"amount": 10, "fee": 1, "source": "@alice", "destination": "@bob"},
}


def _sql(statement: str, params: list[object]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def _ledger_id(book) -> str:
    return book.url.rsplit("/", 1)[1]


@pytest.fixture
def warm(book):
    """A funded book whose token and ledger this process keeps."""
    book.fund("@alice", 1_000)
    assert book.pay(1, 0).status_code == 201
    return book


@pytest.fixture
def copies_allowed():
    """Copies used here, as inside an API request (``kept.allowed``)."""
    with kept.allowed():
        yield


def _revoke(book) -> None:
    _sql("UPDATE organizations_apitoken SET revoked_at = now() WHERE name = %s", ["root"])


def test_a_posting_does_not_read_its_ledger_first(warm):
    with CaptureQueriesContext(connection) as captured:
        assert warm.post(PAY).status_code == 201
    statements = [q["sql"] for q in captured.captured_queries]
    assert not any("organizations_organization" in s for s in statements), statements
    assert any("organizations_authepoch" in s and "FOR UPDATE" in s for s in statements)


def test_a_token_revoked_elsewhere_cannot_post(warm, caplog):
    before = Transaction.objects.count()
    _revoke(warm)
    assert warm.post(PAY).status_code == 401
    assert Transaction.objects.count() == before
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]  # no 500 made


@pytest.mark.parametrize(
    "body",
    [
        {"variables": {}},  # 400: no template named
        {"transactionTypeCode": "NOPE", "variables": {}},  # 404 before any lock
        {**PAY, "variables": {**PAY["variables"], "amount": 10**9}},  # 422 after the locks
    ],
)
def test_a_revoked_token_gets_401_whatever_else_is_wrong(warm, body):
    _revoke(warm)
    assert warm.post(body).status_code == 401


def test_a_keyed_posting_and_a_batch_read_their_ledger_first(warm):
    """A key's row would be written before the locking statement: no copy for them."""
    for call in (
        lambda: warm.post(PAY, HTTP_IDEMPOTENCY_KEY="first"),
        lambda: warm.api.post(f"{warm.url}/transactions/batch", {"transactions": [PAY]}),
    ):
        with CaptureQueriesContext(connection) as captured:
            assert call().status_code == 201
        assert any("organizations_organization" in q["sql"] for q in captured.captured_queries)


def test_a_batch_refused_before_its_locks_keeps_no_key_for_a_revoked_token(warm):
    """Review finding: a non-atomic keyed batch whose items were all refused before any lock
    took its key on a copy, and the key's row outlived the 401."""
    from transactions.models import IdempotencyKey

    _revoke(warm)
    batch = {"atomic": False, "transactions": [{"transactionTypeCode": "NOPE", "variables": {}}]}
    url = f"{warm.url}/transactions/batch"
    assert warm.api.post(url, batch, HTTP_IDEMPOTENCY_KEY="kb").status_code == 401
    assert not IdempotencyKey.objects.filter(key="kb").exists()


def test_a_token_kept_again_by_another_thread_is_not_trusted_when_read_again(warm, monkeypatch):
    """Review finding: reading the token again after a changed copy went back to the
    process's copies, which another thread may have filled meanwhile with the token as it
    was before the change."""
    stale = copies.kept_tokens.items()
    assert stale
    forget = copies.forget_token

    def forget_then_kept_again(prefix: str) -> None:
        forget(prefix)
        for key, entry in stale:
            copies.kept_tokens.put(key, entry)

    monkeypatch.setattr(copies, "forget_token", forget_then_kept_again)
    before = Transaction.objects.count()
    _revoke(warm)
    assert warm.post(PAY).status_code == 401
    assert Transaction.objects.count() == before


def test_a_revoked_token_gets_401_for_a_replay_a_dry_run_and_a_batch(warm):
    assert warm.post(PAY, HTTP_IDEMPOTENCY_KEY="once").status_code == 201
    _revoke(warm)
    assert warm.post(PAY, HTTP_IDEMPOTENCY_KEY="once").status_code == 401
    assert warm.api.post(f"{warm.url}/transactions?dryRun=true", PAY).status_code == 401
    batch = {"transactions": [PAY]}
    assert warm.api.post(f"{warm.url}/transactions/batch", batch).status_code == 401


def test_a_ledger_deleted_elsewhere_refuses_as_a_deleted_ledger(warm):
    """Not 0085 for an unknown alias or 0018 for the funds, which a posting on a copy that
    said the ledger was active would find after its locks."""
    before = Transaction.objects.count()
    _sql("UPDATE organizations_ledger SET deleted_at = now() WHERE id = %s", [_ledger_id(warm)])
    unknown = {**PAY, "variables": {**PAY["variables"], "destination": "@nobody"}}
    assert_error(warm.post(unknown), 422, "0008")
    too_much = {**PAY, "variables": {**PAY["variables"], "amount": 10**9}}
    assert_error(warm.post(too_much), 422, "0008")
    assert_error(warm.post(PAY), 422, "0008")
    assert Transaction.objects.count() == before


def test_an_organization_moved_out_of_reach_is_404(book, organization, api):
    limited = Api(make_token("limited", organization_ids=[organization["id"]]))
    book.fund("@alice", 1_000)
    assert limited.post(f"{book.url}/transactions", PAY).status_code == 201  # both kept
    other = api.post("/v1/organizations", {"legalName": "B", "legalDocument": "2"}).json()
    _sql(
        "UPDATE organizations_apitoken_organizations SET organization_id = %s "
        "FROM organizations_apitoken t WHERE t.id = apitoken_id AND t.name = %s",
        [other["id"].replace("-", ""), "limited"],
    )
    assert_error(limited.post(f"{book.url}/transactions", PAY), 404, "0007")


def test_a_change_elsewhere_while_posting_on_a_copy_posts_once(warm):
    """The epoch moves (another token changed): the copy's posting is rolled back at its
    locking statement and made again the ordinary way, once."""
    before = Transaction.objects.count()
    make_token("another")
    response = warm.post(PAY)
    assert response.status_code == 201, response.content
    assert Transaction.objects.count() == before + 1
    assert warm.available("@bob") == 1 + 10


def test_a_copy_no_statement_confirmed_is_confirmed_by_one_of_its_own(warm, copies_allowed):
    """What the engine runs before a write, and the view before an answer that wrote nothing,
    when no locking statement confirmed the copy."""
    token = ApiToken.objects.get(name="root")
    _, _, _, organization_id, _, ledger_id = warm.url.split("/")
    _, epoch = copies.read_ledger(TokenPrincipal(token, ()), organization_id, ledger_id)
    principal = TokenPrincipal(token, (), epoch=epoch)
    _, copy = copies.copy_of(principal, organization_id, ledger_id)
    copies.confirm_now(copy)  # the epoch has not moved
    assert not copies.unconfirmed(copy)
    _, copy = copies.copy_of(principal, organization_id, ledger_id)
    make_token("moves-the-epoch")
    with pytest.raises(copies.CopyChanged):
        copies.confirm_now(copy)
    assert copies.copy_of(principal, organization_id, ledger_id) is None  # dropped


def test_a_copy_is_found_by_any_spelling_of_its_ids_and_never_by_a_malformed_one(
    warm, copies_allowed
):
    """The path's ids are parsed as UUIDs (the parsing kept for the paths seen last): another
    spelling of the same ids finds the same copy, a malformed or overlong one none, and a
    posting through such a path answers as the ordinary path does."""
    token = ApiToken.objects.get(name="root")
    _, _, _, organization_id, _, ledger_id = warm.url.split("/")
    _, epoch = copies.read_ledger(TokenPrincipal(token, ()), organization_id, ledger_id)
    principal = TokenPrincipal(token, (), epoch=epoch)
    _, copy = copies.copy_of(principal, organization_id, ledger_id)
    _, same = copies.copy_of(principal, organization_id.upper(), "{" + ledger_id + "}")
    assert same.pk == copy.pk and same.organization_id == copy.organization_id
    assert copies.copy_of(principal, organization_id, "not-a-uuid") is None
    dashed = "--".join(ledger_id.replace("-", ""))  # a UUID still, in 94 characters
    assert copies.copy_of(principal, organization_id, dashed) is None
    path = warm.url.rsplit("/", 1)[0] + "/not-a-uuid/transactions"
    assert_error(warm.api.post(path, PAY), 404, "0007")


LATER = {**PAY, "scheduledFor": "2099-01-01T00:00:00Z"}


def test_a_scheduling_on_a_copy_changed_elsewhere_keeps_one_scheduled_posting(warm):
    """Scheduling writes no balance: it confirms the copy with a statement of its own before
    it writes, so an epoch moved meanwhile makes it ask again the ordinary way, once."""
    make_token("another")
    response = warm.post(LATER)
    assert response.status_code == 202, response.content
    assert ScheduledPosting.objects.count() == 1


def test_a_token_revoked_elsewhere_cannot_schedule(warm):
    _revoke(warm)
    assert warm.post(LATER).status_code == 401
    assert not ScheduledPosting.objects.exists()

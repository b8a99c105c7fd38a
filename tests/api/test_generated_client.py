"""A client generated from the served schema by openapi-python-client (pinned), built in a
temporary directory by the test (never committed), runs the walkthrough against a live
gunicorn: organization -> ledger -> instrument -> accounts -> template -> posting (stored
template, then inline JSON) -> balance, and reads an error in the envelope. On the way, the
calls docs/CLIENTS.md gives for what generated clients trip over: a template sent as JSON, the
template list as text and as JSON, one idempotency argument and its replay, pages followed by
X-Next-Cursor, and template text with its variables in the JSON form of transactions/dsl."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.live import live_service
from tests.transactions.conftest import FUND

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

OTHER = FUND.replace("(code FUND)", "(code OTHER)")
INLINE = """(transaction-template v1 (chart-of-accounts-group-name PIX) (code PIX)
  (description "Pay $amount")
  (send BRL $amount|2 (source (from @alice :amount BRL $amount|2)))
  (distribute (to @bob :amount BRL $amount|2)))"""


def generate(base: str, out: Path) -> Any:
    """Generate the package ``ledger_client`` from the served schema and import it."""
    schema = out / "openapi.json"
    schema.write_bytes(requests.get(f"{base}/v1/openapi.json", timeout=30).content)
    done = subprocess.run(
        [sys.executable, "-m", "openapi_python_client", "generate", "--path", str(schema),
         "--output-path", str(out / "ledger_client"), "--meta", "none"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert (out / "ledger_client" / "client.py").exists(), done.stdout + done.stderr
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module("ledger_client")
    finally:
        sys.path.remove(str(out))


def test_a_generated_client_runs_the_walkthrough(tmp_path):
    with live_service("client", tmp_path) as live:
        generated = generate(live.base, tmp_path)
        api = importlib.import_module("ledger_client.api.organizations")
        models = importlib.import_module("ledger_client.models")
        types = importlib.import_module("ledger_client.types")

        def call(name: str, *args: Any, **kwargs: Any) -> Any:
            module = importlib.import_module(f"ledger_client.api.organizations.{name}")
            return module.sync_detailed(*args, client=client, **kwargs)

        client = generated.AuthenticatedClient(base_url=live.base, token=live.token)
        assert api is not None
        org = call(
            "organizations_create",
            body=models.OrganizationCreateInRequest(legal_name="Acme", legal_document="1"),
        )
        assert org.status_code == 201, org.content
        org_id = str(org.parsed.id)
        ledger = call(
            "organizations_ledgers_create", org_id,
            body=models.LedgerCreateInRequest(name="Main"),
        )  # fmt: skip
        assert ledger.status_code == 201, ledger.content
        ledger_id = str(ledger.parsed.id)
        where = (org_id, ledger_id)
        instrument = call(
            "organizations_ledgers_instruments_create", *where,
            body=models.InstrumentCreateInRequest.from_dict(
                {"name": "Real", "type": "currency", "code": "BRL"}
            ),
        )  # fmt: skip
        assert instrument.status_code == 201, instrument.content
        for alias in ("@alice", "@bob"):
            made = call(
                "organizations_ledgers_accounts_create", *where,
                body=models.AccountCreateInRequest(asset_code="BRL", alias=alias),
            )  # fmt: skip
            assert made.status_code == 201, made.content
            assert made.parsed.balance.available == 0
        template = call(
            "transaction_templates_create", *where,
            body=models.TemplateTextInRequest(dsl=FUND),
        )  # fmt: skip
        assert (template.status_code, template.parsed) == (201, FUND), template.content
        other = call("transaction_templates_create", *where, body=OTHER)  # a JSON string
        assert other.status_code == 201, other.content
        plain = call("transaction_templates_list", *where)
        assert plain.parsed == f"({FUND}, {OTHER})"
        json_client = generated.AuthenticatedClient(
            base_url=live.base, token=live.token, headers={"Accept": "application/json"}
        )
        listed = importlib.import_module(
            "ledger_client.api.organizations.transaction_templates_list"
        ).sync_detailed(*where, client=json_client, limit=1)
        [fund] = [models.TemplateOut.from_dict(item) for item in json.loads(listed.content)]
        assert fund.code == "FUND"
        assert listed.headers["X-Next-Cursor"]
        body = models.TransactionInRequest.from_dict(
            {"transactionTypeCode": "FUND", "variables": {"amount": 1500, "account": "@alice"}}
        )
        posted = call(
            "organizations_ledgers_transactions_create", *where,
            body=body, idempotency_key="walkthrough-1",
        )  # fmt: skip
        assert posted.status_code == 201, posted.content
        assert (posted.parsed.type_, posted.parsed.status) == ("FUND", "SENT")
        assert posted.parsed.description == "Deposit"
        replayed = call(
            "organizations_ledgers_transactions_create", *where,
            body=body, idempotency_key="walkthrough-1",
        )  # fmt: skip
        assert (replayed.status_code, replayed.headers["Idempotent-Replayed"]) == (201, "true")
        assert replayed.parsed.id == posted.parsed.id
        inline = call(
            "transactions_inline_dsl", *where,
            body=models.InlineDslInRequest.from_dict({"dsl": INLINE, "variables": {"amount": 100}}),
        )  # fmt: skip
        assert inline.status_code == 201, inline.content
        assert inline.parsed.description == "Pay 1.00 BRL"
        inline = requests.post(  # the inline JSON body, through the generated model's keys
            f"{live.base}/v1/organizations/{org_id}/ledgers/{ledger_id}/transactions/json",
            json=_inline_payment(),
            headers={"Authorization": f"Bearer {live.token}"},
            timeout=30,
        )
        assert inline.status_code == 201, inline.content
        by_alias = call("accounts_by_alias", *where, "@alice")
        assert by_alias.status_code == 200, by_alias.content
        assert by_alias.parsed.balance.available == 1500 - 400 - 100
        aliases, cursor = [], types.UNSET
        while True:
            page = call("organizations_ledgers_accounts_list", *where, limit=1, cursor=cursor)
            aliases += [account.alias for account in page.parsed]
            if "X-Next-Cursor" not in page.headers:
                break
            cursor = page.headers["X-Next-Cursor"]
        assert aliases == ["@external/BRL", "@alice", "@bob"]
        balances = call("organizations_ledgers_balances_list", *where, alias="@bob")
        assert balances.status_code == 200, balances.content
        [bob] = balances.parsed
        assert (bob.available, bob.scale) == (500, 2)
        refused = call("accounts_by_alias", *where, "@nobody")
        assert refused.status_code == 404
        assert refused.parsed.code == "0007"


def _inline_payment() -> dict[str, Any]:
    amount = {"terms": [{"literal": 400}], "scale": 2}
    return {
        "chartOfAccountsGroupName": "PAY",
        "send": {
            "asset": "BRL",
            "amount": amount,
            "source": [{"account": {"alias": "@alice"}, "asset": "BRL", "amount": amount}],
        },
        "distribute": {"to": [{"account": {"alias": "@bob"}, "asset": "BRL", "amount": amount}]},
    }

"""The journal through the API: blocks, proofs a client checks with the documented verifier,
the block events."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import requests

from journal.services import seal
from organizations.models import Ledger
from tests.conftest import Api, assert_error, make_token
from tests.live import live_service
from tests.transactions.conftest import FUND

ROOT = Path(__file__).resolve().parents[2]


def verifier(tmp_path: Path) -> Path:
    """The stand-alone verifier, as docs/BOOKS.md prints it."""
    text = (ROOT / "docs" / "BOOKS.md").read_text()
    (code,) = re.findall(r"```python\n(# verify_proof\.py.*?)```", text, re.S)
    path = tmp_path / "verify_proof.py"
    path.write_text(code)
    return path


def run_verifier(tmp_path: Path, answer: dict, *block_hashes: str) -> str:
    proof = tmp_path / "proof.json"
    proof.write_text(json.dumps(answer))
    done = subprocess.run(
        [sys.executable, "-I", str(verifier(tmp_path)), str(proof), *block_hashes],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    return done.stdout.strip()


def _seal(book):
    ledger = Ledger.objects.get(pk=uuid.UUID(book.url.rsplit("/", 1)[1]))
    return seal(ledger.organization_id, ledger.pk)


def test_a_proof_checks_with_the_documented_verifier(book, tmp_path):
    book.fund("@alice", 5_000)
    held = book.pay(100, 5, pending=True).json()
    _seal(book)  # the posting in one block, its commit in the next
    assert book.api.post(f"{book.url}/transactions/{held['id']}/commit").status_code == 200
    for amount in range(1, 6):
        book.pay(amount, 0)
    _seal(book)
    answer = book.api.get(f"{book.url}/transactions/{held['id']}/proof")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["sealed"] is True and body["unsealedEntries"] == 0
    assert [p["entry"]["type"] for p in body["proofs"]] == [
        "transaction.posted",
        "transaction.committed",
    ]
    journal = book.api.get(f"{book.url}/journal").json()
    assert [p["block"]["hash"] for p in body["proofs"]] == [b["hash"] for b in journal]
    hashes = [b["hash"] for b in journal]
    assert run_verifier(tmp_path, body, *hashes) == "yes"
    # A block it does not hold, another transaction, no proof, a changed entry: no.
    assert run_verifier(tmp_path, body, hashes[-1]) == "no"
    assert run_verifier(tmp_path, {**body, "transactionId": str(uuid.uuid4())}, *hashes) == "no"
    assert run_verifier(tmp_path, {**body, "proofs": []}, *hashes) == "no"
    body["proofs"][0]["entry"]["data"]["amount"]["amount"] += 1
    assert run_verifier(tmp_path, body, *hashes) == "no"


def test_an_unsealed_transaction_answers_202(book):
    book.fund("@alice", 5_000)
    paid = book.pay(100, 5).json()
    answer = book.api.get(f"{book.url}/transactions/{paid['id']}/proof")
    assert answer.status_code == 202
    assert answer["Retry-After"] == "2"
    assert answer.json() == {
        "transactionId": paid["id"],
        "sealed": False,
        "proofs": [],
        "unsealedEntries": 1,
    }
    _seal(book)
    assert book.api.get(f"{book.url}/transactions/{paid['id']}/proof").status_code == 200


def test_the_journal_lists_blocks_in_order_keyset_paged(book):
    book.fund("@alice", 5_000)
    _seal(book)
    book.pay(1, 0)
    _seal(book)
    book.pay(2, 0)
    _seal(book)
    first = book.api.get(f"{book.url}/journal", {"limit": 2})
    assert first.status_code == 200
    assert [b["height"] for b in first.json()] == [0, 1]
    rest = book.api.get(f"{book.url}/journal", {"limit": 2, "cursor": first["X-Next-Cursor"]})
    assert [b["height"] for b in rest.json()] == [2]
    blocks = first.json() + rest.json()
    assert [b["previousHash"] for b in blocks[1:]] == [b["hash"] for b in blocks[:-1]]
    assert all(b["entryCount"] > 0 for b in blocks)


def test_every_block_is_an_event(book):
    book.fund("@alice", 5_000)
    _seal(book)
    sealed = book.api.get(f"{book.url}/events", {"type": "block.sealed"}).json()
    (block,) = book.api.get(f"{book.url}/journal").json()
    assert [e["data"] for e in sealed] == [block]


def test_another_organization_sees_no_proof_and_no_journal(book, organization):
    book.fund("@alice", 5_000)
    paid = book.pay(100, 5).json()
    _seal(book)
    other = book.api.post("/v1/organizations", {"legalName": "Other", "legalDocument": "9"})
    stranger = Api(make_token("stranger", organization_ids=[uuid.UUID(other.json()["id"])]))
    assert_error(stranger.get(f"{book.url}/transactions/{paid['id']}/proof"), 404, "0007")
    assert stranger.get(f"{book.url}/journal").status_code == 404


def test_a_posting_is_sealed_within_seconds_with_only_the_web_server(tmp_path):
    with live_service("journal", tmp_path) as live:
        headers = {"Authorization": f"Bearer {live.token}"}

        def call(method, path, body=None, **kwargs):
            return requests.request(
                method, f"{live.base}/v1{path}", json=body, headers=headers, timeout=30, **kwargs
            )

        org = call("POST", "/organizations", {"legalName": "Acme", "legalDocument": "1"}).json()
        ledger = call("POST", f"/organizations/{org['id']}/ledgers", {"name": "Main"}).json()
        url = f"/organizations/{org['id']}/ledgers/{ledger['id']}"
        call("POST", f"{url}/instruments", {"name": "Real", "type": "currency", "code": "BRL"})
        call("POST", f"{url}/accounts", {"alias": "@a", "assetCode": "BRL", "name": "a"})
        template = requests.post(
            f"{live.base}/v1{url}/transaction-templates", data=FUND,
            headers={**headers, "Content-Type": "text/plain"}, timeout=30,
        )  # fmt: skip
        assert template.status_code == 201, template.content
        posted = call(
            "POST",
            f"{url}/transactions",
            {"transactionTypeCode": "FUND", "variables": {"amount": 5, "account": "@a"}},
        )
        assert posted.status_code == 201, posted.content
        deadline = time.monotonic() + 10
        proof_url = f"{url}/transactions/{posted.json()['id']}/proof"
        while (proof := call("GET", proof_url)).status_code == 202:
            assert time.monotonic() < deadline, "not sealed within 10 seconds"
            time.sleep(0.2)
        assert proof.status_code == 200 and proof.json()["sealed"]

"""Operator commands for tokens and the demo."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from organizations.models import ApiToken
from organizations.tokens import generate_secret
from tests.conftest import Api, assert_error


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_creates_a_token_that_works_and_prints_it_last(db, organization):
    out, _ = run(
        "create_token",
        "ops",
        "--organization",
        organization["id"],
        "--read-only",
        "--expires-in-days",
        "3",
    )
    raw = out.strip().splitlines()[-1]
    token = ApiToken.objects.get(name="ops")
    assert token.read_only and token.expires_at is not None
    assert [str(o.pk) for o in token.organizations.all()] == [organization["id"]]
    assert Api(raw).get(f"/v1/organizations/{organization['id']}").status_code == 200


def test_it_refuses_duplicate_names_and_unknown_organizations(db):
    run("create_token", "dup")
    with pytest.raises(CommandError):
        run("create_token", "dup")
    with pytest.raises(CommandError):
        run("create_token", "x", "--organization", "00000000-0000-0000-0000-000000000001")


def test_it_revokes_and_lists_tokens(db):
    out, _ = run("create_token", "gone")
    raw = out.strip().splitlines()[-1]
    run("revoke_token", "gone")
    assert_error(Api(raw).get("/v1/organizations"), 401, "0042")
    listing, _ = run("list_tokens")
    assert "gone" in listing and "revoked" in listing and raw not in listing
    with pytest.raises(CommandError):
        run("revoke_token", "never-existed")


def test_it_bootstraps_the_demo_idempotently(db):
    first, _ = run("bootstrap_demo")
    second, _ = run("bootstrap_demo")
    from organizations.models import Ledger, Organization

    assert Organization.objects.count() == 1 and Ledger.objects.count() == 1
    assert "admin / " in first and "shown at first run" in second
    # The first run's token is kept: the second says so, and how to make another.
    token = next(line.split()[-1] for line in first.splitlines() if "API token:" in line)
    assert "API token:     unchanged (shown at the first run)" in second
    assert "manage.py create_token NAME" in second
    curl = next(line for line in first.splitlines() if line.strip().startswith("curl"))
    path = curl.split()[-1].replace("http://127.0.0.1:8000", "")
    response = Api(token).get(path)
    assert response.status_code == 200 and response.json()["name"] == "Demo Ledger"
    lines = first.splitlines()
    body = next(line.split("-d '")[1].split("'")[0] for line in lines if "-d '" in line)
    payment = Api(token).client.post(f"{path}/transactions", body, content_type="application/json")
    assert payment.status_code == 201, payment.content
    accounts = {a["alias"]: a["balance"] for a in Api(token).get(f"{path}/accounts").json()}
    assert accounts["@alice"]["available"] == 100_000 - 2_600
    assert accounts["@bob"]["available"] == 2_500
    assert accounts["@fees/platform"]["available"] == 100


def test_it_keeps_the_demo_token_of_the_env_file_across_runs(db, monkeypatch):
    raw = generate_secret().raw
    monkeypatch.setenv("LEDGER_DEMO_TOKEN", raw)
    outputs = [run("bootstrap_demo")[0] for _ in range(2)]
    for out in outputs:
        assert f"API token:     {raw}" in out
    assert ApiToken.objects.filter(name="demo").count() == 1
    assert Api(raw).get("/v1/organizations").status_code == 200
    # A revoked demo token is replaced by the .env value again, not by a random one.
    run("revoke_token", "demo")
    assert f"API token:     {raw}" in run("bootstrap_demo")[0]
    assert Api(raw).get("/v1/organizations").status_code == 200

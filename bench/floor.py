"""The reference floor: the least a Django process can do per posting.

``POST /bench/floor/<ledger_id>`` with ``{"source": "@a", "destination": "@b", "amount": N}``
(minor units at scale 2) moves N from one account to another in one atomic block of five raw
SQL statements: the two balance rows locked ``SELECT ... FOR UPDATE`` in id order, the
transaction inserted, its two operations inserted, and each balance updated by its primary key
(the organization and the id: by the id alone PostgreSQL scanned the whole table). It writes
the same rows as a real posting (so ``check_ledger`` still passes) with no authentication, no
template, no serializer and no ORM. Mounted only by ``ledgerproject.settings_bench``."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.db import connection, transaction
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from ledgerproject.db import new_id

SCALE = 2
LOCK = """
SELECT b.id, b.account_id, b.organization_id, a.alias, a.portfolio_id,
       b.available, b.on_hold, b.scale, b.version, b.is_external
FROM organizations_balance b JOIN organizations_account a ON a.id = b.account_id
WHERE a.ledger_id = %s AND a.alias IN (%s, %s) AND a.deleted_at IS NULL
ORDER BY b.id FOR UPDATE OF b
"""
INSERT_TRANSACTION = """
INSERT INTO transactions_transaction (id, created_at, updated_at, effective_at, organization_id,
  ledger_id, parent_id, is_reversal, template_id, type, description, status, amount, scale,
  asset_code, chart_of_accounts_group_name, source, destination, metadata, legs)
VALUES (%s, %s, %s, %s, %s, %s, NULL, false, NULL, 'FLOOR', NULL, 'SENT', %s, %s, 'BRL', 'BENCH',
  %s, %s, '{}', %s)
"""
ROW = "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'POST', 'BRL', '', '', %s, %s, %s, %s, %s, %s, %s, %s, %s, '{}')"  # noqa: E501
INSERT_OPERATIONS = f"""
INSERT INTO transactions_operation (id, created_at, updated_at, effective_at, organization_id,
  ledger_id, transaction_id, account_id, account_alias, portfolio_id, type, effect, asset_code,
  chart_of_accounts, description, amount, scale, balance_available, balance_on_hold,
  balance_scale, balance_available_after, balance_on_hold_after, balance_scale_after,
  balance_version, metadata)
VALUES {ROW}, {ROW}
"""
UPDATE_BALANCE = """
UPDATE organizations_balance SET available = %s, on_hold = %s, scale = %s, version = %s,
  updated_at = %s WHERE organization_id = %s AND id = %s
"""


def _refuse(status: int, code: str, description: str) -> JsonResponse:
    return JsonResponse({"code": code, "title": "Floor", "description": description}, status=status)


@csrf_exempt
def floor_transfer(request: HttpRequest, ledger_id: uuid.UUID) -> JsonResponse:
    if request.method != "POST":
        return _refuse(405, "0026", "POST only.")
    body = json.loads(request.body)
    source, destination, amount = body["source"], body["destination"], int(body["amount"])
    now, tx_id = timezone.now(), new_id()
    with transaction.atomic(durable=True), connection.cursor() as cursor:
        cursor.execute(LOCK, [ledger_id, source, destination])
        rows = {row[3]: row for row in cursor.fetchall()}
        if source == destination or len(rows) != 2:
            return _refuse(422, "0085", "Unknown or repeated alias.")
        operations: list[Any] = []
        updates, legs = [], []
        for alias, direction, sign in ((source, "DEBIT", -1), (destination, "CREDIT", 1)):
            bid, account, org, _, portfolio, available, on_hold, scale, version, ext = rows[alias]
            top = max(scale, SCALE)
            after = available * 10 ** (top - scale) + sign * amount * 10 ** (top - SCALE)
            if after < 0 and not ext:
                return _refuse(422, "0018", f"Insufficient funds in {alias}.")
            held = on_hold * 10 ** (top - scale)
            operations += [
                new_id(), now, now, now, org, ledger_id, tx_id, account, alias, portfolio,
                direction, amount, SCALE, available, on_hold, scale, after, held, top, version + 1,
            ]  # fmt: skip
            updates.append([after, held, top, version + 1, now, org, bid])
            legs.append({"accountId": str(account), "alias": alias, "portfolioId": None,
                         "direction": direction, "amount": amount, "description": "",
                         "chartOfAccounts": ""})  # fmt: skip
        cursor.execute(INSERT_TRANSACTION, [
            tx_id, now, now, now, rows[source][2], ledger_id, amount, SCALE,
            json.dumps([source]), json.dumps([destination]), json.dumps(legs),
        ])  # fmt: skip
        cursor.execute(INSERT_OPERATIONS, operations)
        for params in updates:
            cursor.execute(UPDATE_BALANCE, params)
    return JsonResponse({"id": str(tx_id), "status": "SENT", "amount": amount}, status=201)

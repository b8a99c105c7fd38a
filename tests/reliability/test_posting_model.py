"""Model-based testing of the posting service through its HTTP API.

A hypothesis state machine opens accounts (two assets), saves templates of random shapes (one or
two sources, zero to two destinations, a remaining destination or none, literal fees, pending or
not, scales 0 to 4 and 18), posts from them with consistent and inconsistent variables (some past
64 bits, some past the 38 digits a balance holds), holds, commits, reverts, cancels, blocks
accounts, retries with idempotency keys, backdates postings, closes and reopens periods, reads
balances effective at past days, schedules postings (and cancels them) that the scheduler posts
when they come due, lets holds commit themselves, moves accounts about the account tree,
reading rolled-up balances, watches trees with balance monitors (whose kept sums must stay
their trees'), and converts BRL to USD at a stored rate (direct or inverse, its
value changed as the story goes; backdated postings take the value of their time, or none).
A plain in-memory model (exact fractions,
no Django) predicts each answer: the status, the refusal code, the transaction states and every
balance. After every step the ledger is compared with the model and ``check_ledger``'s checks
run: per-asset sums are zero, statements replay to balances, no balance outside the external
accounts is below minus its overdraft limit, no refused request left anything behind, and the
journal, sealed at random steps, chains and matches the books.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from instruments.models import Rate, RateValue
from journal.services import seal
from journal.verify import MAX_NAMED
from ledgerproject.amounts import in_range
from organizations.models import Balance, Ledger
from organizations.monitors import tree_monitor_problems
from tests.conftest import Api, make_token
from tests.reliability.conftest import scaled
from transactions.expiry import expire_due
from transactions.integrity import ledger_check
from transactions.models import ScheduledPosting, Transaction
from transactions.scheduling import post_due

FIGURES: Counter[str] = Counter()
ALIASES = ["@a", "@b", "@c", "@d", "@e", "@sink"]
UNBLOCKING = {"allowSending": True, "allowReceiving": True, "status": {"code": "ACTIVE"}}
FLAG_CHANGES = [
    {"allowSending": False},
    {"allowReceiving": False},
    {"status": {"code": "BLOCKED"}},
    UNBLOCKING,
    UNBLOCKING,
]


@dataclass(frozen=True)
class Shape:
    """What a template looks like; ``text`` renders it."""

    code: str
    scale: int
    sources: int
    tos: tuple[int, ...]  # a literal added to each to-amount (0: none)
    remaining: str | None  # None, "$r" or a fixed alias
    pending: bool
    convert: int | None = None  # delivered in USD at this scale (docs/CONVERSIONS.md)

    def scales(self) -> int | dict[str, int]:
        """The scale of its amounts, or a conversion's per asset."""
        if self.convert is None:
            return self.scale
        return {"BRL": self.scale, "USD": self.convert}

    @property
    def amount_names(self) -> list[str]:
        return (
            ["total"]
            + [f"a{i}" for i in range(self.sources)]
            + [f"b{i}" for i in range(len(self.tos))]
        )

    @property
    def account_names(self) -> list[str]:
        names = [f"f{i}" for i in range(self.sources)] + [f"t{i}" for i in range(len(self.tos))]
        return [*names, "r"] if self.remaining == "$r" else names

    def text(self) -> str:
        k = self.scale
        froms = " ".join(
            f'(from $f{i} :amount BRL $a{i}|{k} (description "from $f{i} $a{i}"))'
            for i in range(self.sources)
        )
        to_asset, to_scale = ("BRL", k) if self.convert is None else ("USD", self.convert)
        tos = " ".join(
            f"(to $t{i} :amount {to_asset} $b{i}{f'+{lit}' if lit else ''}|{to_scale} "
            f"(chart-of-accounts TO_{i}))"
            for i, lit in enumerate(self.tos)
        )
        rest = f"(distribute :remaining (to {self.remaining} :remaining))" if self.remaining else ""
        pending = "(pending true)" if self.pending else ""
        convert = f"(convert USD|{self.convert})" if self.convert is not None else ""
        return (
            f"(transaction-template v1 (chart-of-accounts-group-name G) (code {self.code})\n"
            f"  {pending} (send BRL $total|{k} (source {froms})) {convert}\n"
            f"  (distribute {tos} {rest}))"
        )


@dataclass
class ModelAccount:
    alias: str
    asset: str
    external: bool = False
    available: Fraction = Fraction(0)
    on_hold: Fraction = Fraction(0)
    scale: int = 0
    allow_sending: bool = True
    allow_receiving: bool = True
    blocked: bool = False
    limit: Fraction = Fraction(0)  # how far below zero available may go
    parent: str | None = None  # in the account tree


@dataclass
class ModelTx:
    id: str
    status: str
    scale: int | dict[str, int]  # a conversion's: per asset
    legs: list[tuple[str, str, Fraction]]  # alias, DEBIT/CREDIT, amount
    is_reversal: bool = False
    parent: str | None = None
    reverted: bool = False
    funding: bool = False
    expired: bool = False  # past its expiry (PRE_APPROVED until the worker cancels it)

    def sent(self) -> Fraction:
        """Its amount: what its sources send (a conversion's conversion account aside)."""
        return sum((x for a, s, x in self.legs if s == "DEBIT" and a != "@conversion/USD"),
                   Fraction(0))  # fmt: skip


@dataclass
class ModelScheduled:
    id: str
    shape: Shape
    body: dict[str, Any]
    status: str = "SCHEDULED"


# The refusals a scheduled posting gets when it is asked for (its template's plan); the others
# wait until it is due.
PLANNED = {"0073", "0090"}


@dataclass
class Keyed:
    key: str
    body: dict[str, Any]
    status: int | None = None
    answer: bytes | None = None


class Refused(Exception):
    def __init__(self, code: str) -> None:
        self.code = code


@dataclass
class Model:
    accounts: dict[str, ModelAccount] = field(default_factory=dict)
    txs: dict[str, ModelTx] = field(default_factory=dict)
    # Effective dates: what each backdated posting did to each account, by how many days ago
    # it took effect (everything else takes effect today); the books are closed through this
    # many days ago, if at all.
    dated: dict[str, list[tuple[int, Fraction, Fraction]]] = field(default_factory=dict)
    closed_days_ago: int | None = None
    # The BRL/USD rate's values (units of USD per BRL), each with the time it took effect.
    rates: list[tuple[dt.datetime, Fraction]] = field(default_factory=list)

    def rate_at(self, at: dt.datetime) -> Fraction:
        values = [value for since, value in self.rates if since <= at]
        if not values:
            raise Refused("0126")
        return values[-1]

    def plan(
        self,
        shape: Shape,
        variables: dict[str, Any],
        at: dt.datetime | None = None,
        *,
        posting: bool = True,
    ) -> list[tuple[str, str, Fraction]]:
        """The legs, as exact values (each in its asset); ``at``: the effective time (now).
        ``posting``: a posting, whose plan makes the conversion accounts (scheduling one does
        not)."""
        rate = self.rate_at(at or timezone.now()) if shape.convert is not None else None
        unit = Fraction(1, 10**shape.scale)
        total = variables["total"]
        sources = [variables[f"a{i}"] for i in range(shape.sources)]
        tos = [variables[f"b{i}"] + lit for i, lit in enumerate(shape.tos)]
        if total == 0 or sum(sources) != total:
            raise Refused("0073")
        delivered, to_unit = total, unit
        if rate is not None and shape.convert is not None:
            # The exact product, rounded half to even (``round`` of a Fraction) at its scale.
            delivered = round(total * unit * rate * 10**shape.convert)
            to_unit = Fraction(1, 10**shape.convert)
            if delivered == 0 or delivered >= 10**38:
                raise Refused("0073")
        if sum(tos) > delivered:
            raise Refused("0073")
        rest = delivered - sum(tos)
        if rest and shape.remaining is None:
            raise Refused("0073")
        to_asset = "BRL" if rate is None else "USD"
        legs = [(variables[f"f{i}"], "DEBIT", a * unit, "BRL") for i, a in enumerate(sources)]
        if rate is not None:
            legs.append(("@conversion/USD", "DEBIT", delivered * to_unit, "USD"))
            legs.append(("@conversion/BRL", "CREDIT", total * unit, "BRL"))
        legs += [(variables[f"t{i}"], "CREDIT", b * to_unit, to_asset) for i, b in enumerate(tos)]
        if shape.remaining:
            target = variables["r"] if shape.remaining == "$r" else shape.remaining
            legs.append((target, "CREDIT", rest * to_unit, to_asset))
        legs = [leg for leg in legs if leg[2]]
        debited = {alias for alias, side, _, _ in legs if side == "DEBIT"}
        if any(side == "CREDIT" and alias in debited for alias, side, _, _ in legs):
            raise Refused("0090")
        if rate is not None and posting:  # made with it (and gone if it is refused)
            for alias, asset in (("@conversion/BRL", "BRL"), ("@conversion/USD", "USD")):
                self.accounts.setdefault(alias, ModelAccount(alias, asset, external=True))
        if any(alias not in self.accounts for alias, _, _, _ in legs):
            raise Refused("0085")
        for alias, side, _, asset in legs:
            account = self.accounts[alias]
            if account.asset != asset:
                raise Refused("0030")
            if account.blocked:
                raise Refused("0024")
            if not (account.allow_sending if side == "DEBIT" else account.allow_receiving):
                raise Refused("0024")
        return [(alias, side, amount) for alias, side, amount, _ in legs]

    def apply(
        self,
        steps: list[tuple[str, str, Fraction]],
        scale: int | dict[str, int],
        days_ago: int | None = None,
    ) -> None:
        """Apply (alias, effect, amount) steps all or nothing; 0018 if a balance goes short.
        ``scale``: the steps' (a conversion's: per asset). ``days_ago``: the steps took effect
        that many days ago."""
        scales = scale if isinstance(scale, dict) else {"BRL": scale, "USD": scale}
        after = {a: (m.available, m.on_hold) for a, m in self.accounts.items()}
        for alias, effect, amount in steps:
            available, on_hold = after[alias]
            available, on_hold = {
                "DEBIT": (available - amount, on_hold),
                "CREDIT": (available + amount, on_hold),
                "HOLD": (available - amount, on_hold + amount),
                "SETTLE": (available, on_hold - amount),
                "RELEASE": (available + amount, on_hold - amount),
            }[effect]
            account = self.accounts[alias]
            if available < -account.limit and not account.external:
                raise Refused("0018")
            assert on_hold >= 0
            digits = 10 ** max(account.scale, scales[account.asset])
            if not all(in_range(int(v * digits)) for v in (available, on_hold, account.limit)):
                raise Refused("0008")  # past 38 digits at the balance's scale
            after[alias] = (available, on_hold)
        for alias, _, _ in steps:
            account = self.accounts[alias]
            moved = (after[alias][0] - account.available, after[alias][1] - account.on_hold)
            account.available, account.on_hold = after[alias]
            account.scale = max(account.scale, scales[account.asset])
            if days_ago is not None and moved != (0, 0):
                self.dated.setdefault(alias, []).append((days_ago, *moved))


SHAPE = {
    "scale": st.sampled_from([0, 2, 4, 18]),  # 18: the tiny postings that grow a scale
    "sources": st.integers(1, 2),
    "tos": st.lists(st.sampled_from([0, 0, 1, 25]), max_size=2).map(tuple),
    "remaining": st.sampled_from([None, "$r", "$r", "@sink"]),
    "convert": st.sampled_from([None, None, None, 0, 2, 18]),  # to USD at that scale
}


def _day(days_ago: int) -> dt.date:
    return timezone.now().date() - dt.timedelta(days=days_ago)


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _days_ago(effective_at: str | None) -> int | None:
    if effective_at is None:
        return None
    return (timezone.now().date() - dt.date.fromisoformat(effective_at[:10])).days


def tally(what: str) -> None:
    FIGURES[what] += 1


def amounts(limit: int = 3_000) -> st.SearchStrategy[int]:
    return st.integers(0, limit) | st.sampled_from([0, 1, limit])


class PostingMachine(RuleBasedStateMachine):
    token: str = ""

    shapes = Bundle("shapes")
    transactions = Bundle("transactions")

    def __init__(self) -> None:
        super().__init__()
        tally("runs")
        self.api = Api(self.token)
        self.model = Model()
        self.codes = itertools.count()
        self.keys = itertools.count()
        self.keyed: list[Keyed] = []
        self.failed_keyed: list[Keyed] = []
        self.shapes_by_code: dict[str, Shape] = {}
        # Holds whose expiry the story moved to now behind the service (the stand-in for time
        # passing): the journal keeps the expiry they were posted with, and check_ledger says so.
        self.expiry_moved: set[str] = set()
        self.scheduled: dict[str, ModelScheduled] = {}
        self.tree_monitors = 0
        self.open_book()

    # --- plumbing ---------------------------------------------------------------------------

    def expect(self, response: Any, status: int, code: str | None = None) -> dict[str, Any]:
        assert response.status_code == status, (status, code, response.content)
        if "json" not in response.get("Content-Type", ""):
            return {}
        body = response.json()
        if code is not None:
            assert body["code"] == code, (code, body)
        return body

    def record_tx(self, body: dict[str, Any], legs: list, scale: int, **extra: Any) -> None:
        self.model.txs[body["id"]] = ModelTx(
            id=body["id"], status=body["status"], scale=scale, legs=legs, **extra
        )

    def open_book(self) -> None:
        org = self.expect(
            self.api.post("/v1/organizations", {"legalName": "Model", "legalDocument": "1"}), 201
        )
        ledger = self.expect(
            self.api.post(f"/v1/organizations/{org['id']}/ledgers", {"name": "Model"}), 201
        )
        self.ledger = Ledger.objects.get(pk=ledger["id"])
        self.url = f"/v1/organizations/{org['id']}/ledgers/{ledger['id']}"
        for code in ("BRL", "USD"):
            body = {"name": code, "type": "currency", "code": code}
            self.expect(self.api.post(f"{self.url}/instruments", body), 201)
            alias = f"@external/{code}"
            self.model.accounts[alias] = ModelAccount(alias=alias, asset=code, external=True)
        for alias in ("@a", "@b", "@c", "@sink"):
            self.open_account(alias, "BRL")
        for alias in ("@x", "@usink"):
            self.open_account(alias, "USD")
        fund = Shape("FUND", 2, 1, (), "$r", False)
        response = self.api.post(
            f"{self.url}/transaction-templates", fund.text(), content_type="text/plain"
        )
        self.expect(response, 201)
        self.shapes_by_code["FUND"] = fund
        for alias in ("@a", "@b"):
            self.fund(alias, 1_000_000)

    def fund(self, alias: str, amount: int) -> None:
        variables = {"total": amount, "a0": amount, "f0": "@external/BRL", "r": alias}
        body = {"transactionTypeCode": "FUND", "variables": variables}
        self.send(self.shapes_by_code["FUND"], body, None)

    def open_account(self, alias: str, asset: str) -> None:
        body = {"alias": alias, "assetCode": asset, "name": alias}
        response = self.api.post(f"{self.url}/accounts", body)
        if alias in self.model.accounts:
            self.expect(response, 409, "0020")
            return
        self.expect(response, 201)
        self.model.accounts[alias] = ModelAccount(alias=alias, asset=asset)

    def forget_accounts_since(self, before: set[str]) -> None:
        """A refused posting is rolled back whole: the conversion accounts its plan made are
        not there."""
        for alias in set(self.model.accounts) - before:
            del self.model.accounts[alias]

    def change_flags(self, alias: str, change: dict[str, Any]) -> None:
        account = self.model.accounts.get(alias)
        if account is None or account.external:
            return
        found = self.expect(self.api.get(f"{self.url}/accounts", {"alias": alias}), 200)
        self.expect(self.api.patch(f"{self.url}/accounts/{found[0]['id']}", change), 200)
        account.allow_sending = change.get("allowSending", account.allow_sending)
        account.allow_receiving = change.get("allowReceiving", account.allow_receiving)
        if "status" in change:
            account.blocked = change["status"]["code"] == "BLOCKED"

    # --- rules --------------------------------------------------------------------------------

    def set_limit(self, alias: str, amount: int, scale: int) -> None:
        """PATCH an overdraft limit; the model predicts 0074 (external), 0008 (below the current
        overdraft) or the new limit, and the scale the balance then has."""
        account = self.model.accounts[alias]
        found = self.expect(self.api.get(f"{self.url}/accounts", {"alias": alias}), 200)
        body = {"overdraftLimit": {"amount": amount, "scale": scale}}
        response = self.api.patch(f"{self.url}/accounts/{found[0]['id']}", body)
        if account.external:
            self.expect(response, 422, "0074")
            return
        limit = Fraction(amount, 10**scale)  # at the scale it was given (docs/API.md)
        top = 10 ** max(account.scale, scale)
        values = (account.available, account.on_hold, limit)
        if account.available < -limit or not all(in_range(int(v * top)) for v in values):
            tally("limit refused 0008")
            self.expect(response, 422, "0008")
            return
        tally("limit set")
        answer = self.expect(response, 200)
        account.scale = max(account.scale, scale)
        account.limit = limit
        assert answer["overdraftLimit"] == {
            "amount": int(limit * 10**account.scale), "scale": account.scale,
        }  # fmt: skip

    @rule(
        data=st.data(),
        amount=st.integers(0, 5_000) | st.sampled_from([0, 10**20]),
        scale=st.sampled_from([0, 2, 3]),
    )
    def give_an_overdraft(self, data: st.DataObject, amount: int, scale: int) -> None:
        self.set_limit(data.draw(st.sampled_from(sorted(self.model.accounts))), amount, scale)

    @rule(data=st.data(), action=st.sampled_from(["open", "fund", "fund", "flags"]))
    def manage_accounts(self, data: st.DataObject, action: str) -> None:
        """Open an account (maybe in the other asset), fund one, or (un)block one."""
        if action == "open":
            alias = data.draw(st.sampled_from(ALIASES))
            self.open_account(alias, data.draw(st.sampled_from(["BRL", "BRL", "USD"])))
        elif action == "fund":
            # Funded by a deposit: any account but a conversion account (only conversions
            # move those).
            funded = sorted(a for a in self.model.accounts if "@conversion/" not in a)
            alias = data.draw(st.sampled_from(funded))
            huge = st.sampled_from([10**30, 10**36])  # past 64 bits; 10**36 overflows at 18
            self.fund(alias, data.draw(st.integers(1, 50_000) | huge))
        else:
            alias = data.draw(st.sampled_from(ALIASES))
            self.change_flags(alias, data.draw(st.sampled_from(FLAG_CHANGES)))

    def ancestors(self, alias: str | None) -> list[str]:
        chain = []
        while alias is not None:
            chain.append(alias)
            alias = self.model.accounts[alias].parent
        return chain

    @rule(data=st.data())
    def move_an_account(self, data: st.DataObject) -> None:
        """Place an account under another (any asset) or at the top of the tree; the model
        refuses what would make it its own descendant."""
        inside = sorted(a for a, m in self.model.accounts.items() if not m.external)
        alias = data.draw(st.sampled_from(inside))
        parent = data.draw(st.sampled_from([None, *inside]))
        ids = {a: self.account_id(a) for a in (alias, parent) if a}
        body = {"parentAccountId": ids.get(parent)}
        response = self.api.patch(f"{self.url}/accounts/{ids[alias]}", body)
        if alias in self.ancestors(parent):
            tally("move refused: cycle")
            self.expect(response, 422, "0008")
            return
        tally("account moved")
        assert self.expect(response, 200)["parentAccountId"] == body["parentAccountId"]
        self.model.accounts[alias].parent = parent
        if parent is not None:
            self.check_rolled_up(parent)  # the tree the move made, read at once

    @rule(data=st.data())
    def read_a_rolled_up_balance(self, data: st.DataObject) -> None:
        parents = sorted({m.parent for m in self.model.accounts.values() if m.parent})
        self.check_rolled_up(data.draw(st.sampled_from(parents or sorted(self.model.accounts))))

    def check_rolled_up(self, alias: str) -> None:
        """An account's rolled-up balance is the sum of its subtree's, per asset, at the largest
        scale among them."""
        under = [a for a in self.model.accounts if alias in self.ancestors(a)]
        expected = []
        for asset in sorted({self.model.accounts[a].asset for a in under}):
            mine = [self.model.accounts[a] for a in under if self.model.accounts[a].asset == asset]
            scale = max(m.scale for m in mine)
            available, on_hold = sum(m.available for m in mine), sum(m.on_hold for m in mine)
            values = {"available": available * 10**scale, "onHold": on_hold * 10**scale}
            expected.append({"assetCode": asset, **{k: int(v) for k, v in values.items()}})
            expected[-1]["scale"] = scale
        url = f"{self.url}/accounts/{self.account_id(alias)}/rolled-up-balance"
        assert self.expect(self.api.get(url), 200)["balances"] == expected
        tally("rolled-up balances read" + (" of a tree" if len(under) > 1 else ""))

    @rule(data=st.data())
    def watch_a_tree(self, data: st.DataObject) -> None:
        """A tree monitor on an account, in either asset: from then on, every step keeps its
        sum equal to its tree's (the invariant, through ``tree_monitor_problems``)."""
        if self.tree_monitors >= 4:
            return
        inside = sorted(a for a, m in self.model.accounts.items() if not m.external)
        body = {
            "accountId": self.account_id(data.draw(st.sampled_from(inside))),
            "tree": True,
            "assetCode": data.draw(st.sampled_from(["BRL", "USD"])),
            "measure": data.draw(st.sampled_from(["available", "onHold", "overdraftUsed"])),
            "condition": "crossing",
            "threshold": {"amount": data.draw(st.integers(0, 10_000)), "scale": 2},
        }
        self.expect(self.api.post(f"{self.url}/balance-monitors", body), 201)
        self.tree_monitors += 1
        tally("tree monitors made")

    def account_id(self, alias: str) -> str:
        return self.expect(self.api.get(f"{self.url}/accounts", {"alias": alias}), 200)[0]["id"]

    @initialize(
        target=shapes,
        inverse=st.booleans(),
        amount=st.integers(1, 10**4) | st.sampled_from([1, 10**18 - 1]),
        scale=st.sampled_from([0, 1, 2, 4, 18]),
        convert=st.sampled_from([0, 2, 18]),
        pending=st.booleans(),
        data=st.data(),
    )
    def set_up_conversions(
        self, inverse: bool, amount: int, scale: int, convert: int, pending: bool, data: Any
    ) -> Shape:
        """The rate, a converting template, and a first conversion from the outside world of
        an amount the rate turns into at least one unit of USD: every story converts, so both
        directions are met however the stories fall (most of the rule's own conversions are
        of amounts an extreme rate turns into nothing, and are refused)."""
        self.set_up_the_rate(inverse, amount, scale)
        shape = self.save_template(2, 1, (), "$r", pending, convert)
        body = self.draw_body(shape, data, True, None)
        usd_per_brl = self.model.rates[-1][1]
        total = -(-Fraction(10**shape.scale, 10**convert) // usd_per_brl)  # ceiling
        body["variables"].update({"f0": "@external/BRL", "total": total, "a0": total})
        self.send(shape, body, None)
        return shape

    def set_up_the_rate(self, inverse: bool, amount: int, scale: int) -> None:
        """The BRL/USD rate (or, stored the other way round, USD/BRL), in force since a day and
        a half ago: a posting backdated before then has no rate (0126)."""
        pair = ("USD", "BRL") if inverse else ("BRL", "USD")
        body = {"baseAssetCode": pair[0], "counterAssetCode": pair[1], "amount": amount}
        self.rate = self.expect(
            self.api.post(f"{self.url}/asset-rates", {**body, "scale": scale}), 201
        )
        since = timezone.now() - dt.timedelta(hours=36)
        Rate.objects.filter(pk=self.rate["id"]).update(created_at=since)
        RateValue.objects.filter(rate_id=self.rate["id"]).update(valid_from=since)
        self.model.rates.append((since, self.rate_value(amount, scale)))

    def rate_value(self, amount: int, scale: int) -> Fraction:
        """USD per BRL, whichever way the rate is stored."""
        stored = Fraction(amount, 10**scale)
        return 1 / stored if self.rate["baseAssetCode"] == "USD" else stored

    @precondition(lambda self: len(self.model.rates) < 4)  # a few changes a story, no more
    @rule(amount=st.integers(1, 10**6), scale=st.sampled_from([0, 2, 3, 18]))
    def change_the_rate(self, amount: int, scale: int) -> None:
        """A new value from now on; postings backdated before it keep converting at the old."""
        url = f"{self.url}/asset-rates/{self.rate['id']}"
        self.expect(self.api.patch(url, {"amount": amount, "scale": scale}), 200)
        self.model.rates.append((timezone.now(), self.rate_value(amount, scale)))
        tally("rate changed")

    def converting(self) -> list[str]:
        return sorted(c for c, shape in self.shapes_by_code.items() if shape.convert is not None)

    @precondition(lambda self: self.converting())
    @rule(data=st.data(), keyed=st.booleans(), then=st.sampled_from([None, "revert"]))
    def post_a_conversion(self, data: st.DataObject, keyed: bool, then: str | None) -> None:
        """Conversions get a rule of their own, and are sometimes reverted (or, pending,
        canceled) straight away; the model expects both assets back exactly where they were."""
        shape = self.shapes_by_code[data.draw(st.sampled_from(self.converting()))]
        body = self.draw_body(shape, data, True, None)
        # From the accounts funded at the start (or the outside world), so that most convert.
        first = data.draw(st.sampled_from(["@a", "@b", "@external/BRL"]), label="funded")
        body["variables"]["f0"] = first
        if shape.sources == 2:
            body["variables"]["f1"] = "@a" if first == "@external/BRL" else "@external/BRL"
        key = Keyed(key=f"key-{next(self.keys)}", body=body) if keyed else None
        before = set(self.model.txs)
        self.send(shape, body, key)
        made = set(self.model.txs) - before
        if then and made:
            self.act(data=data, action=then, tx_id=made.pop())

    @initialize(target=shapes, **SHAPE, pending=st.just(True))
    def save_a_pending_template(self, **shape: Any) -> Shape:
        return self.save_template(**shape)

    @initialize(target=shapes, **SHAPE, pending=st.just(False))
    def save_a_plain_template(self, **shape: Any) -> Shape:
        return self.save_template(**shape)

    @rule(target=shapes, **SHAPE, pending=st.booleans())
    def save_template(
        self,
        scale: int,
        sources: int,
        tos: tuple[int, ...],
        remaining: str | None,
        pending: bool,
        convert: int | None = None,
    ) -> Shape:
        if not tos and remaining is None:
            remaining = "$r"
        if convert is not None and remaining == "@sink":
            remaining = "@usink"
        code = f"T{next(self.codes)}"
        shape = Shape(code, scale, sources, tos, remaining, pending, convert)
        response = self.api.post(
            f"{self.url}/transaction-templates", shape.text(), content_type="text/plain"
        )
        assert response.status_code == 201, (shape.text(), response.content)
        self.shapes_by_code[shape.code] = shape
        return shape

    @rule(
        shape=shapes,
        data=st.data(),
        consistent=st.sampled_from([True, True, True, False]),
        pending=st.sampled_from([None, None, True, False]),
        keyed=st.booleans(),
        days_ago=st.sampled_from([1, 2, 4, 12, None]),
    )
    def post(
        self,
        shape: Shape,
        data: st.DataObject,
        consistent: bool,
        pending: bool | None,
        keyed: bool,
        days_ago: int | None = None,
    ) -> None:
        body = self.draw_body(shape, data, consistent, pending)
        if days_ago is not None:
            body["effectiveAt"] = f"{_day(days_ago).isoformat()}T12:00:00Z"
        key = Keyed(key=f"key-{next(self.keys)}", body=body) if keyed else None
        self.send(shape, body, key)

    def draw_body(
        self, shape: Shape, data: st.DataObject, consistent: bool, pending: bool | None
    ) -> dict[str, Any]:
        """A posting's body: accounts mostly of the asset and apart, amounts that add up
        (``consistent``) or anything."""
        variables: dict[str, Any] = {}
        # Any alias a client may name (the ledger's conversion accounts are not theirs to).
        unusual = [*sorted(a for a in self.model.accounts if "@conversion/" not in a), "@ghost"]
        for name in shape.account_names:
            # Sources send BRL; destinations receive BRL, or USD from a conversion.
            asset = "USD" if name[0] != "f" and shape.convert is not None else "BRL"
            usual = sorted(
                a for a, m in self.model.accounts.items() if m.asset == asset and not m.external
            ) or ["@external/BRL"]
            if asset == "BRL":
                usual = sorted({*usual, "@external/BRL"})
            rare = data.draw(st.integers(0, 9), label=f"{name} rare") == 0
            choices = unusual if rare else usual
            if name[0] != "f" and not rare:
                sources = {variables[f"f{i}"] for i in range(shape.sources)}
                choices = [a for a in usual if a not in sources] or usual
            variables[name] = data.draw(st.sampled_from(choices), label=name)
        if consistent:
            huge = st.sampled_from([10**20, 10**35])
            total = data.draw(st.integers(1, 2_000) | huge, label="total")
            split = data.draw(st.integers(0, total), label="split") if shape.sources == 2 else 0
            variables.update({"total": total, "a0": total - split})
            if shape.sources == 2:
                variables["a1"] = split
            room = total
            for i, lit in enumerate(shape.tos):
                b = data.draw(st.integers(0, max(0, room - lit)), label=f"b{i}")
                variables[f"b{i}"] = b
                room -= b + lit
        else:
            for name in shape.amount_names:
                variables[name] = data.draw(amounts(), label=name)
        body: dict[str, Any] = {"transactionTypeCode": shape.code, "variables": variables}
        if pending is not None:
            body["pending"] = pending
        return body

    @rule(shape=shapes, data=st.data(), keyed=st.booleans())
    def post_held(self, shape: Shape, data: st.DataObject, keyed: bool) -> None:
        """Holds get a rule of their own, so that commits and cancels have work to do."""
        self.post(shape=shape, data=data, consistent=True, pending=True, keyed=keyed)

    def send(self, shape: Shape, body: dict[str, Any], key: Keyed | None) -> None:
        headers = {"HTTP_IDEMPOTENCY_KEY": key.key} if key else {}
        response = self.api.post(f"{self.url}/transactions", body, **headers)
        pending = shape.pending if body.get("pending") is None else body["pending"]
        days_ago = _days_ago(body.get("effectiveAt"))
        closed = self.model.closed_days_ago
        at = body.get("effectiveAt")
        before = set(self.model.accounts)
        try:
            legs = self.model.plan(shape, body["variables"], at and _instant(at))
            if days_ago is not None and closed is not None and days_ago >= closed:
                raise Refused("0124")
            holds = [(a, "HOLD", x) for a, side, x in legs if side == "DEBIT"]
            steps = holds if pending else legs
            self.model.apply(steps, shape.scales(), days_ago)
        except Refused as refusal:
            self.forget_accounts_since(before)
            converting = " (conversion)" if shape.convert is not None else ""
            tally(f"post refused {refusal.code}{converting}")
            self.expect(response, 422, refusal.code)
            if key:
                self.failed_keyed.append(key)
            return
        answer = self.expect(response, 201)
        tally(f"post {answer['status']}" + (" backdated" if days_ago is not None else ""))
        assert answer["status"] == ("PRE_APPROVED" if pending else "SENT")
        assert answer["amount"] == {"amount": body["variables"]["total"], "scale": shape.scale}
        self.record_tx(answer, legs, shape.scales(), funding=shape.code == "FUND")
        if shape.convert is not None:
            # What it recorded: the model's rate, both amounts, the direction it was stored in.
            (paid,) = [x for a, side, x in legs if a == "@conversion/USD"]
            recorded = answer["conversion"]
            assert recorded["delivered"] == {
                "assetCode": "USD", "amount": int(paid * 10**shape.convert),
                "scale": shape.convert,
            }  # fmt: skip
            assert recorded["sent"]["amount"] == body["variables"]["total"]
            assert recorded["rate"]["id"] == self.rate["id"]
            inverse = self.rate["baseAssetCode"] == "USD"
            assert recorded["rate"]["direction"] == ("INVERSE" if inverse else "DIRECT")
            tally("conversion " + recorded["rate"]["direction"])
        if key:
            key.status, key.answer = 201, response.content
            self.keyed.append(key)

    @precondition(lambda self: self.keyed or self.failed_keyed)
    @rule(data=st.data(), kind=st.sampled_from(["same", "changed", "refused"]))
    def retry(self, data: st.DataObject, kind: str) -> None:
        """A used key answers the first response again (or 0084 for another body); a refused
        request stored nothing, so its key is free and the retry is judged afresh."""
        if kind == "refused" and self.failed_keyed:
            key = data.draw(st.sampled_from(self.failed_keyed))
            self.failed_keyed.remove(key)
            self.send(self.shapes_by_code[key.body["transactionTypeCode"]], key.body, key)
            return
        if not self.keyed:
            return
        key = data.draw(st.sampled_from(self.keyed))
        body = key.body if kind == "same" else {**key.body, "metadata": {"retry": "changed"}}
        response = self.api.post(f"{self.url}/transactions", body, HTTP_IDEMPOTENCY_KEY=key.key)
        if kind == "same":
            tally("replayed")
            assert response.status_code == key.status
            # The same JSON (PostgreSQL's jsonb keeps the stored answer, not its key order).
            assert json.loads(response.content) == json.loads(key.answer or b"")
            assert response["Idempotent-Replayed"] == "true"
        else:
            self.expect(response, 422, "0084")

    def held(self) -> list[str]:
        return sorted(t for t, m in self.model.txs.items() if m.status == "PRE_APPROVED")

    @precondition(lambda self: self.held())
    @rule(data=st.data(), action=st.sampled_from(["commit", "commit", "revert", "cancel"]))
    def settle_a_hold(self, data: st.DataObject, action: str) -> None:
        self.act(data=data, action=action, tx_id=data.draw(st.sampled_from(self.held())))

    @precondition(lambda self: self.held())
    @rule(data=st.data())
    def commit_a_part(self, data: st.DataObject) -> None:
        """Commit a smaller amount: only one source and one destination may (else 0008)."""
        tx = self.model.txs[data.draw(st.sampled_from(self.held()))]
        scale = tx.scale["BRL"] if isinstance(tx.scale, dict) else tx.scale
        unit = 10**scale
        total = int(tx.sent() * unit)
        part = data.draw(st.integers(1, total), label="part")
        response = self.api.post(f"{self.url}/transactions/{tx.id}/commit", {"amount": part})
        try:
            self.predict_commit(tx, Fraction(part, unit))
        except Refused as refusal:
            tally(f"partial commit refused {refusal.code}")
            self.expect(response, 422, refusal.code)
            return
        tally("partial commit done" if part < total else "partial commit of everything")
        answer = self.expect(response, 200)
        assert answer["status"] == "SENT" and answer["amount"] == {
            "amount": part, "scale": scale,
        }  # fmt: skip

    @precondition(lambda self: self.held())
    @rule(data=st.data(), then=st.sampled_from(["commit", "worker", "nothing"]))
    def let_a_hold_expire(self, data: st.DataObject, then: str) -> None:
        """Time passes for one hold (its expiry set to now). A commit is then refused even
        before the worker ran; the worker cancels every expired hold as a cancel does."""
        tx = self.model.txs[data.draw(st.sampled_from(self.held()))]
        Transaction.objects.filter(pk=tx.id).update(expires_at=timezone.now())
        self.expiry_moved.add(tx.id)
        tx.expired = True
        tally(f"hold expired, then {then}")
        if then == "commit":
            response = self.api.post(f"{self.url}/transactions/{tx.id}/commit")
            self.expect(response, 422, "0099")
            tally("commit after expiry refused")
        elif then == "worker":
            self.run_worker()

    def run_worker(self) -> None:
        due = [t for t in self.model.txs.values() if t.expired and t.status == "PRE_APPROVED"]
        expired = expire_due(limit=1_000)
        released = 0
        for tx in due:
            try:
                self.model.apply(
                    [(a, "RELEASE", x) for a, s, x in tx.legs if s == "DEBIT"], tx.scale
                )
            except Refused as refusal:
                # A release that would pass 38 digits of available (the account was credited
                # up to the limit while the hold stood) is refused like any such step; the
                # worker leaves the hold as it is.
                assert refusal.code == "0008"
                tally("expiry refused 0008")
                assert Transaction.objects.get(pk=tx.id).status == "PRE_APPROVED"
                continue
            released += 1
            tally("expired by the worker")
            reversal = Transaction.objects.get(parent_id=tx.id, is_reversal=True)
            mirrored = [(a, "CREDIT" if s == "DEBIT" else "DEBIT", x) for a, s, x in tx.legs]
            self.model.txs[str(reversal.pk)] = ModelTx(
                id=str(reversal.pk), status="SENT", scale=tx.scale, legs=mirrored,
                is_reversal=True, parent=tx.id,
            )  # fmt: skip
            tx.status, tx.reverted = "CANCELED", True
        # Earlier examples' ledgers share the database: their expired holds go too.
        assert expired >= released

    def predict_commit(self, tx: ModelTx, part: Fraction | None = None) -> None:
        """Commit (all, or ``part``): the status, then the expiry, then the split."""
        if tx.status != "PRE_APPROVED" or tx.expired:
            raise Refused("0099")
        total = tx.sent()
        if part is None or part == total:
            self.model.apply(
                [(a, "SETTLE" if s == "DEBIT" else "CREDIT", x) for a, s, x in tx.legs],
                tx.scale,
            )
            tx.status = "SENT"
            return
        sources = [(a, x) for a, s, x in tx.legs if s == "DEBIT"]
        destinations = [(a, x) for a, s, x in tx.legs if s == "CREDIT"]
        if isinstance(tx.scale, dict) or len(sources) != 1 or len(destinations) != 1:
            raise Refused("0008")  # a conversion, or a split: how to take a part is unclear
        (source, _), (destination, _) = sources[0], destinations[0]
        self.model.apply(
            [(source, "SETTLE", part), (source, "RELEASE", total - part),
             (destination, "CREDIT", part)],
            tx.scale,
        )  # fmt: skip
        tx.legs = [(source, "DEBIT", part), (destination, "CREDIT", part)]
        tx.status = "SENT"

    @precondition(lambda self: self.model.txs)
    @rule(data=st.data(), action=st.sampled_from(["commit", "revert", "cancel"]))
    def act(self, data: st.DataObject, action: str, tx_id: str | None = None) -> None:
        if tx_id is None:
            ours = sorted(t for t, m in self.model.txs.items() if not m.funding)
            tx_id = data.draw(st.sampled_from(ours or sorted(self.model.txs)))
        tx = self.model.txs[tx_id]
        response = self.api.post(f"{self.url}/transactions/{tx.id}/{action}")
        try:
            outcome = self.predict(tx, action)
        except Refused as refusal:
            tally(f"{action} refused {refusal.code}")
            self.expect(response, 422, refusal.code)
            return
        tally(f"{action} done" + (" of a conversion" if isinstance(tx.scale, dict) else ""))
        answer = self.expect(response, 200 if action == "commit" else 201)
        if outcome == "commit":
            assert answer["id"] == tx.id and answer["status"] == "SENT"
            return
        assert answer["parentTransactionId"] == tx.id and answer["status"] == "SENT"
        mirrored = [(a, "CREDIT" if s == "DEBIT" else "DEBIT", x) for a, s, x in tx.legs]
        self.record_tx(answer, mirrored, tx.scale, is_reversal=True, parent=tx.id)
        if outcome == "cancel":
            tx.status = "CANCELED"
        tx.reverted = True

    def predict(self, tx: ModelTx, action: str) -> str:
        if action == "commit":
            self.predict_commit(tx)
            return "commit"
        if tx.is_reversal:
            raise Refused("0088")
        if tx.status == "CANCELED":
            raise Refused("0099")
        if tx.reverted:
            raise Refused("0087")
        if tx.status == "PRE_APPROVED":
            self.model.apply([(a, "RELEASE", x) for a, s, x in tx.legs if s == "DEBIT"], tx.scale)
            return "cancel"
        if action == "cancel":
            raise Refused("0099")
        self.model.apply(
            [(a, "CREDIT" if s == "DEBIT" else "DEBIT", x) for a, s, x in tx.legs], tx.scale
        )
        return "revert"

    @rule(days_ago=st.sampled_from([3, 6, 12]))
    def close_a_period(self, days_ago: int) -> None:
        """Close the books through a past day, or (the model's token reaches everything)
        reopen them back to it; nothing backdated into them is written afterwards."""
        closed = self.model.closed_days_ago
        tally("period reopened" if closed is not None and days_ago > closed else "period closed")
        body = {"closedThrough": _day(days_ago).isoformat()}
        answer = self.expect(self.api.patch(self.url, body), 200)
        assert answer["closedThrough"] == body["closedThrough"]
        self.model.closed_days_ago = days_ago

    @rule(data=st.data(), days_ago=st.sampled_from([1, 2, 4, 8, 12, 13]))
    def read_an_effective_balance(self, data: st.DataObject, days_ago: int) -> None:
        """The balance effective at the end of a past day: what the postings backdated to it
        or before did (everything else took effect today)."""
        dated = sorted(self.model.dated) or sorted(self.model.accounts)
        alias = data.draw(st.sampled_from(dated), label="account")
        found = self.expect(self.api.get(f"{self.url}/accounts", {"alias": alias}), 200)
        at = {"at": _day(days_ago).isoformat()}
        answer = self.expect(self.api.get(f"{self.url}/accounts/{found[0]['id']}/balance", at), 200)
        unit = Fraction(1, 10 ** answer["scale"])
        counted = [(a, h) for d, a, h in self.model.dated.get(alias, []) if d >= days_ago]
        tally("effective balances read" if counted else "effective balances read, empty")
        expected = (sum(a for a, _ in counted), sum(h for _, h in counted))
        assert (answer["available"] * unit, answer["onHold"] * unit) == expected

    @rule(shape=shapes, data=st.data(), pending=st.sampled_from([None, None, True]))
    def schedule_a_posting(self, shape: Shape, data: st.DataObject, pending: bool | None) -> None:
        """A posting kept for later: refused now only by what its template's plan refuses."""
        body = self.draw_body(shape, data, True, pending)
        body["scheduledFor"] = (timezone.now() + dt.timedelta(hours=1)).isoformat()
        response = self.api.post(f"{self.url}/transactions", body)
        try:
            self.model.plan(shape, body["variables"], posting=False)
        except Refused as refusal:
            if refusal.code in PLANNED:
                tally(f"scheduling refused {refusal.code}")
                self.expect(response, 422, refusal.code)
                return
        answer = self.expect(response, 202)
        assert answer["status"] == "SCHEDULED" and answer["transactionId"] is None
        tally("scheduled")
        self.scheduled[answer["id"]] = ModelScheduled(answer["id"], shape, body)

    def waiting(self) -> list[str]:
        return sorted(i for i, row in self.scheduled.items() if row.status == "SCHEDULED")

    @precondition(lambda self: self.scheduled)
    @rule(data=st.data())
    def cancel_a_scheduled_posting(self, data: st.DataObject) -> None:
        """Mostly one still waiting; sometimes one already posted, failed or canceled."""
        final = data.draw(st.integers(0, 3), label="final") == 0 or not self.waiting()
        row = self.scheduled[
            data.draw(st.sampled_from(sorted(self.scheduled) if final else self.waiting()))
        ]
        response = self.api.post(f"{self.url}/scheduled-postings/{row.id}/cancel")
        if row.status != "SCHEDULED":
            tally("scheduled cancel refused 0099")
            self.expect(response, 422, "0099")
            return
        tally("scheduled canceled")
        assert self.expect(response, 200)["status"] == "CANCELED"
        row.status = "CANCELED"

    @precondition(lambda self: self.waiting())
    @rule(data=st.data(), days_ago=st.sampled_from([0, 0, 1, 4, 12]))
    def let_scheduled_postings_come_due(self, data: st.DataObject, days_ago: int) -> None:
        """Time passes for some scheduled postings (their moment set that many days back, the
        scheduler stopped meanwhile), and the scheduler runs: each is posted once, in order,
        effective at its moment, or fails as a posting then would have been refused (a
        closed period included)."""
        due = data.draw(st.lists(st.sampled_from(self.waiting()), min_size=1, unique=True))
        start = timezone.now() - dt.timedelta(days=days_ago, minutes=1)
        moments = [start + dt.timedelta(seconds=i) for i in range(len(due))]
        for scheduled_id, at in zip(due, moments, strict=True):
            ScheduledPosting.objects.filter(pk=scheduled_id).update(scheduled_for=at)
        post_due(limit=1_000)
        stored = {str(row.pk): row for row in ScheduledPosting.objects.filter(pk__in=due)}
        closed = self.model.closed_days_ago
        for scheduled_id, at in zip(due, moments, strict=True):
            row, found = self.scheduled[scheduled_id], stored[scheduled_id]
            days = (timezone.now().date() - at.date()).days
            pending = row.shape.pending if row.body.get("pending") is None else row.body["pending"]
            before = set(self.model.accounts)
            try:
                legs = self.model.plan(row.shape, row.body["variables"], at)
                if closed is not None and days >= closed:
                    raise Refused("0124")
                holds = [(a, "HOLD", x) for a, side, x in legs if side == "DEBIT"]
                self.model.apply(holds if pending else legs, row.shape.scales(), days or None)
            except Refused as refusal:
                self.forget_accounts_since(before)
                tally(f"scheduled failed {refusal.code}")
                assert (found.status, found.error["code"]) == ("FAILED", refusal.code)
                row.status = "FAILED"
                continue
            tally("scheduled posted" + (" backdated" if days else ""))
            assert found.status == "POSTED", (found.status, found.error)
            row.status = "POSTED"
            tx = Transaction.objects.get(pk=found.transaction_id)
            assert tx.effective_at == at
            self.model.txs[str(tx.pk)] = ModelTx(
                id=str(tx.pk), status="PRE_APPROVED" if pending else "SENT",
                scale=row.shape.scales(), legs=legs,
            )  # fmt: skip

    def committable(self) -> list[str]:
        return [t for t in self.held() if not self.model.txs[t].expired]

    @precondition(lambda self: self.committable())
    @rule(data=st.data())
    def let_a_hold_commit_itself(self, data: st.DataObject) -> None:
        """A hold's commitAt comes (set to now: the stand-in for time passing) and the
        scheduler commits it in full, or leaves it pending with no commitAt when the commit is
        refused."""
        tx = self.model.txs[data.draw(st.sampled_from(self.committable()))]
        Transaction.objects.filter(pk=tx.id).update(commit_at=timezone.now())
        post_due(limit=1_000)
        stored = Transaction.objects.get(pk=tx.id)
        try:
            self.predict_commit(tx)
        except Refused as refusal:
            tally(f"hold's own commit refused {refusal.code}")
            assert (stored.status, stored.commit_at) == ("PRE_APPROVED", None)
            return
        tally("hold committed itself")
        assert stored.status == "SENT"

    @rule()
    def seal_the_journal(self) -> None:
        """The journal's blocks, at any point of the story: after any steps, the chain and the
        books against it verify (``ledger_check``)."""
        tally("journal seals")
        seal(self.ledger.organization_id, self.ledger.pk)

    # --- invariants ---------------------------------------------------------------------------

    @invariant()
    def the_ledger_matches_the_model(self) -> None:
        tally("steps checked")
        rows = Balance.objects.filter(ledger_id=self.ledger.pk).select_related("account")
        seen = {}
        for row in rows:
            unit = Fraction(1, 10**row.scale)
            seen[row.account.alias] = (row.available * unit, row.on_hold * unit, row.scale)
            if not row.is_external:
                assert row.available >= -row.overdraft_limit, row.account.alias
                if row.available < 0:
                    tally("steps with an overdrawn account")
                assert row.on_hold >= 0 and row.overdraft_limit >= 0, row.account.alias
        expected = {a: (m.available, m.on_hold, m.scale) for a, m in self.model.accounts.items()}
        assert seen == expected
        assert tree_monitor_problems(self.ledger) == []
        for asset in ("BRL", "USD"):
            assert sum(v[0] + v[1] for a, v in seen.items() if self.asset(a) == asset) == 0
        stored = {
            str(pk): (status, is_reversal, parent and str(parent))
            for pk, status, is_reversal, parent in Transaction.objects.filter(
                ledger_id=self.ledger.pk
            ).values_list("id", "status", "is_reversal", "parent_id")
        }
        assert stored == {
            t.id: (t.status, t.is_reversal, t.parent) for t in self.model.txs.values()
        }
        scheduled = dict(
            ScheduledPosting.objects.filter(ledger_id=self.ledger.pk).values_list("id", "status")
        )
        assert {str(k): v for k, v in scheduled.items()} == {
            i: row.status for i, row in self.scheduled.items()
        }
        report = ledger_check(self.ledger)
        moved = {
            f"ledger {self.ledger.pk}: transaction {t}: expiresAt no longer as its journal "
            for t in self.expiry_moved
        }
        named = [v for v in report.violations if any(v.startswith(m) for m in moved)]
        assert len(named) == min(len(moved), MAX_NAMED), (moved, report.violations)
        others = [v for v in report.violations if v not in named and not v.startswith("and ")]
        assert others == [], others

    def asset(self, alias: str) -> str:
        return self.model.accounts[alias].asset


@pytest.mark.slow
def test_the_posting_service_agrees_with_its_model(db):
    PostingMachine.token = make_token("model")
    run_state_machine_as_test(
        PostingMachine,
        settings=settings(
            max_examples=scaled(25, 300),
            stateful_step_count=scaled(40, 80),
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
    print("model-based figures:", dict(sorted(FIGURES.items())))
    # The account tree was exercised: accounts moved, and a rolled-up balance read of a tree.
    assert FIGURES["account moved"] and FIGURES["rolled-up balances read of a tree"], FIGURES
    # So were conversions, at a rate stored either way round, and reverted.
    assert FIGURES["conversion DIRECT"] and FIGURES["conversion INVERSE"], FIGURES
    undone = FIGURES["revert done of a conversion"] + FIGURES["cancel done of a conversion"]
    assert undone, FIGURES

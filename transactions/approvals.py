"""Maker-checker approvals in the back office (docs/BACK-OFFICE.md#approvals).

A ledger's rules (``ApprovalRule``) say which actions need a second person: a manual posting,
or a revert, in an asset (or any), of more than an amount (or any); an overdraft limit set
above an amount; reopening a closed period. Such an action is not done
when asked: it becomes a proposal (``Approval``, ``PENDING``) with the maker's reason and a
summary of what it would do, and nothing moves. Another member of staff, who may decide
(``transactions.decide_approval``), approves or rejects it with a reason of their own; the
maker cannot (the database refuses a checker who is the maker too). Approving acts through the
same engine as the API, as the checker, with the maker's reason on the action's events: the
approval is marked done inside the action's own database transaction, so it is done once or
not at all. If the books changed so that the action no longer applies, the engine refuses it
with the API's code and the approval is ``FAILED`` with that refusal. Every proposal and
decision is an event of the ledger (``approval.proposed``, ``.approved``, ``.rejected``,
``.failed``): the audit trail and the journal keep them."""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import uuid
from collections.abc import Sequence
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from ledgerproject import actors
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.formats import parse_timestamp, render_timestamp
from organizations import contents, services
from organizations.models import Account, Ledger
from outbox import events, renderers
from templates_dsl.selectors import templates_active
from transactions import engine, states
from transactions.models import Approval, ApprovalRule, Transaction
from transactions.money import rescale
from transactions.prepare import PostingRequest

PROPOSED, APPROVED, REJECTED, FAILED = events.APPROVAL_STEPS


def rule_for(ledger: Ledger, action: str, asset_code: str, amount: int, scale: int) -> Any:
    """The first rule of ``ledger`` that ``action`` on ``amount`` (at ``scale``) of
    ``asset_code`` falls under, or None: it may be done at once."""
    rules = ApprovalRule.objects.filter(
        organization_id=ledger.organization_id, ledger_id=ledger.pk, action=action
    )
    for rule in rules.order_by("created_at", "id"):
        if _holds(rule, asset_code, amount, scale):
            return rule
    return None


def _holds(rule: ApprovalRule, asset_code: str, amount: int, scale: int) -> bool:
    """Whether ``rule`` holds an action on ``amount`` (at ``scale``) of ``asset_code``."""
    if rule.asset_code not in ("", asset_code):
        return False
    if rule.above is None:
        return True
    common = max(scale, rule.above_scale)
    return rescale(amount, scale, common) > rescale(rule.above, rule.above_scale, common)


def preview_if_approval_needed(ledger: Ledger, request: PostingRequest) -> Transaction | None:
    """The posting ``request`` would make (a dry run), when a rule of ``ledger`` says it needs
    approval; None when it may be posted at once. A refusal of the dry run is raised. A
    conversion is held by a rule of either asset: what it sends, or what it delivers."""
    if not ApprovalRule.objects.filter(
        organization_id=ledger.organization_id, ledger_id=ledger.pk, action=ApprovalRule.POST
    ).exists():
        return None
    tx = engine.post(ledger, request, dry_run=True).transaction
    assert tx is not None
    sides = [(tx.asset_code, tx.amount, tx.scale)]
    if tx.conversion:
        delivered = tx.conversion["delivered"]
        sides.append((delivered["assetCode"], delivered["amount"], delivered["scale"]))
    needed = any(rule_for(ledger, ApprovalRule.POST, *side) is not None for side in sides)
    return tx if needed else None


def reverts_needing_approval(txs: Sequence[Transaction]) -> set[uuid.UUID]:
    """Those of ``txs`` whose revert a rule of their ledger sends for approval: sent ones
    only (a pending one's revert is its cancel, which none holds). The rules of all their
    ledgers are read in one query."""
    sent = [tx for tx in txs if tx.status == Transaction.SENT]
    if not sent:
        return set()
    rules = ApprovalRule.objects.filter(
        organization_id__in={tx.organization_id for tx in sent},
        ledger_id__in={tx.ledger_id for tx in sent},
        action=ApprovalRule.REVERT,
    )
    by_ledger: dict[uuid.UUID, list[ApprovalRule]] = {}
    for rule in rules:
        by_ledger.setdefault(rule.ledger_id, []).append(rule)
    return {
        tx.pk
        for tx in sent
        if any(
            _holds(r, tx.asset_code, tx.amount, tx.scale) for r in by_ledger.get(tx.ledger_id, [])
        )
    }


def limit_needs_approval(account: Account, limit: dict[str, int] | None) -> bool:
    """Whether setting ``account``'s overdraft limit to ``limit`` needs approval."""
    if limit is None:
        return False
    ledger = account.ledger
    found = rule_for(
        ledger, ApprovalRule.LIMIT, account.asset_code, limit["amount"], limit["scale"]
    )
    return found is not None


def reopen_needs_approval(ledger: Ledger, data: dict[str, Any]) -> bool:
    """Whether the ledger change ``data`` moves its closed period back and a rule says that
    needs approval."""
    if "closed_through" not in data or ledger.closed_through is None:
        return False
    through = data["closed_through"]
    if through is not None and through >= ledger.closed_through:
        return False
    return rule_for(ledger, ApprovalRule.REOPEN, "", 0, 0) is not None


def propose_change(
    ledger: Ledger, action: str, target: Any, data: dict[str, Any], *, summary: str, reason: str
) -> Approval:
    """A change of an account (``limit``) or of the ledger (``reopen``), as its admin form
    would have written it, kept for approval."""
    kept = {name: _plain(value) for name, value in data.items()}
    return _propose(ledger, action, {"target": str(target.pk), "data": kept}, summary, reason)


def _plain(value: Any) -> Any:
    """A change's value as JSON keeps it: a chosen row by its id, an id or a day as text."""
    if isinstance(value, models.Model):
        return str(value.pk)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _change(approval: Approval) -> Any:
    """Make the change an approval of ``limit`` or ``reopen`` proposed, through the service
    the admin form uses."""
    target, data = approval.request["target"], dict(approval.request["data"])
    if approval.action == ApprovalRule.LIMIT:
        account = Account.objects.get(organization_id=approval.organization_id, pk=target)
        return contents.account_update(account=account, data=data)
    if data.get("closed_through"):
        data["closed_through"] = dt.date.fromisoformat(data["closed_through"])
    ledger = Ledger.objects.get(organization_id=approval.organization_id, pk=target)
    # The rule asked for a second person; with their approval the period is reopened.
    return services.ledger_update(ledger=ledger, data=data, may_reopen=True)


def pending_revert(tx: Transaction) -> Approval | None:
    """The revert of ``tx`` proposed and not yet decided, if there is one."""
    return Approval.objects.filter(
        organization_id=tx.organization_id,
        ledger_id=tx.ledger_id,
        action=ApprovalRule.REVERT,
        status=Approval.PENDING,
        request__transaction_id=str(tx.pk),
    ).first()


def _posting_json(request: PostingRequest) -> dict[str, Any]:
    """What the back office's posting page asks for, as the proposal keeps it."""
    moments = {"effective_at": request.effective_at, "commit_at": request.commit_at}
    return {
        "template_code": request.template_code,
        "variables": dict(request.variables),
        "description": request.description,
        "pending": request.pending,
        "metadata": dict(request.metadata) if request.metadata else None,
        **{name: render_timestamp(at) if at else None for name, at in moments.items()},
    }


def _posting_of(kept: dict[str, Any]) -> PostingRequest:
    def moment(name: str) -> Any:
        text = kept.get(name)
        return parse_timestamp(text, field=name) if text else None

    return PostingRequest(
        template_code=kept["template_code"],
        variables=kept["variables"],
        description=kept["description"],
        pending=kept["pending"],
        metadata=kept["metadata"],
        effective_at=moment("effective_at"),
        commit_at=moment("commit_at"),
    )


def propose_posting(
    ledger: Ledger, request: PostingRequest, *, summary: str, reason: str
) -> Approval:
    kept = {**_posting_json(request), "template": _template_digest(ledger, request.template_code)}
    return _propose(ledger, ApprovalRule.POST, kept, summary, reason)


def _template_digest(ledger: Ledger, code: str) -> str:
    """The digest of the text of the ledger's active template ``code`` (none: empty)."""
    text = templates_active(ledger).filter(code=code).values_list("text", flat=True).first()
    return "" if text is None else hashlib.sha256(text.encode()).hexdigest()


def _same_template(approval: Approval) -> None:
    """Inside the approved posting's database transaction: the template is still the one the
    summary was made from, or the posting is refused (and rolled back)."""
    code = approval.request["template_code"]
    if _template_digest(approval.ledger, code) != approval.request.get("template"):
        raise LedgerError(
            ErrorCode.ACTION_NOT_PERMITTED,
            f"The template {code} changed since this posting was proposed: it would not post "
            "what was approved. Propose it again.",
        )


def propose_revert(ledger: Ledger, tx: Transaction, *, summary: str, reason: str) -> Approval:
    return _propose(ledger, ApprovalRule.REVERT, {"transaction_id": str(tx.pk)}, summary, reason)


def _propose(
    ledger: Ledger, action: str, request: dict[str, Any], summary: str, reason: str
) -> Approval:
    maker = actors.current().actor
    with transaction.atomic():
        approval = Approval.objects.create(
            organization_id=ledger.organization_id,
            ledger_id=ledger.pk,
            action=action,
            request=request,
            summary=summary,
            maker_id=maker.id or "",
            maker_name=maker.name,
            maker_reason=reason,
        )
        _event(PROPOSED, approval)
    return approval


def _event(event_type: str, approval: Approval) -> None:
    events.record(approval, event_type.removeprefix("approval."))


def approval_data(approval: Approval) -> dict[str, Any]:
    """An approval as its events carry it."""
    maker = {"name": approval.maker_name, "id": approval.maker_id, "reason": approval.maker_reason}
    checker = {
        "name": approval.checker_name,
        "id": approval.checker_id,
        "reason": approval.checker_reason,
    }
    made = approval.transaction_id
    return {
        "id": str(approval.pk),
        "action": approval.action,
        "status": approval.status,
        "summary": approval.summary,
        "request": approval.request,
        "maker": maker,
        "checker": None if approval.checker_id is None else checker,
        "transactionId": None if made is None else str(made),
        "error": approval.error,
    }


class _Decided(Exception):
    """The approval was decided by someone else meanwhile: the action is rolled back."""


def _decide(approval: Approval, status: str, reason: str, **result: Any) -> Approval | None:
    """Mark the approval decided by the actor at work, if it is still pending (its row
    locked); None if it is not. (A checker who is the maker is refused before: by
    ``_check_may_decide``, and by the database's constraint.)"""
    checker = actors.current().actor
    locked = (
        Approval.objects.select_for_update()
        .filter(organization_id=approval.organization_id, pk=approval.pk)
        .first()
    )
    if locked is None or locked.status != Approval.PENDING:
        return None
    locked.status, locked.decided_at = status, timezone.now()
    locked.checker_id, locked.checker_name, locked.checker_reason = checker.id, checker.name, reason
    for name, value in result.items():
        setattr(locked, name, value)
    locked.save()
    kind = {Approval.DONE: APPROVED, Approval.REJECTED: REJECTED, Approval.FAILED: FAILED}[status]
    _event(kind, locked)
    return locked


def _made(outcomes: list[Any]) -> Transaction:
    (outcome,) = outcomes
    assert outcome.transaction is not None  # inside the posting's transaction, it is written
    return outcome.transaction


def _within(approval: Approval, reason: str, made: Transaction) -> None:
    if approval.action == ApprovalRule.POST:
        _same_template(approval)
    if _decide(approval, Approval.DONE, reason, transaction_id=made.pk) is None:
        raise _Decided


def approve(approval: Approval, *, reason: str) -> Approval:
    """Do what ``approval`` proposed, as the actor at work, and mark it done with it; refused
    by the engine, mark it failed with the refusal. Answers the approval as it now is."""
    ledger = approval.ledger
    _check_may_decide(approval)
    try:
        with actors.reason(approval.maker_reason):
            if approval.action == ApprovalRule.POST:
                engine.post(
                    ledger,
                    _posting_of(approval.request),
                    within=lambda outcomes: _within(approval, reason, _made(outcomes)),
                )
            elif approval.action in (ApprovalRule.LIMIT, ApprovalRule.REOPEN):
                with transaction.atomic():
                    _change(approval)
                    if _decide(approval, Approval.DONE, reason) is None:
                        raise _Decided
            else:
                states.revert(
                    ledger=ledger,
                    transaction_id=uuid.UUID(approval.request["transaction_id"]),
                    within=functools.partial(_within, approval, reason),
                )
    except _Decided:
        pass
    except LedgerError as error:
        refusal = {"code": error.error.code, "description": error.description}
        with transaction.atomic():
            _decide(approval, Approval.FAILED, reason, error=refusal)
    return Approval.objects.get(organization_id=approval.organization_id, pk=approval.pk)


def reject(approval: Approval, *, reason: str) -> Approval:
    _check_may_decide(approval)
    with transaction.atomic():
        _decide(approval, Approval.REJECTED, reason)
    return Approval.objects.get(organization_id=approval.organization_id, pk=approval.pk)


def _check_may_decide(approval: Approval) -> None:
    if (actors.current().actor.id or "") == approval.maker_id:
        raise LedgerError(
            ErrorCode.ACTION_NOT_PERMITTED, "Who proposed a change cannot also decide it."
        )


def rule_data(rule: ApprovalRule) -> dict[str, Any]:
    """A rule as its events carry it."""
    return {
        "id": str(rule.pk),
        "action": rule.action,
        "assetCode": rule.asset_code or None,
        "above": None if rule.above is None else {"amount": rule.above, "scale": rule.above_scale},
    }


renderers.register(Approval, "approval", approval_data, plain=True)
renderers.register(ApprovalRule, "approval_rule", rule_data, plain=True)

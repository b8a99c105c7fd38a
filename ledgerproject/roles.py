"""The back office's ready-made roles: Django groups whose permissions are written here, so
that what each role may do is read in one place (docs/BACK-OFFICE.md#roles) and set by one
command (``manage.py setup_roles``, which ``bootstrap_demo`` runs too).

Each role is a list of permissions, ``app_label.codename``. ``setup_roles`` makes each group
hold exactly its list: a permission added to a ready-made group by hand is taken away again,
so a team that wants another mix makes a group of its own name. The internal records (API
tokens, idempotency keys, webhook subscriptions and their deliveries) are for administrators,
the raw operation list for the roles that keep the books; the others see a transaction's
operations on its page. Only administrators hold *delete*, which deactivating needs."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import Group, Permission
from django.db import transaction

# What every role reads: the books and how they are set up.
BOOKS = tuple(
    f"{app}.view_{model}"
    for app, models in (
        ("organizations", ("organization", "ledger", "portfolio", "product", "account")),
        ("organizations", ("balance", "balancemonitor")),
        ("instruments", ("instrument", "rate")),
        ("templates_dsl", ("transactiontemplate",)),
        ("transactions", ("transaction", "scheduledposting")),
    )
    for model in models
)
# Who did what (the audit trail is the event list) and the raw operation list.
AUDIT = ("outbox.view_event", "transactions.view_operation")
# The proposals waiting for a second person, and the rules that make them.
APPROVALS = ("transactions.view_approval", "transactions.view_approvalrule")


def _change(*labels: str, add: bool = True) -> tuple[str, ...]:
    """``add_`` and ``change_`` of each ``app.model`` (only ``change_`` without ``add``)."""
    verbs = ("add", "change") if add else ("change",)
    return tuple(
        f"{app}.{verb}_{model}"
        for app, model in (label.split(".") for label in labels)
        for verb in verbs
    )


# The apps whose every permission an administrator holds, with the staff users and groups.
ADMINISTERED = (
    "organizations",
    "instruments",
    "templates_dsl",
    "transactions",
    "outbox",
    "journal",
    "auth",
)


@dataclass(frozen=True)
class Role:
    name: str
    summary: str
    permissions: tuple[str, ...]


ROLES = (
    Role("viewer", "Reads the books and their setup; changes nothing.", BOOKS),
    Role(
        "support",
        "A viewer who also reads the audit trail and changes an account's status, limits and "
        "balance monitors; moves no money.",
        (
            *BOOKS,
            "outbox.view_event",
            *_change("organizations.account", add=False),
            *_change("organizations.balancemonitor"),
        ),
    ),
    Role(
        "accountant",
        "Posts, commits, cancels and reverts (proposing what a rule sends for approval); "
        "schedules postings; sets up accounts, portfolios, products, instruments, rates, "
        "templates and monitors; closes periods.",
        (
            *BOOKS,
            *AUDIT,
            *APPROVALS,
            *_change(
                "transactions.transaction",
                "transactions.scheduledposting",
                "organizations.account",
                "organizations.portfolio",
                "organizations.product",
                "organizations.balancemonitor",
                "instruments.instrument",
                "instruments.rate",
                "templates_dsl.transactiontemplate",
            ),
            *_change("organizations.ledger", add=False),
        ),
    ),
    Role(
        "approver",
        "Reads the books and the audit trail; approves or rejects what others proposed; "
        "closes periods and is the one who may reopen a closed period.",
        (
            *BOOKS,
            *AUDIT,
            *APPROVALS,
            "transactions.decide_approval",
            *_change("organizations.ledger", add=False),
            "organizations.reopen_period",
        ),
    ),
    Role(
        "administrator",
        "Everything, the internal records and the staff users and groups included.",
        (),  # every permission of ADMINISTERED, read from the database
    ),
)


def _key(label: str) -> tuple[str, str]:
    app_label, _, codename = label.partition(".")
    return app_label, codename


def permissions_of(role: Role) -> list[Permission]:
    """The role's permissions; a name the database does not know is an error (the
    migrations, which create the permissions, have not run, or the list has a typo)."""
    if not role.permissions:
        return list(Permission.objects.filter(content_type__app_label__in=ADMINISTERED))
    wanted = {_key(label) for label in role.permissions}
    found = {
        (p.content_type.app_label, p.codename): p
        for p in Permission.objects.select_related("content_type").filter(
            codename__in={codename for _, codename in wanted}
        )
    }
    missing = sorted(".".join(key) for key in wanted - found.keys())
    if missing:
        raise LookupError(f"unknown permissions for role {role.name}: {', '.join(missing)}")
    return [found[key] for key in sorted(wanted)]


def setup_roles() -> list[tuple[str, int]]:
    """Make each ready-made group hold exactly its role's permissions; answer each group's
    name and how many it holds."""
    done = []
    with transaction.atomic():
        for role in ROLES:
            group, _ = Group.objects.get_or_create(name=role.name)
            permissions = permissions_of(role)
            group.permissions.set(permissions)
            done.append((role.name, len(permissions)))
    return done

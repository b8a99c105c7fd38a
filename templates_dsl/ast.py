"""The syntax tree of a template: frozen dataclasses whose equality ignores source positions."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from ledgerproject import amounts


class Span(NamedTuple):
    """A 1-based position in the template text; (0, 0) when the node was not parsed from text."""

    line: int
    column: int


NO_SPAN = Span(0, 0)
MAX_AMOUNT = amounts.MAX_AMOUNT

MetadataValue = str | int | bool


@dataclass(frozen=True, kw_only=True)
class Term:
    """One summand of an amount: a variable (name without ``$``) or a non-negative literal."""

    variable: str | None = None
    literal: int | None = None
    span: Span = field(default=NO_SPAN, compare=False, repr=False)

    def __post_init__(self) -> None:
        if (self.variable is None) == (self.literal is None):
            raise ValueError("a term is either a variable or a literal")


@dataclass(frozen=True, kw_only=True)
class Amount:
    """``<term>(+<term>)*|<scale>``."""

    terms: tuple[Term, ...]
    scale: int
    span: Span = field(default=NO_SPAN, compare=False, repr=False)
    scale_span: Span = field(default=NO_SPAN, compare=False, repr=False)

    def variables(self) -> tuple[str, ...]:
        return tuple(term.variable for term in self.terms if term.variable is not None)


@dataclass(frozen=True, kw_only=True)
class AccountRef:
    """An account in a from or to block: an ``@alias`` (kept with its ``@``) or a variable."""

    alias: str | None = None
    variable: str | None = None
    span: Span = field(default=NO_SPAN, compare=False, repr=False)

    def __post_init__(self) -> None:
        if (self.alias is None) == (self.variable is None):
            raise ValueError("an account is either an alias or a variable")


@dataclass(frozen=True, kw_only=True)
class From:
    """``(from ACCOUNT :amount ASSET AMOUNT (description ...)? (chart-of-accounts ...)?)``."""

    account: AccountRef
    asset: str
    amount: Amount
    description: str | None = None
    chart_of_accounts: str | None = None
    span: Span = field(default=NO_SPAN, compare=False, repr=False)
    asset_span: Span = field(default=NO_SPAN, compare=False, repr=False)
    description_span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class To:
    """A destination: ``:amount ASSET AMOUNT`` or, inside the remaining block, ``:remaining``."""

    account: AccountRef
    asset: str | None = None
    amount: Amount | None = None
    remaining: bool = False
    description: str | None = None
    chart_of_accounts: str | None = None
    span: Span = field(default=NO_SPAN, compare=False, repr=False)
    asset_span: Span = field(default=NO_SPAN, compare=False, repr=False)
    description_span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class Send:
    """``(send ASSET AMOUNT (source FROM...))``."""

    asset: str
    amount: Amount
    sources: tuple[From, ...]
    span: Span = field(default=NO_SPAN, compare=False, repr=False)
    asset_span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class Distribute:
    """``(distribute TO... (distribute :remaining TO)?)``."""

    tos: tuple[To, ...]
    remaining: To | None = None
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class Convert:
    """``(convert ASSET|SCALE (rate-source SOURCE)?)``: the send is delivered in another asset,
    at that scale, converted at the ledger's stored rate for the pair (of that source)."""

    asset: str
    scale: int
    rate_source: str | None = None
    span: Span = field(default=NO_SPAN, compare=False, repr=False)
    asset_span: Span = field(default=NO_SPAN, compare=False, repr=False)
    scale_span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class Template:
    """A whole ``(transaction-template v1 ...)``."""

    version: str = "v1"
    group_name: str
    code: str
    description: str | None = None
    pending: bool | None = None
    hold_duration: int | None = None  # seconds a pending posting's hold lasts by default
    metadata: tuple[tuple[str, MetadataValue], ...] = ()
    send: Send
    distribute: Distribute
    convert: Convert | None = None
    span: Span = field(default=NO_SPAN, compare=False, repr=False)
    description_span: Span = field(default=NO_SPAN, compare=False, repr=False)
    metadata_spans: tuple[Span, ...] = field(default=(), compare=False, repr=False)

    def delivered(self) -> tuple[str, int]:
        """The asset and scale the destinations receive: the send's, unless it converts."""
        if self.convert is not None:
            return self.convert.asset, self.convert.scale
        return self.send.asset, self.send.amount.scale

    def unit_of(self, name: str) -> tuple[str, int]:
        """The asset and scale an amount variable counts in: the send's, or in a template that
        converts, the converted ones for a variable that only the destinations' amounts use."""
        if self.convert is not None and name in self._converted_variables:
            return self.convert.asset, self.convert.scale
        return self.send.asset, self.send.amount.scale

    @cached_property
    def _converted_variables(self) -> frozenset[str]:
        sending = {*self.send.amount.variables()}
        sending.update(name for s in self.send.sources for name in s.amount.variables())
        return frozenset(self.amount_variables()) - sending

    def froms(self) -> tuple[From, ...]:
        return self.send.sources

    def destinations(self) -> tuple[To, ...]:
        remaining = (self.distribute.remaining,) if self.distribute.remaining else ()
        return self.distribute.tos + remaining

    def amounts(self) -> tuple[Amount, ...]:
        amounts = [self.send.amount, *(source.amount for source in self.send.sources)]
        amounts.extend(to.amount for to in self.distribute.tos if to.amount is not None)
        return tuple(amounts)

    def amount_variables(self) -> tuple[str, ...]:
        """Each amount variable once, in text order (a dict keeps the order: linear)."""
        return self._amount_variables

    @cached_property
    def _amount_variables(self) -> tuple[str, ...]:
        # Kept on the tree, which never changes (a compiled template is shared and planned on
        # every posting); the instance's __dict__ is not one of the dataclass's fields, so
        # equality and hashing ignore it.
        names = (name for amount in self.amounts() for name in amount.variables())
        return tuple(dict.fromkeys(names))

    def legs(self) -> tuple[From | To, ...]:
        """Every from and to, the remaining destination last."""
        return (*self.froms(), *self.destinations())

    def account_variables(self) -> tuple[str, ...]:
        return self._account_variables

    @cached_property
    def _account_variables(self) -> tuple[str, ...]:
        names = (n.account.variable for n in self.legs() if n.account.variable is not None)
        return tuple(dict.fromkeys(names))

    @cached_property
    def variables(self) -> dict[str, None]:
        """Every variable the template uses, amounts first, each once, in text order. Shared by
        every posting planned with the template: read it, never change it (a plain dict, so
        that the template can still be copied and pickled)."""
        return dict.fromkeys((*self.amount_variables(), *self.account_variables()))

"""How a resource renders in an event: the API's own rendering, registered by the HTTP layer.

Each app's ``serializers`` module registers its model with the noun of its events and the
function the API renders it with (``register``); ``OutboxConfig.ready`` imports those modules
in every process. The domain then records an event by model class (``outbox.record``) without
importing the HTTP layer, and an event holds exactly what ``GET`` of the resource answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Renderer = Callable[[Any], Any]

_REGISTRY: dict[type, tuple[str, Renderer, bool]] = {}


def register(model: type, noun: str, render: Renderer, *, plain: bool = False) -> None:
    """``plain``: the rendering is plain JSON values already (dicts, lists, str, int, bool,
    None), so an event keeps it as it is instead of converting it."""
    _REGISTRY[model] = (noun, render, plain)


def renders_plain(model: type) -> bool:
    return _entry(model)[2]


def noun_of(model: type) -> str:
    return _entry(model)[0]


def render(instance: Any) -> Any:
    return _entry(type(instance))[1](instance)


def _entry(model: type) -> tuple[str, Renderer, bool]:
    try:
        return _REGISTRY[model]
    except KeyError:
        raise LookupError(f"No event renderer is registered for {model.__name__}.") from None

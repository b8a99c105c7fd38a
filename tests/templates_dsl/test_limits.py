"""Untrusted template text and posting variables are bounded and handled in linear time.

The attack these keep out: a stored 64 KiB template with thousands of amount variables, then a
1 MiB dry run naming those plus a hundred thousand unknown names, cost ~10 s of CPU per request
(quadratic membership tests in the planner and the AST). Now the template is refused when it
declares more than ``MAX_VARIABLES`` names or ``MAX_LEGS`` legs, the request when it names more
than ``MAX_VARIABLES``, and every step that remains is linear."""

from __future__ import annotations

import gc
import time

import pytest

from templates_dsl import limits
from templates_dsl.compile import compile_template
from templates_dsl.errors import TemplateError
from templates_dsl.lexer import tokenize
from templates_dsl.planner import plan_posting


def wide_template(variables: int, legs: int, *, each: int = 0) -> str:
    """A template with ``variables`` amount variables summed in the send amount and ``legs``
    legs: one source, ``legs - 2`` destinations of ``each`` with an account variable each, and
    the remaining destination ``$dest``."""
    names = [f"$v{i}" for i in range(variables)]
    amount = "+".join(names) or "1"
    tos = "".join(f"(to $d{i} :amount BRL {each}|2)" for i in range(legs - 2))
    return (
        f"(transaction-template v1 (chart-of-accounts-group-name G) (code WIDE)"
        f"(send BRL {amount}|2 (source (from @external/BRL :amount BRL {amount}|2)))"
        f"(distribute {tos}(distribute :remaining (to $dest :remaining))))"
    )


def best_of(runs: int, call, clock=time.perf_counter) -> float:
    """The fastest of ``runs`` calls, by ``clock`` (wall time unless told). What the rest of the
    test session left in memory is frozen first (``gc.freeze``), so the garbage collector's
    passes over it, which grow with every test run before this one (hundreds of MB late in the
    suite), do not count as the request's cost; the objects the request itself makes are still
    collected as usual."""
    gc.collect()
    gc.freeze()
    try:
        best = float("inf")
        for _ in range(runs):
            start = clock()
            call()
            best = min(best, clock() - start)
        return best
    finally:
        gc.unfreeze()


def test_it_refuses_a_template_with_more_variables_than_the_limit():
    text = wide_template(limits.MAX_VARIABLES + 1, 2)
    with pytest.raises(TemplateError) as raised:
        compile_template(text)
    assert raised.value.line == 1
    assert f"at most {limits.MAX_VARIABLES} variables" in raised.value.message


def test_it_refuses_a_template_with_more_legs_than_the_limit():
    text = wide_template(1, limits.MAX_LEGS + 1)
    with pytest.raises(TemplateError) as raised:
        compile_template(text)
    assert f"at most {limits.MAX_LEGS} legs" in raised.value.message


def test_it_refuses_text_longer_than_the_limit_before_parsing():
    text = wide_template(1, 2) + " " * limits.MAX_TEMPLATE_BYTES
    with pytest.raises(TemplateError) as raised:
        compile_template(text)
    assert f"longer than {limits.MAX_TEMPLATE_BYTES} bytes" in raised.value.message


def test_it_refuses_a_request_naming_more_variables_than_any_template_may_declare():
    template = compile_template(wide_template(2, 2))
    variables = {f"x{i}": 1 for i in range(limits.MAX_VARIABLES + 1)}
    with pytest.raises(Exception) as raised:
        plan_posting(template, variables)
    assert raised.value.error.code == "0047"
    assert raised.value.fields == {"variables": f"at most {limits.MAX_VARIABLES} names"}


def test_lexing_a_one_line_template_is_linear():
    """``position`` used to scan back to the last newline for every token."""
    small = wide_template(limits.MAX_VARIABLES // 8, limits.MAX_LEGS // 8)
    large = wide_template(limits.MAX_VARIABLES, limits.MAX_LEGS)
    assert "\n" not in large
    # The lexer's own work: this thread's CPU time, which another process on the machine (CI
    # runs two test streams side by side) does not stretch the way it stretches wall time.
    per_char_small = best_of(3, lambda: tokenize(small), time.thread_time) / len(small)
    per_char_large = best_of(3, lambda: tokenize(large), time.thread_time) / len(large)
    assert per_char_large < 3 * per_char_small

"""``bench.instructions --twice``: pricing one part of a posting by calling it twice. Its
counting needs valgrind and PostgreSQL (``test_bench_smoke``); replacing the part does not."""

from __future__ import annotations

import sys
import types

from bench import instructions


def test_twice_calls_the_part_twice_and_answers_the_second_call(monkeypatch):
    """``bench.instructions --twice MODULE:NAME``: the part (a function, or a class's method)
    runs twice where it ran once, and its caller gets the second call's answer."""
    calls = []

    class Part:
        def method(self, value):
            calls.append(("method", value))
            return len(calls)

    def function(value):
        calls.append(("function", value))
        return len(calls)

    module = types.ModuleType("bench_twice_probe")
    module.Part, module.function = Part, function
    monkeypatch.setitem(sys.modules, "bench_twice_probe", module)
    instructions._twice("bench_twice_probe:function")
    instructions._twice("bench_twice_probe:Part.method")
    assert module.function("a") == 2
    assert Part().method("b") == 4
    assert calls == [("function", "a")] * 2 + [("method", "b")] * 2

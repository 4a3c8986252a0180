"""Item helpers, input normalisation and the two backends, on their own."""

from __future__ import annotations

import asyncio

import pytest

from ledger.backends import EchoBackend, Script, ScriptedBackend
from ledger.items import is_summary, normalize_input, summary_marker, user_message
from ledger.server import InferenceCall

pytestmark = pytest.mark.properties("S2", "S6")


def call(text: str) -> InferenceCall:
    return InferenceCall("", (), (user_message(text),), None, None)


def test_is_summary() -> None:
    assert is_summary(summary_marker(1, 2, "text"))
    assert not is_summary(user_message("summary"))
    assert not is_summary({"role": "user"})


def test_normalize_input_refuses_what_json_cannot_carry() -> None:
    """Checked when the request arrives, not when the turn is written (S2: nothing half-stored)."""
    assert normalize_input("hi") == [user_message("hi")]
    with pytest.raises(TypeError):
        normalize_input([{"type": "message", "content": {1, 2}}])
    with pytest.raises(TypeError):
        normalize_input([{"type": "message", "content": object()}])


def test_scripted_backend_takes_one_permit_per_step() -> None:
    async def run() -> list[int]:
        gate = asyncio.Semaphore(0)
        script = Script(["a", "b"], gate)
        backend = ScriptedBackend(lambda c: script)
        got: list[str] = []

        async def consume() -> None:
            async for chunk in backend.stream(call("x")):
                got.append(chunk)

        task = asyncio.ensure_future(consume())
        steps = []
        for _ in range(3):
            for _ in range(5):
                await asyncio.sleep(0)
            steps.append(script.steps)
            gate.release()
        await task
        steps.append(script.steps)
        assert got == ["a", "b"] and len(backend.calls) == 1
        return steps

    assert asyncio.run(run()) == [0, 1, 2, 3]


def test_echo_backend_echoes_in_chunks_and_yields_control() -> None:
    async def run() -> list[tuple[str, int]]:
        backend = EchoBackend(chunk_size=3)
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.ensure_future(ticker())
        await asyncio.sleep(0)
        seen = [(chunk, ticks) async for chunk in backend.stream(call("abcdefg"))]
        task.cancel()
        assert len(backend.calls) == 1 and backend.calls[0].input[-1]["content"] == "abcdefg"
        return seen

    seen = asyncio.run(run())
    assert [chunk for chunk, _ in seen] == ["abc", "def", "g"]
    ticks = [tick for _, tick in seen]
    # other tasks (an interrupt, a cancellation) get to run between chunks
    assert ticks[0] < ticks[1] < ticks[2]

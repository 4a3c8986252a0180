"""Item helpers, input normalisation and the two backends, on their own."""

from __future__ import annotations

import asyncio

import pytest

from ledger.backends import EchoBackend, Script, ScriptedBackend
from ledger.items import (
    COMPLETED,
    INCOMPLETE,
    assistant_message,
    is_summary,
    item_text,
    normalize_input,
    output_from_chunks,
    summary_marker,
    user_message,
)
from ledger.server import InferenceCall
from ledger.shields import KeywordShield

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


#: a user message as Responses API clients also send it: content parts
PARTS = {"type": "message", "role": "user", "content": [
    {"type": "input_text", "text": "first part"},
    {"type": "input_image", "image_url": "https://example.invalid/x.png"},
    {"type": "input_text", "text": "and the second"},
]}  # fmt: skip


def test_item_text_reads_a_string_or_the_text_parts() -> None:
    assert item_text(user_message("hi")) == "hi"
    assert item_text(PARTS) == "first part and the second"
    assert item_text({"type": "message", "content": None}) == ""
    assert item_text({"type": "function_call", "arguments": "{}"}) == ""


def test_the_shield_reads_content_parts() -> None:
    """S1/S2: a blocked input is blocked in whatever form its text comes (a keyword in a
    content part went through to the model, answered and stored)."""
    shield = KeywordShield("SECOND", "no")
    assert shield.check([user_message("fine"), PARTS]) == "no"
    assert shield.check([user_message("fine"), {"type": "function_call_output"}]) is None


def echoed(backend: EchoBackend, items: tuple[dict[str, object], ...]) -> list[str]:
    async def run() -> list[str]:
        return [c async for c in backend.stream(InferenceCall("", (), items, None, None))]

    return asyncio.run(run())


def test_echo_backend_chunks_exactly_the_text() -> None:
    """No empty chunk: none for an empty text or input, none after a text whose length
    is a multiple of the chunk size; content parts echo their text."""
    backend = EchoBackend(chunk_size=3)
    assert echoed(backend, (user_message("abcdef"),)) == ["abc", "def"]
    assert echoed(backend, (user_message(""),)) == []
    assert echoed(backend, ()) == []
    assert "".join(echoed(backend, (PARTS,))) == "first part and the second"


def test_an_answer_with_no_text() -> None:
    """S2: a completed answer is one assistant message even with no text (a turn whose
    answer is only a tool call); an incomplete one with nothing streamed has none."""
    assert output_from_chunks([], status=COMPLETED) == [assistant_message("")]
    assert output_from_chunks([], status=INCOMPLETE) == []
    assert output_from_chunks(["a", "b"], status=INCOMPLETE) == [
        assistant_message("ab", status=INCOMPLETE)
    ]

"""The restore concern's lockstep (``ctxaudit/locksteps/restore.py``) on a plain agent
written here from the invariants alone (a conversation folded into a summary or trimmed to
a window, pinning its first messages or not; each message stored in a JSON log as it is
added, the manager's state beside it; a restore reads both back): it holds on the agent as
written; it fails on each planted break with the invariant that sees it."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

from ctxaudit.concerns.restore import (
    ASKS,
    DIES,
    INVOCATION,
    MANAGERS,
    MESSAGE,
    OVERFLOW,
    PROVIDER_DOWN,
    SUMMARIZING,
    WRITES,
    Block,
    Held,
    Observed,
    Settings,
    Turn,
    opening,
)
from ctxaudit.locksteps.restore import run_lockstep
from ctxaudit.locksteps.restore_programs import PROGRAMS, run_program

QUICK = settings(
    max_examples=120, stateful_step_count=12, derandomize=True, database=None, deadline=None,
    suppress_health_check=list(HealthCheck),
)  # fmt: skip
FIRST_FAILURE = settings(QUICK, phases=[Phase.generate])
#: the breaks the search needs more examples to meet (R5's: a fold whose share reaches
#: the recent messages just where the oldest of them is a tool result; the search meets
#: it at the 200th example, the programs on every run)
MORE_EXAMPLES = {
    "pins once": 300,
    "fold takes the recent": 300,
    # a death after a fold or a tool's write in the same turn
    "state saved at the end of a call": 600,
    "failed summary counts": 600,
}


#: a summary the agent wrote: its id, the ids it was sent, the conversation it cut
Summary = tuple[str, tuple[str, ...], tuple[Held, ...]]


def ids(message: Held) -> list[str]:
    return [f"r-{b.id}" if b.kind == "result" else b.id for b in message.blocks]


def to_json(message: Held) -> list[list[str]]:
    return [[b.kind, b.id] for b in message.blocks]


def from_json(role: str, blocks: list[list[str]]) -> Held:
    return Held(role, tuple(Block(k, i) for k, i in blocks))  # type: ignore[arg-type]


@dataclass
class PlainAgent:
    """A conversation under one manager, logged to ``folder/log.json`` as it grows."""

    settings: Settings
    folder: Path
    breaks: frozenset[str]
    messages: list[Held] = field(default_factory=list)
    pinned: int = 0  # how many of the first messages are pinned (0 before a reduction)
    summary: Held | None = None
    lead: int = 0  # the held messages not read from the log's tail (pins, a summary)
    removed: int = 0  # the log's index of held[lead]
    summaries: int = 0
    state: dict[str, object] = field(default_factory=dict)  # the key-value state tools write
    pending: str | None = None  # the call that awaits the user's answer
    #: a new session's messages of its own are stored, and nothing after them yet
    fresh: bool = False
    log: list[list[object]] = field(default_factory=list)  # every message stored, in order
    #: the object each entry of the log was stored from (None: read back from the log)
    objects: list[Held | None] = field(default_factory=list)

    def add(self, message: Held) -> None:
        """A message added: the "log" store saves it, and the agent's state, at once (the
        "end" store saves both when the call ends)."""
        self.messages.append(message)
        entry: list[object] = [message.role, to_json(message)]
        if self.fresh and self.log and "prompt stored over the opening" in self.breaks:
            self.log[0] = entry  # the first message after them takes the first index again
            self.objects[0] = message
        else:
            self.log.append(entry)
            self.objects.append(message)
        self.fresh = False
        if self.settings.store == "log" or "end store saves mid-call" in self.breaks:
            self.write_log()
            if "state saved at the end of a call" not in self.breaks:
                self.save()

    def write_log(self) -> None:
        (self.folder / "log.json").write_text(json.dumps(self.log))

    def redact(self, message: Held) -> None:
        """A guardrail's redaction of the latest message, held and stored in its place: the
        message object is rewritten, so wherever the agent holds it again (a retried
        prompt), and every entry stored from it."""
        old = self.messages[-1]
        self.messages = [message if m is old else m for m in self.messages]
        for i, stored in enumerate(self.objects):
            if stored is not old or "redaction not stored" in self.breaks:
                continue
            if i < len(self.log) - 1 and "retried prompt redacted once" in self.breaks:
                continue
            self.log[i], self.objects[i] = [message.role, to_json(message)], message
        if self.settings.store == "log":
            self.write_log()

    def end(self) -> None:
        """A call of the agent ended: both stores save."""
        self.write_log()
        self.save()

    def save(self) -> None:
        state = {
            "lead": [[m.role, to_json(m)] for m in self.messages[: self.lead]],
            "pinned": self.pinned,
            "removed": self.removed,
            "summaries": self.summaries,
            "state": self.state,
            "pending": self.pending,
        }
        (self.folder / "state.json").write_text(json.dumps(state))

    def load(self) -> None:
        state_file, log = self.folder / "state.json", self.folder / "log.json"
        if not log.exists():
            return
        self.log = json.loads(log.read_text())
        self.objects = [None] * len(self.log)
        stored = [from_json(r, b) for r, b in self.log]  # type: ignore[arg-type]
        state = json.loads(state_file.read_text()) if state_file.exists() else None
        if state is None:
            self.messages = stored
            return
        if "state not restored" not in self.breaks:
            self.state = state["state"]
        self.pending = state["pending"]
        if self.pending is not None and "restore answers the pending" in self.breaks:
            self.pending = None  # as if a repair gave the trailing call an error result
            stored.append(from_json("user", [["result", state["pending"]]]))
        lead = [from_json(r, b) for r, b in state["lead"]]
        self.pinned, self.removed = state["pinned"], state["removed"]
        self.lead, self.summaries = len(lead), state["summaries"]
        self.summary = lead[-1] if len(lead) > self.pinned else None
        skip = self.removed - (self.pinned if "restore skips pinned" in self.breaks else 0)
        self.messages = lead + stored[skip:]

    def forward(self, cut: int) -> int:
        """The cut moved forward past tool results (a result stays with its call)."""
        while "cut splits a pair" not in self.breaks and cut < len(self.messages):
            if not any(b.kind == "result" for b in self.messages[cut].blocks):
                break
            cut += 1
        return cut

    def back(self, cut: int) -> int:
        """The cut moved back before tool results (a result stays with its call)."""
        while cut > 0 and any(b.kind == "result" for b in self.messages[cut].blocks):
            cut -= 1
        return cut

    def reduce(self, observed: list[Summary], fails: bool = False) -> bool:
        """Fold or trim; False when nothing can be (or the summary failed: then nothing
        changed but the pins)."""
        n = len(self.messages)
        pin = self.settings.pin or 0
        once = "pins once" in self.breaks and self.pinned  # only those there at the first try
        if pin and "fold drops pinned" not in self.breaks and not once:
            self.pinned = max(self.pinned, min(pin, n))  # the first pin, as they come
        if self.settings.manager == SUMMARIZING:
            count = min(max(1, int(n * self.settings.share)), n - self.settings.keep)
            cut = self.forward(max(count, self.pinned))
            if cut > n - self.settings.keep and "fold takes the recent" not in self.breaks:
                cut = self.back(max(0, n - self.settings.keep))  # the newest are always kept
            folded = self.messages[self.pinned : cut]
            if cut >= n or not folded:
                return False
            if fails:
                if "failed summary counts" in self.breaks:
                    self.removed += cut - self.lead
                return False
            self.summaries += 1
            name = f"s{self.summaries}"
            sent = tuple(i for m in folded for i in ids(m))
            if "fold loses a message" in self.breaks:
                sent = sent[1:]
            observed.append((name, sent, tuple(self.messages)))
            self.removed += cut - self.lead
            self.summary = Held("user", (Block("text", name),))
            self.messages = self.messages[: self.pinned] + [self.summary] + self.messages[cut:]
            self.lead = self.pinned + 1
            return True
        cut = self.forward(max(n - self.settings.keep, self.pinned))
        if cut <= self.pinned or cut >= n:
            return False
        self.removed += cut - self.lead
        self.messages = self.messages[: self.pinned] + self.messages[cut:]
        self.lead = self.pinned
        return True


class Conversation:
    def __init__(self, settings: Settings, folder: Path, breaks: frozenset[str]) -> None:
        self.settings, self.folder, self.breaks = settings, folder, breaks
        self.agent = self.build()
        self.redacting = ""  # the id the prompt takes at the turn's first answer, if any
        self.prompt: Held | None = None  # the user's last prompt object
        #: the turn under way and its model calls still to come (kept across restores,
        #: as the faked model of a harness keeps its script)
        self.current = Turn("", ((),))
        self.script: list[tuple[int, object]] = []

    def build(self) -> PlainAgent:
        """An agent over the folder: a new session stores the messages it is built with,
        an existing one restores what it stored."""
        agent = PlainAgent(self.settings, self.folder, self.breaks)
        restoring = (self.folder / "log.json").exists()
        self.died: tuple[tuple[Held, ...], dict[str, object]] | None = None
        #: the storage's files as a death left them (None: not there), for the next agent
        self.dead: dict[str, str | None] | None = None
        agent.load()
        if not restoring or "opening added again" in self.breaks:
            for message in opening(self.settings.opening):
                agent.add(message)
            agent.fresh = not restoring
            agent.end()
        return agent

    def turn(self, turn: Turn) -> Observed:
        if turn.user_writes:  # the user's code writes the agent's state before the call
            self.agent.state = {**self.agent.state, "user": turn.user_writes}
        last = self.agent.messages[-1].blocks if self.agent.messages else ()
        calls = [b.id for b in last if b.kind == "call"]
        if calls:  # calls a death left without results: answered first (with an error)
            self.agent.add(Held("user", tuple(Block("result", c) for c in calls)))
        if not (turn.retries and self.prompt):  # a retry: the object of the call before
            self.prompt = Held("user", (Block("text", turn.prompt),))
        self.agent.add(self.prompt)
        replies: list[object] = list(turn.replies)
        if turn.overflow_at is not None:
            replies.insert(turn.overflow_at, OVERFLOW)
        if turn.error_at is not None:
            replies.insert(turn.error_at, PROVIDER_DOWN)
        self.script, self.current = list(enumerate(replies)), turn
        self.redacting = turn.redacts
        return self.run()

    def answer(self) -> Observed:
        """The asked call's tool runs (its result added), and the turn goes on."""
        a = self.agent
        if a.pending is None:
            raise RuntimeError("no call awaits an answer")
        a.add(Held("user", (Block("result", a.pending),)))
        a.pending = None
        return self.run()

    def run(self) -> Observed:
        """The turn's model calls from where it stands, until it ends or a tool asks."""
        a, turn, observed = self.agent, self.current, list[Summary]()
        raised, asked, self.died = None, False, None
        while self.script:
            call, reply = self.script.pop(0)
            if self.settings.proactive and call == turn.full_at:
                a.reduce(observed, turn.summary_fails)  # best effort: a failure is let go
            if reply == PROVIDER_DOWN:
                raised = f"RuntimeError: {PROVIDER_DOWN}"
                break
            if reply == OVERFLOW:
                if not a.reduce(observed, turn.summary_fails):
                    raised = "ContextWindowOverflowException: cannot reduce"
                    break
                continue
            if self.redacting:  # a guardrail's verdict on the prompt, with the first answer
                old, new = a.messages[-1], Held("user", (Block("text", self.redacting),))
                a.redact(new)
                if self.prompt is old:  # the user's object reads redacted too
                    self.prompt = new
                self.redacting = ""
            if reply == ():
                a.add(Held("assistant", (Block("text", turn.answer),)))
                break
            calls = tuple(reply)  # type: ignore[arg-type]
            a.add(Held("assistant", tuple(Block("call", c) for c in calls)))
            if calls[0].startswith(DIES):  # the process dies while its tool runs
                self.die()
                return self.observed(None, observed, False)
            if calls[0].startswith(ASKS):  # the tool asks the user first: the agent stops
                a.pending, asked = calls[0], True
                break
            a.add(Held("user", tuple(Block("result", c) for c in calls)))
            for c in calls:  # the tool writes the agent's state
                if c.startswith(WRITES):
                    writes = a.state.get("writes", 0)
                    assert isinstance(writes, int)
                    a.state = {**a.state, "last": c, "writes": writes + 1}
        if not asked:
            self.script = []
        if self.settings.manager != SUMMARIZING and len(a.messages) > self.settings.keep:
            a.reduce(observed)  # a window is applied after every call
        a.end()
        return self.observed(raised, observed, asked)

    def observed(self, raised: str | None, summaries: list[Summary], asked: bool) -> Observed:
        """What the call did: its error, its summaries, whether it asked; how it died."""
        return Observed(
            raised,
            tuple((name, sent) for name, sent, _ in summaries),
            tuple(t for *_, t in summaries),
            asked,
            self.died,
        )

    def held(self) -> list[Held]:
        return list(self.agent.messages)

    def state(self) -> dict[str, object]:
        return dict(self.agent.state)

    def die(self) -> None:
        """The process dies: the storage is kept as it is, with what the agent held."""
        self.dead = {}
        for name in ("log.json", "state.json"):
            file = self.folder / name
            self.dead[name] = file.read_text() if file.exists() else None
        self.died = (tuple(self.agent.messages), dict(self.agent.state))

    def restore(self) -> None:
        for name, text in (self.dead or {}).items():  # after a death: as the death left it
            if text is None:
                (self.folder / name).unlink(missing_ok=True)
            else:
                (self.folder / name).write_text(text)
        self.agent = self.build()

    def close(self) -> None:
        pass


@dataclass
class Adapter:
    breaks: frozenset[str] = frozenset()
    name: str = "the test's plain agent"
    managers: tuple[str, ...] = MANAGERS
    pins: bool = True
    stores: tuple[str, ...] = ("log", "end")
    proactive: bool = True
    opens: bool = True
    asks: bool = True
    redacts: bool = True
    dies: bool = True
    user_state: bool = True
    retries: bool = True
    saves = {"log": (MESSAGE,), "end": (INVOCATION,)}

    def conversation(self, settings: Settings, folder: Path) -> Conversation:
        return Conversation(settings, folder, self.breaks)

    def spell(self, settings: Settings) -> str:
        return repr(settings)


def test_the_agent_as_written_holds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    run_lockstep(Adapter(), settings=QUICK)
    # each example's folder is removed with it: none is left behind in the user's tmp
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("program", PROGRAMS)
def test_each_program_holds_on_the_agent_as_written(program: str) -> None:
    run_program(program, "log", Adapter())


@pytest.mark.parametrize(
    ("brk", "programs", "opens"),
    [
        # strands' #4027 class
        ("restore skips pinned", ("summary-pinned-restored", "window-pinned-restored"), "R1"),
        # a first reduction before the conversation has as many messages as the manager
        # pins, then more, then a reduction: the later of the first pin stay too (strands
        # pins only those there at its first try)
        ("pins once", ("summary-pins-more-than-it-held", "window-pins-more-than-it-held"),
         "S6: R2"),
        # a prompt a guardrail redacted comes back as it was before
        ("redaction not stored", ("summary-redacted-restored", "window-redacted-restored"),
         "S2: R1"),
        # a new session of an agent built with messages of its own stores its first prompt
        # over the first of them (strands' latest-message record, left unset, does that)
        ("state saved at the end of a call",
         ("summary-dies-after-a-fold", "window-dies-after-a-trim",
          "summary-user-writes-then-dies", "window-user-writes-then-dies"), "S2: R6"),
        # a retried prompt (one object, held twice) redacted: only its latest record is
        # rewritten (strands keeps its records to rewrite each)
        ("retried prompt redacted once",
         ("summary-retried-redacted", "window-retried-redacted"), "S2: R1"),
        ("prompt stored over the opening",
         ("summary-opens-with-its-own", "window-opens-with-its-own"), "S2: R1"),
        # kept messages that open on a tool result: strands' SA-FOLD-TAKES-RECENT class
        ("fold takes the recent",
         ("summary-kept-opens-on-a-result", "summary-after-a-provider-error"), "C1: R5"),
    ],
)  # fmt: skip
def test_the_programs_see_a_planted_break_without_a_search(
    brk: str, programs: tuple[str, ...], opens: str
) -> None:
    """The seed-free programs meet, on every run, each break the search meets only now
    and then."""
    broken = Adapter(frozenset({brk}), name=brk)
    for program in programs:
        with pytest.raises(AssertionError, match=opens):
            run_program(program, "log", broken)


@pytest.mark.parametrize(
    ("brk", "managers", "opens"),
    [
        ("restore skips pinned", MANAGERS, "S2: R1:"),
        ("fold drops pinned", MANAGERS, "S6: R2:"),
        ("pins once", MANAGERS, "S6: R2:"),
        ("fold loses a message", (SUMMARIZING,), "S6: R3:"),
        ("cut splits a pair", MANAGERS, "S6: R4:"),
        ("failed summary counts", (SUMMARIZING,), "S2: holds another conversation"),
        ("fold takes the recent", (SUMMARIZING,), "C1: R5:"),
        ("state not restored", MANAGERS, "S2: R1: the restored agent holds another state"),
        ("opening added again", MANAGERS, "S2: R1: the restored agent holds another conv"),
        ("restore answers the pending", MANAGERS, "S2: R1: the restored agent holds another conv"),
        # (after a restore, or after a death: R1 or R6)
        ("redaction not stored", MANAGERS, "S2: holds another conversation"),
        # a store that saves every message but the agent's state (and the manager's) only
        # when a call ends: a death after a fold or a tool's write restores them older
        ("state saved at the end of a call", MANAGERS, "S2: R6: the agent restored after"),
        # a store that saves when a call ends, but saves the messages of a call that died
        ("end store saves mid-call", MANAGERS, "S2: R6: the agent restored after"),
        # (a retried prompt redacted, "retried prompt redacted once": a provider error, a
        # retry and a redaction in a row, which the search meets too rarely to wait for;
        # the programs meet it on every run)
    ],
)
def test_each_planted_break_fails_with_what_sees_it(
    brk: str, managers: tuple[str, ...], opens: str
) -> None:
    """The invariants, which know no algorithm, see a restore that skips the pinned
    messages (strands' #4027 class), a fold that takes a pinned message, a manager that
    pins only the first messages there at its first try (fewer than it was told to pin:
    strands' too), a summary that was
    not sent a folded message, a cut that leaves a result without its call, a failed
    summary that still counts what it meant to fold as removed (strands' too), and a cut
    that moves forward past a tool result into the newest messages a fold always keeps
    (strands' too), a restore that gives back the conversation but not the agent's
    state, one that adds the messages the agent is built with again, one that gives a
    call awaiting the user's answer a result of its own, and a session that keeps a prompt
    as it was before a guardrail redacted it."""
    with pytest.raises(AssertionError) as failed:
        adapter = Adapter(
            frozenset({brk}), name=f"the test's plain agent ({brk})", managers=managers
        )
        examples = MORE_EXAMPLES.get(brk, QUICK.max_examples)
        run_lockstep(adapter, settings=settings(FIRST_FAILURE, max_examples=examples))
    prop, _, invariant = opens.partition(" ")
    message = str(failed.value)
    assert message.startswith(prop) and invariant in message, message


def test_the_shared_suite_drives_the_adapter_a_target_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A target that names a ``restore`` adapter gets the restore lockstep from the
    shared suites, with no test of its own."""
    from types import SimpleNamespace

    from ctxaudit import targets
    from ctxaudit.targets import concern_suites

    want = (str(concern_suites.HERE / "test_restore.py"),)
    assert concern_suites.suites_for({"restore": "x:y"}) == want
    kind = SimpleNamespace(concerns={"restore": f"{__name__}:_factory"}, resolve=str)
    monkeypatch.setattr(targets, "get", lambda name: kind)
    config = SimpleNamespace(getoption=lambda name: "toy" if "target" in name else "1.0")
    built = concern_suites.adapter(config, "restore")  # type: ignore[arg-type]
    assert isinstance(built, Adapter) and built.name == "the plain agent of 1.0"


def _factory(version: str) -> Adapter:
    return Adapter(name=f"the plain agent of {version}")

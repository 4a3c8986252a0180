"""The catalogue of properties: each one's id, short name and what it says, in one
place. ``docs/properties.md`` gives each a section headed ``### <id> <name>`` (a test
keeps the two the same) with the model code that encodes it, the targets it applies to
and the tests that check it; the targets name the ones that apply to them
(:func:`applying`), and the reports show the short names from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Property:
    id: str
    name: str  # the short name reports and headings use
    says: str  # what must hold, in one sentence


_ALL = (
    Property(
        "B1",
        "metering",
        "every LLM call adds its prompt and cache tokens to the "
        "input meter and its completion tokens to the output meter",
    ),
    Property(
        "B2",
        "input/output cap at >=",
        "a positive input or output cap is reached "
        "when its meter is at or above it, checked once a call is recorded",
    ),
    Property(
        "B3",
        "iteration cap checked before the call",
        "with the iteration credit at or above a positive cap, no further LLM call is made",
    ),
    Property(
        "B4",
        "time cap",
        "with a positive time cap, a check at or after that many "
        "seconds since the start reports the cap",
    ),
    Property(
        "B5",
        "context reset",
        "a reset zeroes the token meters and leaves the iteration credit and the clock alone",
    ),
    Property(
        "B6",
        "cap configuration",
        "a cap's configured text means the number the "
        "configuration's documented syntax gives it, or is rejected",
    ),
    Property(
        "V1",
        "when the valve fires",
        "before a call, with a positive input cap, a "
        "metered input and compactions left, the valve compacts exactly when the "
        "input meter is above the cap times the threshold",
    ),
    Property(
        "V2",
        "never when unlimited or idle",
        "the valve never fires without a positive input cap or with an empty input meter",
    ),
    Property(
        "V3",
        "what compaction does",
        "a compaction counts once, resets the meters and sends the LLM exactly the progress prompt",
    ),
    Property(
        "V4",
        "progress survives",
        "the progress prompt lists as verified exactly the criteria a tool call verified",
    ),
    Property("V5", "at most three", "no run compacts more than three times"),
    Property(
        "V6",
        "context errors",
        "a failed call that says the context was too long "
        "compacts while compactions remain; any other failure does not",
    ),
    Property(
        "V7",
        "the valve protects the cap",
        "with a valid threshold, the valve fires before the input cap is reached",
    ),
    Property(
        "V8",
        "bad configuration",
        "a compaction threshold outside (0, 1) or not a number is rejected, never used",
    ),
    Property(
        "S1",
        "whose turn",
        "exactly one party writes a turn: nobody when not "
        "stored, the server when it was handed the conversation, the owner otherwise",
    ),
    Property(
        "S2",
        "what is stored",
        "the stored turn is the original input and the "
        "output the request ended with, never the compacted input",
    ),
    Property("S3", "once", "a turn is settled once, with the first report"),
    Property("S4", "hand-over", "the owner of a compacted turn is created holding it"),
    Property(
        "S5",
        "nothing slips through",
        "a compacted request that ends with its turn unsettled fails loudly",
    ),
    Property(
        "S6",
        "the conversation",
        "after every request the conversation holds "
        "exactly the turns the model settles, item by item, in order",
    ),
    Property(
        "S7", "failed writes", "a failed write changes nothing and the request says it failed"
    ),
    Property(
        "S8", "one writer", "only the owner and the inference server write conversation items"
    ),
    Property(
        "S9",
        "compaction is invisible",
        "a request served compacted answers what it would answer uncompacted",
    ),
    Property(
        "C1",
        "compaction trigger",
        "a request is compacted exactly when its "
        "estimate is above both the threshold share of the window and the floor",
    ),
)

#: id -> property, in catalogue order
CATALOGUE: Mapping[str, Property] = {p.id: p for p in _ALL}


def applying(*ids: str, notes: Mapping[str, str] | None = None) -> dict[str, str]:
    """A target's applicable properties as reports show them (id -> short name), in
    the order given; ``notes`` adds the target's qualification to a name ("needs an
    owner: not in these trees"). An id not in the catalogue is an error."""
    unknown = [i for i in ids if i not in CATALOGUE]
    if unknown:
        raise KeyError(f"not in the property catalogue: {', '.join(unknown)}")
    extra = notes or {}
    return {i: CATALOGUE[i].name + (f" ({extra[i]})" if i in extra else "") for i in ids}

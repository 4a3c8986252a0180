"""ledger: conversation turns, compaction and turn settlement (docs/properties.md, section 3).

Modules:

- :mod:`ledger.items`: item kinds and shapes, input normalisation;
- :mod:`ledger.store`: the SQLite conversation store (one transaction per turn);
- :mod:`ledger.config`: :class:`CompactionConfig`;
- :mod:`ledger.compaction`: token estimate, the C1 trigger, compaction plans;
- :mod:`ledger.server`: the Responses-style inference server;
- :mod:`ledger.backends`, :mod:`ledger.shields`: pluggable inference and input checks;
- :mod:`ledger.owner`: the settlement owner :class:`PendingTurn`;
- :mod:`ledger.service`: the request paths (:class:`Ledger`).
"""

from ledger.config import CompactionConfig, ConfigError
from ledger.owner import Outcome, PendingTurn, TurnNotStoredError
from ledger.server import InferenceServer
from ledger.service import Ledger, Reply, Request, StreamEvent
from ledger.store import (
    ConversationStore,
    FaultInjectingStore,
    UnknownConversationError,
    WriteFailedError,
)

__all__ = [
    "CompactionConfig",
    "ConfigError",
    "ConversationStore",
    "FaultInjectingStore",
    "InferenceServer",
    "Ledger",
    "Outcome",
    "PendingTurn",
    "Reply",
    "Request",
    "StreamEvent",
    "TurnNotStoredError",
    "UnknownConversationError",
    "WriteFailedError",
]

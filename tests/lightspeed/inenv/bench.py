"""Speed of one lightspeed-stack tree in its environment, printed as one JSON line.

Run by ``python -m ctxaudit.targets.lightspeed.bench`` (which writes the report):
the service's start, one request end to end through the app, OGX and the
fake LLM (median of ``--requests`` per path), and the lockstep's examples per
second (derandomized, no shrinking), with a calibration figure measured in
the same process so runs compare as ratios.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from ctxaudit.targets.lightspeed.fake_llm import Reply
from ctxaudit.timing import calibrate
from tests.lightspeed.inenv import programs, service
from tests.lightspeed.inenv.test_lockstep import LightspeedMachine


def main() -> None:
    requests = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    started = time.monotonic()
    ls = service.get()
    boot = time.monotonic() - started
    conv = None
    timings: dict[str, list[float]] = {}
    for n in range(requests):
        for path in ("query", "streaming_query", "responses", "responses_stream"):
            tag = f"b{path[:2]}{n}"
            service.SCRIPTS[tag] = Reply((f"{tag}a", f" {tag}b"))
            t0 = time.monotonic()
            if path == "query":
                conv = ls.query(f"{tag} hello", None).conversation
            elif path == "responses":
                ls.responses(f"{tag} hello", conv)
            else:
                endpoint = "/v1/streaming_query" if path == "streaming_query" else "/v1/responses"
                payload = (
                    {"query": f"{tag} hello", "conversation_id": conv}
                    if path == "streaming_query"
                    else {"input": f"{tag} hello", "conversation": conv, "stream": True}
                )
                ls.stream(endpoint, {**payload, "generate_topic_summary": False})
            timings.setdefault(path, []).append(time.monotonic() - t0)
    examples = 20
    counted: list[int] = []

    class Counted(LightspeedMachine):
        def teardown(self) -> None:
            counted.append(1)
            super().teardown()

    reproduction = {fid: programs.run(fid) for fid in programs.PROGRAMS}
    Counted.excluded = programs.reproducing(reproduction)
    t0 = time.monotonic()
    run_state_machine_as_test(
        Counted,
        settings=settings(
            max_examples=examples,
            stateful_step_count=20,
            derandomize=True,
            database=None,
            phases=[Phase.generate],
            deadline=None,
        ),
    )
    lockstep = time.monotonic() - t0
    result = {
        "calibration_s": calibrate(),
        "boot_s": boot,
        "median_request_s": {p: statistics.median(v) for p, v in timings.items()},
        "requests_per_path": requests,
        "lockstep_examples": len(counted),
        "lockstep_s": lockstep,
        "llm_calls": len(ls.llm.calls),
    }
    service.stop()
    print("CTXAUDIT-BENCH " + json.dumps(result))


if __name__ == "__main__":
    main()

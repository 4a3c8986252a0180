"""audit-time.md: where the time of an audit run went."""

from __future__ import annotations

import json
from pathlib import Path

from ctxaudit.timing import AuditTime


def test_times_shares_and_rates(tmp_path: Path) -> None:
    clock = AuditTime(command="ctxaudit audit", profile="thorough", jobs=2)
    clock.target("gitreins-0.17.1").properties_s = 170
    clock.target("gitreins-0.17.1").mutation_s = 300
    clock.target("ledger-0.1.0").properties_s = 190
    clock.target("ledger-0.1.0").mutation_s = 100
    mte = {
        "files": {"a.py": {"mutants": [{}] * 40}},
        "performance": {"mutation": 20_000},
        "config": {"peer": {"timings": {"baseline": 8.0, "mutation": 4.0}}},
    }
    (tmp_path / "m.json").write_text(json.dumps(mte))
    clock.read_mutation("gitreins-0.17.1", tmp_path / "m.json")
    clock.properties_wall_s, clock.mutation_wall_s, clock.total_s = 190, 400, 590
    md = clock.write(tmp_path).read_text()
    assert "| gitreins-0.17.1 | 170 s | – | 300 s | 75% | 40 | – | 2.00 | 12 s |" in md
    assert "| ledger-0.1.0 | 190 s | – | 100 s | 25% | – | – | – | – |" in md
    assert "**Total 9.8 min (590 s)**" in md
    doc = json.loads((tmp_path / "audit-time.json").read_text())
    assert doc["targets"]["gitreins-0.17.1"]["mutants_per_s"] == 2.0

"""timing/audit-time.md: where the time of an audit run went."""

from __future__ import annotations

import json
from pathlib import Path

from ctxaudit.paths import REPO_ROOT
from ctxaudit.timing import AuditTime, shown_command


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
    assert md.startswith("# Time of the audit of gitreins-0.17.1, ledger-0.1.0 (")
    doc = json.loads((tmp_path / "timing" / "audit-time.json").read_text())
    assert doc["targets"]["gitreins-0.17.1"]["mutants_per_s"] == 2.0


def test_the_command_shows_no_machine_path() -> None:
    """A path in the checkout is shown relative to it; any other absolute path as its
    option's name, quoted or not; other arguments as they are."""
    command = (
        f"ctxaudit audit --target {REPO_ROOT}/.cache/gitreins/0.17.1 --out /tmp/audit3 "
        "--lightspeed-repo=/srv/lightspeed.bundle --target 'lightspeed-stack>=0.6.0' "
        "--out '/tmp/a b' /srv/x"
    )
    assert shown_command(command) == (
        "ctxaudit audit --target .cache/gitreins/0.17.1 --out OUT "
        "--lightspeed-repo=LIGHTSPEED_REPO --target 'lightspeed-stack>=0.6.0' "
        "--out 'OUT' PATH"
    )
    assert AuditTime(command=command, profile="ci", jobs=1).command == shown_command(command)

"""C1, S6 and S7 on langchain's ``SummarizationMiddleware``: the release and the model
(``model/fold.py``), driven in lockstep by the fold concern's shared lockstep
(``ctxaudit/locksteps/fold.py``) through langchain's adapter
(``ctxaudit/targets/langchain/adapter.py``: the trigger forms, threshold kinds and
summarizers the release documents, its contract as the model's parameters), then the
concern's seed-free programs (``ctxaudit/locksteps/fold_programs.py``). A step that
enters a registered finding's region is left out (``ctxaudit/targets/langchain/findings.py``).
"""

from __future__ import annotations

import pytest

from ctxaudit.concerns.fold import Step
from ctxaudit.locksteps.fold import make_machine
from ctxaudit.locksteps.fold_programs import PROGRAMS, NotApplicable, run_program
from ctxaudit.targets.langchain import findings
from ctxaudit.targets.langchain.adapter import Summarization
from tests.langchain.inenv.conftest import VERSION

pytestmark = pytest.mark.properties("C1", "S6", "S7")


def left_out(step: Step) -> str | None:
    return findings.left_out(VERSION, step)


TestFold = make_machine(Summarization(VERSION), left_out).TestCase


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_fold_program(name: str) -> None:
    try:
        run_program(name, Summarization(VERSION), left_out)
    except NotApplicable as why:
        pytest.skip(str(why))

"""What a user states about context handling without knowing any algorithm.

Each module checks one concern's invariants on what a lockstep observed, with no
reference to the model (``model/``): the model can be wrong too, so the model is held
to the same checks by its own suites (``tests/model/``). A check returns the broken
invariants as sentences, each opening with its id (``docs/properties.md``, section
"Invariants"); an empty list means every invariant holds on that step.
"""

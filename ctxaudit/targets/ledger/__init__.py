"""The ledger target: this project's own turn settlement (``ledger/``, S1-S9, C1).

- ``target.py``: the :class:`~ctxaudit.targets.base.Target` the registry names;
- ``mutation.toml``: what the mutation runner mutates of it.
"""

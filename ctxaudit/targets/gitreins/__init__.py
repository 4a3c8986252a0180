"""The gitreins target: its budget meter and compaction valve (B1-B6, V1-V8).

- ``target.py``: the :class:`~ctxaudit.targets.base.Target` the registry names;
- ``tree.py``: a published release (fetched from PyPI) or a source tree, imported;
- ``config.py``, ``loop.py``: how the suites drive its configuration and its loop;
- ``sdist.py``, ``peer_fixtures.py``: its own tests (the peer suite), from its sdist;
- ``findings.py``: its known findings; ``fixes/``: a fix for each;
- ``mutation.toml``: what the mutation runner mutates of it.
"""

"""The lightspeed-stack target: its turn settlement over a real OGX (S1-S9, C1).

- ``target.py``: the :class:`~ctxaudit.targets.base.Target` the registry names;
- ``tree.py``, ``env.py``: source trees of its git repository and their locked
  Python 3.12 environments;
- ``harness.py``, ``runner.py``, ``wire.py``, ``fake_llm.py``, ``a2a_client.py``: how
  the suites drive its real app, with only the LLM faked; ``service_config.py`` (the
  app's and OGX's configuration), ``clock.py``, ``ogx_items.py`` (what OGX stored) and
  ``streaming.py`` (reading its streams) serve the harness;
- ``findings.py``: its known findings; ``fixes/``: a fix for each;
- ``bench.py``: its benchmark; ``mutation.toml``: what the mutation runner mutates.
"""

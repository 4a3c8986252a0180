"""The concerns' locksteps: each drives the reference model (``model/``) and any
harness's adapter (:mod:`ctxaudit.concerns`, the protocols) with the same steps, holds
each step of the harness to the concern's invariants (``ctxaudit/invariants/``), then
compares it with the model. They import the model and Hypothesis; the protocols do
not."""

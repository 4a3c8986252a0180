"""The concerns every harness shares, each as one adapter protocol and one lockstep.

A harness meters a budget, folds its conversation and stores its turns; the
properties of each concern (``docs/properties.md``) are the same whatever the harness.
A concern here is:

- a *protocol*: what an adapter of a harness must do for the lockstep to drive it
  (typed, documented in ``docs/targets.md``), and the *capabilities* it declares (what
  the harness has: tool calls, a time cap, a context reset ...). A rule whose
  capability the harness lacks is never drawn, and the report says which;
- a *lockstep* (``ctxaudit/locksteps/``): a Hypothesis state machine that drives the
  reference model (``model/``) and the adapter with the same steps, holds every step of
  the harness to the concern's invariants (``ctxaudit/invariants/``, which do not trust
  the model), then compares it with the model.

The protocols import neither the model nor Hypothesis: an adapter imports them
wherever its harness is loaded (an installed ctxaudit's registry reads a target's
package in its own process).

A target's suite is then its adapter and one line that runs the lockstep on it, or,
for a target that declares its adapters (``concerns``), ctxaudit's shared suites
(``ctxaudit/targets/concern_suites/``), with no test of its own.
Concerns so far: the budget meter stepped call by call (:mod:`ctxaudit.concerns.budget`)
and over whole agent runs (:mod:`ctxaudit.concerns.budget_runs`); the fold of a
summarized conversation (:mod:`ctxaudit.concerns.fold`); the session store
(:mod:`ctxaudit.concerns.sessions`).
"""

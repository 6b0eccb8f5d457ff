"""The guard's rules: unfolded invocations -> hits with reason codes.

- :mod:`.registry`: what a rule is (``@rule`` / ``@line_rule`` metadata), the facts gates read.
- :mod:`.engine`: runs every rule whose derived gate passes (``judge_unfolded``).
- :mod:`.table` + ``commands.toml``: rules that are data (program, argument conditions, code).
- topic modules with the rules that need code: :mod:`.files`, :mod:`.git`, :mod:`.network`,
  :mod:`.recon`, :mod:`.escapes`, :mod:`.evasion`, :mod:`.tamper`; narrow allowances (what stays
  in the project, a cache or build output) in :mod:`.scoped`; shared helpers in
  :mod:`.common`, vocabularies in :mod:`.vocab`.

Every rule carries the commands it must fire on and stay quiet on: table rows in
``commands.toml``, code rules in ``examples.toml``; the test suite runs them all, and
``domestique.guard.examples`` keeps the end-to-end examples per reason code.
"""

from __future__ import annotations

from domestique.guard.rules.engine import judge_unfolded

__all__ = ["judge_unfolded"]

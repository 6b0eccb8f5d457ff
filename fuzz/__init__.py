"""Fuzzing harnesses, one module per untrusted-input parser (``fuzz_<target>.py``).

Run them with ``./dev fuzz SECONDS [TARGET ...]``; the test suite runs a short smoke of each
(``tests/reliability/test_fuzz_smoke.py``). See ``_harness.py`` for how a run works.
"""

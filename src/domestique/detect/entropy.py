"""Shannon entropy, apart from :mod:`domestique.detect.validators` so that the known values of a
hook's caller (:mod:`domestique.detect.known_values`) are read without loading the validators
(their regexes and imports cost a cold hook call several milliseconds)."""

from __future__ import annotations

import math
from collections import Counter


def shannon_entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character (0.0 for the empty string)."""
    n = len(value)
    if n == 0:
        return 0.0
    counts = Counter(value)
    return -sum((c / n) * math.log2(c / n) for c in counts.values())

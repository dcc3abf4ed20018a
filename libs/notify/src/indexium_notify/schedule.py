"""When a failed delivery goes again: exponential backoff, at least what the receiver asked.

Attempt n (1 = the first POST) that failed is followed after ``base x 2^(n-1)`` seconds,
capped at ``cap``, spread by +-10 % so the retries of one receiver's many deliveries do not
arrive together; a ``Retry-After`` (a 429's or a 503's) is honoured when it asks for longer
(up to ``longest``: a receiver cannot park a delivery past its deadline). With the defaults
(10 s, 1 h) a delivery is tried at about 0 s, 10 s, 30 s, 70 s, 2.5 min, 5 min, 10.5 min,
21 min, 42 min, 1 h 25 min, then hourly until 24 h: 32 POSTs at most.
"""

from __future__ import annotations

import random

JITTER = 0.1


def retry_delay(attempt: int, *, base_s: float, cap_s: float, retry_after_s: float | None = None,
                longest_s: float | None = None, rng: random.Random | None = None) -> float:
    delay = min(cap_s, base_s * 2 ** max(0, attempt - 1))
    delay *= 1 + JITTER * (2 * (rng or random).random() - 1)
    if retry_after_s is not None and retry_after_s > delay:
        delay = retry_after_s if longest_s is None else min(retry_after_s, longest_s)
    return max(0.0, delay)

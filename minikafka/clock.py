"""The broker's one wall clock, in milliseconds since the epoch (record timestamps, ages)."""

from __future__ import annotations

import time


def now_ms() -> int:
    return int(time.time() * 1000)

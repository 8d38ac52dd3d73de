"""What the broker's own commands share: ``name=value`` settings and a one-sentence exit."""

from __future__ import annotations

import sys
from typing import NoReturn


def parse_pairs(items: list[str] | None, what: str) -> dict[str, str]:
    """``["a=1", "b=2"]`` -> ``{"a": "1", "b": "2"}``; exits with a sentence on a bad item."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            fail(f"{what} {item!r} must look like name=value.")
        out[key.strip()] = value.strip()
    return out


def fail(sentence: str, code: int = 1) -> NoReturn:
    print(f"Error: {sentence}", file=sys.stderr)
    raise SystemExit(code)

"""What every schema type module returns: a parsed schema, or InvalidSchema (error 42201)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class InvalidSchema(ValueError):
    """The text is not a schema of its type (the registry answers 422, error code 42201)."""


@dataclass(frozen=True)
class ParsedSchema:
    schema_type: str
    canonical: str  # what the registry stores and returns
    identity: str  # equal for two texts of the same schema (whitespace, key order)
    parsed: Any  # the type module's own form

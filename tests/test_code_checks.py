"""The code's own rules, checked on every run: layer contracts, lint and types.

- import-linter: the repository's packages run one way (tests, bench and slides,
  translations, kafka_course, minikafka), the broker imports no Kafka client, its layers run
  one way, the translation build's parts stand on one shared module, and no package has
  import cycles (contracts in pyproject.toml).
- ruff: the lint rules in pyproject.toml, over everything Python in the repository.
- mypy: the whole broker (minikafka) and course package (kafka_course) type-check, every function of
  both annotated (pyproject.toml).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


def tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{name} is not installed in {BIN}: it is part of the test extra (pip install -e '.[test]')")
    return str(path)


def test_layer_contracts_hold():
    done = run(tool("lint-imports"), "--no-cache")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout


def test_ruff_finds_nothing():
    done = run(tool("ruff"), "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_broker_and_course_type_check():
    done = run(tool("mypy"))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]

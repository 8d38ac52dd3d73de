"""The broker as the course package uses it: the one module of minikafka that kafka_course imports.

An import-linter contract (pyproject.toml) holds kafka_course to this module, so what the course
relies on is declared here and nowhere else:

- ``Cluster``: brokers inside the calling process (the embedded cluster, the labs' clusters);
- ``ProcessCluster``: KRaft controllers and brokers each in its own process (kill, pause, restart,
  and with ``links=True`` a fault proxy on every link), for the KRaft lesson; ``RunningProcesses``:
  the nodes of one that another process started (``serve --controllers``), stopped, paused and started
  from the notebook as docker compose does for the compose cluster, and with ``--links`` the links
  between them cut, delayed and healed (``partition``, ``delay``, ``drop``, ``reset``, ``heal``; ``NoLinks``
  when it was started without them);
- ``main``: the ``minikafka`` command line, which ``course.shell()`` runs in the process;
- ``fail`` and ``parse_pairs``: the command-line tools' error exit and ``key=value`` parsing;
- ``ConfigError``, ``ErrorCode`` and ``explain``: a refused setting, Kafka's error codes and their sentences;
- ``codec``: the wire protocol's request and response classes (the tools' raw requests);
- ``BatchHeader``, ``split_batches``, ``COMPRESSION_NAMES`` and ``scan_batches``: record batches as
  stored, for the labs that read a partition's files;
- ``Record`` and ``build_batch``: a record batch to send, for the transaction protocol v2 producer of
  notebook 08 (``kafka_course.transaction_v2``).

The light names are imported with this module. The others are imported on first use, as
``minikafka.Cluster`` is, so a course tool that needs none of them starts as fast as before.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .cli.common import fail, parse_pairs
from .config import ConfigError
from .errors import ErrorCode, explain

if TYPE_CHECKING:
    from .cli.main import main
    from .cluster import Cluster
    from .processes import ProcessCluster
    from .running import NoLinks, RunningProcesses
    from .log.segment import scan_batches
    from .protocol import codec
    from .records import COMPRESSION_NAMES, BatchHeader, Record, build_batch, split_batches

__all__ = ["COMPRESSION_NAMES", "BatchHeader", "Cluster", "ConfigError", "ErrorCode", "NoLinks", "ProcessCluster",
           "Record", "RunningProcesses",
           "build_batch", "codec", "explain", "fail", "main", "parse_pairs", "scan_batches", "split_batches"]

# name -> (module, attribute; None for the module itself)
_ON_FIRST_USE: dict[str, tuple[str, str | None]] = {
    "Cluster": ("minikafka.cluster", "Cluster"),
    "ProcessCluster": ("minikafka.processes", "ProcessCluster"),
    "RunningProcesses": ("minikafka.running", "RunningProcesses"),
    "NoLinks": ("minikafka.running", "NoLinks"),
    "main": ("minikafka.cli.main", "main"),
    "codec": ("minikafka.protocol.codec", None),
    "scan_batches": ("minikafka.log.segment", "scan_batches"),
    "BatchHeader": ("minikafka.records", "BatchHeader"),
    "split_batches": ("minikafka.records", "split_batches"),
    "COMPRESSION_NAMES": ("minikafka.records", "COMPRESSION_NAMES"),
    "Record": ("minikafka.records", "Record"),
    "build_batch": ("minikafka.records", "build_batch"),
}


def __getattr__(name: str) -> Any:
    if name not in _ON_FIRST_USE:
        raise AttributeError(f"module 'minikafka.api' has no attribute {name!r}")
    module_name, attribute = _ON_FIRST_USE[name]
    module = importlib.import_module(module_name)
    return module if attribute is None else getattr(module, attribute)

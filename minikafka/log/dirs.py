"""A broker's log directories (Kafka's ``log.dirs``): where each partition's files live.

Kafka spreads a broker's partitions over several directories, often one per disk: a new
replica goes to the directory holding the fewest partitions, each partition's files stay
in one directory (``topic-0/``), and an administrator can move a replica to another
directory (AlterReplicaLogDirs: a *future* log, ``topic-0.<id>-future``, is filled beside
the current one and then takes its place). A directory the broker cannot use (it cannot be
created or written) is *offline*: DescribeLogDirs reports it with KAFKA_STORAGE_ERROR and
nothing is placed or moved there.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import ErrorCode, KafkaError

log = logging.getLogger("minikafka.log")

FUTURE_SUFFIX = "-future"


@dataclass(frozen=True, slots=True)
class PartitionDir:
    root: Path  # the log directory
    topic: str
    index: int
    path: Path
    future: bool = False


def parse_partition_dir(path: Path) -> tuple[str, int, bool] | None:
    """(topic, partition, is_future) of ``topic-0`` or ``topic-0.<id>-future``, else None."""
    name, future = path.name, path.name.endswith(FUTURE_SUFFIX)
    if future:
        name = name[: -len(FUTURE_SUFFIX)].rpartition(".")[0]
    topic, sep, index = name.rpartition("-")
    if not sep or not topic or not index.isdigit():
        return None
    return topic, int(index), future


def future_name(topic: str, index: int) -> str:
    return f"{topic}-{index}.{uuid.uuid4().hex}{FUTURE_SUFFIX}"


class LogDirs:
    """The log directories of one broker; the first also holds the broker's markers."""

    def __init__(self, roots: list[Path]):
        self.roots = [Path(os.path.abspath(r)) for r in roots]
        self.offline: dict[Path, str] = {}  # root -> why it cannot be used
        for root in self.roots:
            self._check(root)
        if self.roots and len(self.offline) == len(self.roots):
            raise ValueError(f"none of the log directories of log.dirs can be used: {self._why()}")

    def _check(self, root: Path) -> None:
        try:
            root.mkdir(parents=True, exist_ok=True)
            probe = root / ".minikafka-write-check"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as e:
            self.offline[root] = e.strerror or str(e)
            log.error("log directory %s is offline: %s", root, self.offline[root])

    def _why(self) -> str:
        return "; ".join(f"{root}: {why}" for root, why in self.offline.items())

    @property
    def online(self) -> list[Path]:
        return [r for r in self.roots if r not in self.offline]

    def partition_dirs(self) -> Iterator[PartitionDir]:
        """Every partition directory (current and future) in the online log directories."""
        for root in self.online:
            for path in sorted(p for p in root.iterdir() if p.is_dir()):
                parsed = parse_partition_dir(path)
                if parsed is not None:
                    yield PartitionDir(root, parsed[0], parsed[1], path, parsed[2])

    def find(self, topic: str, index: int) -> Path | None:
        """The current directory of a partition already on disk."""
        name = f"{topic}-{index}"
        return next((r / name for r in self.online if (r / name).is_dir()), None)

    def place(self, topic: str, index: int, load: Callable[[], dict[Path, int]],
              preferred: Path | None = None) -> Path:
        """Where a replica lives: its existing directory, else the preferred one (an
        AlterReplicaLogDirs that came before the replica), else the least loaded. ``load``
        (replicas per directory) is counted only when there is a choice to make: counting
        visits every replica of the broker, too much to do for each new partition."""
        found = self.find(topic, index)
        if found is not None:
            return found
        online = self.online
        if preferred in online:
            root = preferred
        elif len(online) == 1:
            root = online[0]
        else:
            counts = load()
            root = min(online, key=lambda r: counts.get(r, 0))
        return root / f"{topic}-{index}"

    def lookup(self, path: str) -> Path:
        """A log directory named in a request: LOG_DIR_NOT_FOUND or KAFKA_STORAGE_ERROR if unusable."""
        root = Path(os.path.abspath(path))
        if root not in self.roots:
            raise KafkaError(ErrorCode.log_dir_not_found, f"{path} is not one of this broker's log.dirs.")
        if root in self.offline:
            raise KafkaError(ErrorCode.kafka_storage_error, f"Log directory {path} is offline: {self.offline[root]}.")
        return root

    @staticmethod
    def root_of(partition_dir: Path) -> Path:
        return partition_dir.parent

    @staticmethod
    def space(root: Path) -> tuple[int, int]:
        """(total bytes, usable bytes) of the file system holding ``root``."""
        try:
            stat = os.statvfs(root)
        except OSError:
            return -1, -1
        return stat.f_blocks * stat.f_frsize, stat.f_bavail * stat.f_frsize

    @staticmethod
    def remove(path: Path) -> None:
        shutil.rmtree(path, ignore_errors=True)

"""The ``quorum-state`` file: the epoch, leader and vote a controller must not forget (KIP-595).

A voter that granted its vote in an epoch and then restarted must not vote again in that
epoch for someone else, or two candidates could both win it. Kafka keeps this election
state in a small JSON file, ``<metadata log dir>/__cluster_metadata-0/quorum-state``, written
to a temporary file, fsynced and renamed over the old one before any answer that depends on
it goes out. The field names are Kafka's (``QuorumStateData``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .messages import NO_LEADER

FILE_NAME = "quorum-state"
DATA_VERSION = 0


@dataclass(frozen=True)
class ElectionState:
    """Who leads (or was voted for in) which epoch; -1 when nobody."""

    epoch: int = 0
    leader_id: int = NO_LEADER
    voted_id: int = NO_LEADER


class QuorumStateStore:
    """Reads and writes one controller's ``quorum-state`` file (None: kept in memory only)."""

    def __init__(self, directory: str | Path | None, voters: tuple[int, ...] = ()):
        self.path = Path(directory) / FILE_NAME if directory is not None else None
        self.voters = voters
        self._state = ElectionState()

    def read(self) -> ElectionState:
        if self.path is None or not self.path.exists():
            return self._state
        data = json.loads(self.path.read_text())
        self._state = ElectionState(data["leaderEpoch"], data["leaderId"], data["votedId"])
        return self._state

    def write(self, state: ElectionState) -> None:
        if state == self._state and (self.path is None or self.path.exists()):
            return
        self._state = state
        if self.path is None:
            return
        data = {
            "clusterId": "",
            "leaderId": state.leader_id,
            "leaderEpoch": state.epoch,
            "votedId": state.voted_id,
            "appliedOffset": 0,
            "currentVoters": [{"voterId": v} for v in self.voters],
            "data_version": DATA_VERSION,
        }
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            json.dump(data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

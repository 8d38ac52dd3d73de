"""The leader epoch cache: where each leader's writes begin in a partition's log (KIP-101, KIP-279).

A follower that comes back asks the leader where its last epoch ended and cuts its log
there, so logs that diverged under different leaders agree again.
"""

from __future__ import annotations


class LeaderEpochCache:
    """(epoch, start offset) pairs, in epoch order."""

    def __init__(self) -> None:
        self.entries: list[tuple[int, int]] = []

    def assign(self, epoch: int, start_offset: int) -> None:
        if epoch < 0 or (self.entries and self.entries[-1][0] >= epoch):
            return
        self.entries.append((epoch, start_offset))

    def truncate_from(self, offset: int) -> None:
        """Forget the epochs that start at or after ``offset`` (the log was cut there)."""
        self.entries = [e for e in self.entries if e[1] < offset]

    @property
    def latest(self) -> int:
        return self.entries[-1][0] if self.entries else -1

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(largest epoch <= ``epoch`` known here, the offset where it ended)."""
        known = [e for e in self.entries if e[0] <= epoch]
        if not known:
            return -1, self.entries[0][1] if self.entries else log_end_offset
        i = self.entries.index(known[-1])
        end = self.entries[i + 1][1] if i + 1 < len(self.entries) else log_end_offset
        return known[-1][0], end

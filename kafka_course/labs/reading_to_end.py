"""Check a learner's ``read_to_end(topic)``: every record up to each partition's end, then stop.

A consumer never learns that a topic is finished, so "rebuild the table now" needs a
bound: the end offsets asked for before reading. The check writes a topic whose
partitions are shaped to catch the usual mistakes, runs the learner's generator in a
thread (it may never stop), and writes more records as soon as the first one arrives:

* partition 0 is empty: its position is already at its end, so a loop that stops when
  *any* partition is done stops before reading anything;
* partitions 1 and 2 hold different numbers of records;
* the records written during the read are past the end as it was when the call began:
  a loop that asks for the end again on every turn reads them;
* the last record of partitions 1 and 2 is bigger than a fetch brings of one partition
  (``max.partition.fetch.bytes``, 1 MiB by default), so it always comes in a poll of its
  own: a loop that takes ``end - 1`` for the end stops one poll early, without it;
* a loop whose condition is never true (``>`` for ``>=``) does not stop: the check
  gives up after ``timeout`` seconds and says so (the learner's thread is left to run
  out its own bound).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..checks import Report, where
from ..i18n import _

SIZES = (0, 40, 120)  # records per partition: one empty, two of different lengths
LATE = 10  # records written to partitions 1 and 2 once the read has begun
BIG = 1_200_000  # bytes of each partition's last record: more than one fetch of a partition brings
MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # what the topic and the check's producer accept


@dataclass
class Read:
    """What the learner's generator yielded, from a thread."""
    seen: list[tuple[int, int]] = field(default_factory=list)  # (partition, offset)
    error: BaseException | None = None
    first: threading.Event = field(default_factory=threading.Event)
    go_on: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)

    def run(self, read_to_end: Callable[[str], Any], topic: str) -> None:
        try:
            for record in read_to_end(topic):
                self.seen.append((record.partition, record.offset))
                if not self.first.is_set():
                    self.first.set()
                    self.go_on.wait(30)  # the check writes its late records meanwhile
        except BaseException as e:  # noqa: BLE001 - reported as the learner's error
            self.error = e
        finally:
            self.first.set()
            self.done.set()


def check(report: Report, read_to_end: Callable[[str], Any], bootstrap: str, timeout: float = 10) -> bool:
    """Two checks: ``read_to_end`` stops, and it yields exactly the records up to the end.
    Returns whether it stopped (a function that reads with it would hang too)."""
    from ..clients import new_topic
    topic = new_topic("lab06-read-to-end", partitions=len(SIZES), config={"max.message.bytes": MAX_MESSAGE_BYTES},
                      bootstrap=bootstrap)
    _write(topic, bootstrap, {p: range(n - 1) for p, n in enumerate(SIZES) if n})
    _write(topic, bootstrap, {p: range(n - 1, n) for p, n in enumerate(SIZES) if n}, big=True)
    read = Read()
    threading.Thread(target=read.run, args=(read_to_end, topic), name="lab06-read-to-end", daemon=True).start()
    deadline = time.monotonic() + timeout
    read.first.wait(timeout)
    _write(topic, bootstrap, {p: range(n, n + LATE) for p, n in enumerate(SIZES) if n})
    read.go_on.set()
    read.done.wait(max(1.0, deadline - time.monotonic()))
    if read.error is not None:
        report.check(False, "", _("read_to_end({topic!r}) raised {error}: {message} ({where}).").format(
            topic=topic, error=type(read.error).__name__, message=read.error, where=where(read.error)))
        report.not_run(_("read_to_end yields every record up to the end, and no later one"))
        return True
    stopped = report.check(read.done.is_set(), _("read_to_end stops once every partition has reached its end offset"),
                           _("read_to_end did not stop: {timeout:.0f} s after the read began it had yielded {count} "
                             "records and was still waiting for more. Stop as soon as the position of every "
                             "partition has reached the end offset you asked for at the start (a position equal to "
                             "the end means there is nothing left).").format(timeout=timeout, count=len(read.seen)))
    _judge(report, list(read.seen))
    return stopped


def _write(topic: str, bootstrap: str, offsets: dict[int, range], big: bool = False) -> None:
    """Write the records; ``big`` ones, alone in their batch, carry ``BIG`` bytes of padding."""
    from ..clients import producer
    writer = producer(bootstrap, linger_ms=5, message_max_bytes=MAX_MESSAGE_BYTES)
    for partition, numbers in offsets.items():
        for n in numbers:
            value = f"record {n} of partition {partition}"
            writer.produce(topic, value=value.encode() + (b" " * BIG if big else b""), partition=partition)
    if writer.flush(30):
        raise RuntimeError(f"could not write the records of {topic}")


def _judge(report: Report, seen: list[tuple[int, int]]) -> None:
    want = {(p, o) for p, n in enumerate(SIZES) for o in range(n)}
    missing = want - set(seen)
    late = sorted({(p, o) for p, o in seen if o >= SIZES[p]})
    twice = len(seen) - len(set(seen))
    problems = []
    last = {(p, n - 1) for p, n in enumerate(SIZES) if n}
    if missing and missing <= last:
        p, o = min(missing)
        problems.append(_("it stopped one record short of the end in {count} partition(s): it never yielded offset "
                          "{offset} of partition {partition}, the last one. The end offset is the offset the *next* "
                          "record will get, so a partition is read to its end when its position equals the end "
                          "offset, not end - 1").format(count=len(missing), offset=o, partition=p))
    elif missing:
        short = {p: len([1 for q, _ in missing if q == p]) for p in range(len(SIZES))}
        per_partition = ", ".join(_("{count} of partition {partition}").format(count=n, partition=p)
                                  for p, n in short.items() if n)
        problems.append(_("it missed {missing} of the {total} records that were there when the call began "
                          "({per_partition}). Partition 0 is empty, so it is at its end from the start: keep "
                          "reading until *every* partition is").format(missing=len(missing), total=len(want),
                                                                       per_partition=per_partition))
    if late:
        problems.append(_("it also yielded {count} records written after the call began (e.g. partition {partition} "
                          "offset {offset}): ask for the end offsets once, before reading, and stop there").format(
                              count=len(late), partition=late[0][0], offset=late[0][1]))
    if twice:
        problems.append(_("{count} records came twice").format(count=twice))
    report.check(not problems, _("read_to_end yields all {total} records up to the end as it was when the call began, "
                                 "and none written later").format(total=len(want)),
                 _("read_to_end: {problems}.").format(problems="; ".join(problems)) if problems else "")

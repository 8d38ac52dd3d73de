"""Check for lab 06: rebuild the state of a bank from its topics.

``prepare()`` writes two topics, the way an event-sourced bank service would:

* ``bank.events``: every event of every account, kept forever, keyed by account:
  ``{"account": ..., "type": "opened" | "deposit" | "withdrawal" | "closed", "amount": ...}``;
* ``bank.snapshots``: a compacted topic with the account's balance after each event
  (``{"account": ..., "balance": ...}``), and a tombstone when an account is closed.
  On minikafka its older part is compacted before the last events are written, so the
  learner meets gaps in the offsets, one old record for most accounts, and a recent
  tail where accounts change again and closed accounts end with a tombstone.

The learner writes ``apply(balances, event)`` (one step of the fold),
``read_to_end(topic)`` (every record up to the end as of the call, see ``reading_to_end``),
``replay(topic)`` (all events, in order per account, through ``apply``) and
``load_snapshots(topic)`` (last value per key, tombstones delete). ``check()`` tests
``apply`` and ``read_to_end`` on their own, then compares both tables with the state the
bank really has.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..checks import Report
from ..i18n import _

if TYPE_CHECKING:
    from confluent_kafka import Producer

    from ..handle import ClusterHandle


@dataclass
class Bank:
    events: str
    snapshots: str
    bootstrap: str
    _expected: dict[str, int]
    _closed: set[str]


def _history(accounts: int, events: int, seed: int) -> list[dict[str, Any]]:
    """A believable history: accounts open, money moves, a few accounts close."""
    rng = random.Random(seed)
    names = [f"account-{n:02d}" for n in range(accounts)]
    out = [{"account": name, "type": "opened", "amount": 0} for name in names]
    open_ = {name: 0 for name in names}
    closing = set(rng.sample(names, max(1, accounts // 4)))
    for i in range(events):
        name = rng.choice(sorted(open_))
        if name in closing and i > events * 2 // 3:
            out.append({"account": name, "type": "closed", "amount": 0})
            del open_[name]
            continue
        kind = "withdrawal" if open_[name] > 100 and rng.random() < 0.4 else "deposit"
        amount = rng.randint(5, min(200, open_[name])) if kind == "withdrawal" else rng.randint(10, 300)
        open_[name] += amount if kind == "deposit" else -amount
        out.append({"account": name, "type": kind, "amount": amount})
    return out


def _fold(history: list[dict[str, Any]]) -> tuple[dict[str, int], list[tuple[str, int | None]]]:
    """The bank's own bookkeeping: the final balances and the snapshot after each event."""
    balances: dict[str, int] = {}
    snapshots: list[tuple[str, int | None]] = []
    for event in history:
        name = event["account"]
        if event["type"] == "closed":
            balances.pop(name, None)
            snapshots.append((name, None))
            continue
        sign = -1 if event["type"] == "withdrawal" else 1
        balances[name] = balances.get(name, 0) + sign * event["amount"]
        snapshots.append((name, balances[name]))
    return balances, snapshots


def prepare(*, bootstrap: str | None = None, accounts: int = 12, events: int = 400, seed: int = 6) -> Bank:
    """Write the bank's events and snapshots; compact the snapshots where the broker allows."""
    from ..connection import current_bootstrap
    from ..handle import cluster
    from ..clients import new_topic, producer
    servers = bootstrap or current_bootstrap()
    history = _history(accounts, events, seed)
    expected, snapshots = _fold(history)
    events_topic = new_topic("lab06-bank-events", partitions=3, config={"retention.ms": -1}, bootstrap=servers)
    snapshot_topic = new_topic("lab06-bank-balances", partitions=3, bootstrap=servers, config={
        "cleanup.policy": "compact", "min.cleanable.dirty.ratio": 0.01})
    writer = producer(servers, linger_ms=5)
    cut = accounts + events * 2 // 3  # closures only happen after this point
    _write(writer, events_topic, snapshot_topic, history[:cut], snapshots[:cut])
    _compact(cluster(servers), snapshot_topic)
    _write(writer, events_topic, snapshot_topic, history[cut:], snapshots[cut:])  # a fresh, uncompacted tail
    closed = {e["account"] for e in history if e["type"] == "closed"}
    return Bank(events_topic, snapshot_topic, servers, expected, closed)


def _write(writer: Producer, events_topic: str, snapshot_topic: str, history: list, snapshots: list) -> None:
    for i, (event, (name, balance)) in enumerate(zip(history, snapshots)):
        writer.produce(events_topic, key=name, value=json.dumps(event))
        value = None if balance is None else json.dumps({"account": name, "balance": balance})
        writer.produce(snapshot_topic, key=name, value=value)
        if i % 25 == 24:
            writer.flush(30)  # many small batches, as a live service writes them (compaction works per batch)
    writer.flush(30)


def _compact(handle: ClusterHandle, topic: str) -> None:
    """Close the active segments and run the log cleaner now (minikafka only).

    The cleaner never touches a partition's active segment, so each one is rolled
    first. A real broker compacts on its own schedule; the lab works either way.
    """
    if not handle.is_minikafka:
        return
    embedded = handle.embedded
    embedded.roll_segments(topic)
    embedded.run_log_cleaner()


def apply_steps() -> list[tuple[dict, dict, str]]:
    """A short history that uses every event type once, with the table it must leave after each step
    and the rule that step shows."""
    return [
        ({"account": "alice", "type": "opened", "amount": 0}, {"alice": 0}, _("an opened account starts at 0")),
        ({"account": "alice", "type": "deposit", "amount": 120}, {"alice": 120}, _("a deposit adds its amount")),
        ({"account": "bob", "type": "opened", "amount": 0}, {"alice": 120, "bob": 0},
         _("other accounts are left alone")),
        ({"account": "alice", "type": "withdrawal", "amount": 45}, {"alice": 75, "bob": 0},
         _("a withdrawal subtracts its amount")),
        ({"account": "alice", "type": "closed", "amount": 0}, {"bob": 0},
         _("a closed account is removed from the table, not kept at 0")),
    ]


def check(bank: Bank, *, apply: Callable[[dict, dict], Any], read_to_end: Callable[[str], Any],
          replay: Callable[[str], dict], load_snapshots: Callable[[str], dict], timeout: float = 10) -> None:
    """Check each part on its own (``apply``, ``read_to_end``, which gets ``timeout`` seconds to
    stop), then rebuild the balances both ways and compare with the bank's books."""
    from . import reading_to_end
    with Report(_("Lab 06 · rebuilding state from a log")) as report:
        _check_apply(report, apply)
        stops = reading_to_end.check(report, read_to_end, bank.bootstrap, timeout)
        for how, fn, topic in ((_("replaying the events"), replay, bank.events),
                               (_("loading the compacted snapshots"), load_snapshots, bank.snapshots)):
            if not stops and "read_to_end" in getattr(getattr(fn, "__code__", None), "co_names", ()):
                report.not_run(how, _("{function} reads with read_to_end, which does not stop yet").format(
                    function=fn.__name__))
                continue
            ok, table = report.attempt(fn, topic, what=f"{getattr(fn, '__name__', _('your function'))}({topic!r})")
            if ok:
                _compare(report, how, table, bank)


def _check_apply(report: Report, apply: Callable[[dict, dict], Any]) -> bool:
    """Fold the short history one event at a time and stop at the first wrong table."""
    table: dict[str, int] = {}
    for event, want, rule in apply_steps():
        before = dict(table)
        ok, got = report.attempt(apply, table, dict(event), what=f"apply({before}, {event})")
        if not ok:
            return False
        if got is None:
            return report.check(False, "", _("apply must return the table it changed (it returned None)."))
        if got != want:
            return report.check(False, "", _("apply({before}, {event}) gave {got}, expected {want}: {rule}.").format(
                before=before, event=event, got=got, want=want, rule=rule))
        table = got
    return report.check(True, _("apply folds all four event types (opened, deposit, withdrawal, closed)"), "")


def _compare(report: Report, how: str, got: Any, bank: Bank) -> None:
    if not isinstance(got, dict):
        report.check(False, "", _("{how} should give a dict of account -> balance, not {type}.").format(
            how=how, type=type(got).__name__))
        return
    got = {str(k): v for k, v in got.items()}
    missing = sorted(set(bank._expected) - set(got))
    ghosts = sorted(set(got) & bank._closed)
    extra = sorted(set(got) - set(bank._expected) - bank._closed)
    wrong = {a: (got[a], bank._expected[a]) for a in bank._expected if a in got and got[a] != bank._expected[a]}
    if not (missing or ghosts or extra or wrong):
        report.check(True, _("{how} gives the bank's {count} open accounts with the right balances").format(
            how=how, count=len(got)), "")
        return
    problems = []
    if missing:
        problems.append(_("{count} open accounts are missing (e.g. {example}); read every partition from its start "
                          "up to its end").format(count=len(missing), example=missing[0]))
    if ghosts:
        problems.append(_("closed accounts are still there ({accounts}): a closing event, or a tombstone (a record "
                          "whose value is None), removes the account").format(accounts=", ".join(ghosts[:3])))
    if extra:
        problems.append(_("unknown accounts appear ({accounts})").format(accounts=", ".join(extra[:3])))
    if wrong:
        a = next(iter(wrong))
        problems.append(_("{count} balances differ, e.g. {account}: yours {yours}, the bank's {bank}").format(
            count=len(wrong), account=a, yours=wrong[a][0], bank=wrong[a][1]))
    report.check(False, "", _("{how}: {problems}.").format(how=how, problems="; ".join(problems)))

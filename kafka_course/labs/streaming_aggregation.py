"""The check of lab 11: registrations per decade, in tumbling event-time windows, written in append mode.

The learner writes ``per_decade(signups)``: from the parsed sign-up stream, a
streaming DataFrame with the columns ``window`` (10-second tumbling windows of
``signup_ts``), ``decade`` (``registered_year`` rounded down to a multiple of ten) and
``count``, with a watermark that lets sign-ups be up to 10 seconds late.

``check`` starts that query in ``append`` mode into a memory table and feeds it four
rounds of sign-ups (``late_signups``): on time, a little late, too late, and a clock
that moves on. In append mode a window is written once, when the watermark passes its
end, so what the table holds at the end depends on the watermark's value, not on its
mere presence: a shorter delay drops sign-ups that should count, a longer one counts
sign-ups that should not (or writes nothing), and none at all is refused by Spark.
Then it compares every (window, decade) count with the same rules applied in Python.

    topic = lab_check.prepare(BOOTSTRAP)          # a topic of seeded sign-ups to explore
    lab_check.check(spark, per_decade, bootstrap=BOOTSTRAP)
"""

from __future__ import annotations

import tempfile
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime, UTC
from typing import TYPE_CHECKING, Any

from ..checks import Report
from ..i18n import _
from . import late_signups as late

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

SIGNUP_SCHEMA = ("user_id string, name string, email string, country string, registered_year int, "
                 "plan string, channel string, signup_ts timestamp")
WINDOW_SECONDS = late.WINDOW_SECONDS
ROUND_SECONDS = 90  # at most, for Spark to process one round (a few seconds on a quiet laptop)


def after_run() -> tuple[str, ...]:
    """The checks of what the query wrote, named for the ones that cannot run."""
    return (_("windows are written once the watermark passes them"), _("the windows are 10 seconds long"),
            _("sign-ups up to 10 s late are counted"), _("sign-ups more than 10 s late are left out"),
            _("decades are years rounded down to a multiple of ten"),
            _("every (window, decade) count matches Python's"))


def prepare(bootstrap: str, count: int = 400, seed: int = 2024, interval: float = 0.1) -> str:
    """Create a 3-partition topic holding ``count`` seeded sign-ups to explore; returns its name."""
    from ..clients import new_topic
    from ..fakeusers import FakeUsers
    start = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()
    topic = new_topic("lab11-signups", partitions=3, bootstrap=bootstrap)
    late.write(bootstrap, topic, tuple(FakeUsers(seed=seed, start=start, interval=interval).take(count)))
    return topic


def signup_stream(spark: SparkSession, bootstrap: str, topic: str) -> DataFrame:
    """The parsed sign-up stream the learner's function receives."""
    from pyspark.sql import functions as F

    from ..spark.session import kafka_format
    raw = (spark.readStream.format(kafka_format(spark)).option("kafka.bootstrap.servers", bootstrap)
           .option("subscribe", topic).option("startingOffsets", "earliest").load())
    return raw.select(F.from_json(F.col("value").cast("string"), SIGNUP_SCHEMA).alias("s")).select("s.*")


def check(spark: SparkSession, per_decade: Callable[[DataFrame], Any], *, bootstrap: str, seed: int = 2024) -> None:
    """Run the learner's ``per_decade`` on late and on-time sign-ups; raises ``CheckFailed`` on a miss."""
    with Report(_("Lab 11: registrations per decade in 10-second windows")) as report:
        topic = late.new_topic(bootstrap)
        ok, result = report.attempt(per_decade, signup_stream(spark, bootstrap, topic), what="per_decade(signups)")
        if not ok or not _shape_ok(report, result):
            return _not_run(report, (_("Spark runs the query in append mode"), *after_run()))
        plan = late.rounds(seed)
        try:
            rows = _run(spark, result, report, bootstrap, topic, plan, last_try=False)
        except _Busy:  # the machine, not the query: once more on a fresh topic before saying so
            topic = late.new_topic(bootstrap)
            # (per_decade already ran once without raising; on the same kind of input it does again)
            rows = _run(spark, per_decade(signup_stream(spark, bootstrap, topic)), report, bootstrap, topic, plan)
        if rows is None:
            return _not_run(report, after_run())
        _compare(report, rows, plan)


def _not_run(report: Report, checks: Iterable[str]) -> None:
    for what in checks:
        report.not_run(what)


def _shape_ok(report: Report, result: Any) -> bool:  # whatever the learner's per_decade returned
    from pyspark.sql import DataFrame
    if not report.check(isinstance(result, DataFrame) and result.isStreaming,
                        _("per_decade returns a streaming DataFrame"),
                        _("per_decade must return the streaming DataFrame it builds from signups, not {type}.").format(
                            type=type(result).__name__)):
        return False
    missing = [c for c in ("window", "decade", "count") if c not in result.columns]
    return report.check(not missing, _("the result has the columns window, decade and count"),
                        _("The result needs the columns window, decade and count; it has {columns} (missing "
                          "{missing}).").format(columns=", ".join(result.columns), missing=", ".join(missing)))


class _Busy(Exception):
    """A busy machine, not the query, stopped a try that is not the last one (nothing reported)."""


def _busy(error: BaseException) -> bool:
    """Spark's Python worker late to start, or a round slower than ROUND_SECONDS: the machine was busy."""
    from ..spark.session import WORKER_LATE
    return isinstance(error, TimeoutError) or WORKER_LATE in str(error)


def _run(spark: SparkSession, result: DataFrame, report: Report, bootstrap: str, topic: str,
         plan: list[late.Round], last_try: bool = True) -> list | None:
    """Start the query in append mode, feed the rounds one by one, and return the rows written
    (raises ``_Busy`` when it is not the last try and the machine, not the query, stopped it)."""
    from pyspark.sql import functions as F
    name = f"lab11_{uuid.uuid4().hex[:8]}"
    try:
        query = (result.writeStream.format("memory").queryName(name).outputMode("append")
                 .option("checkpointLocation", tempfile.mkdtemp(prefix="lab11-"))
                 .trigger(processingTime="200 milliseconds").start())
    except Exception as e:  # an analysis error is the learner's to fix (re-raised when only the machine was busy)
        if not last_try and _busy(e):
            raise _Busy from e
        _refused(report, e)
        return None
    try:
        for step in plan:
            late.write(bootstrap, topic, step.late)  # acknowledged before the on-time rows exist
            late.write(bootstrap, topic, step.on_time)
            _process(query, ROUND_SECONDS, step.name)
        rows = spark.table(name).select(
            F.col("window.start").cast("long").alias("start"), F.col("window.end").cast("long").alias("end"),
            F.col("decade").cast("long").alias("decade"), "count").collect()
    except Exception as e:  # the query failed running: said in one line (re-raised when only the machine was busy)
        if not last_try and _busy(e):
            raise _Busy from e
        _refused(report, e)
        return None
    finally:
        query.stop()
    report.check(True, _("Spark runs the query in append mode"), "")
    return rows


def _process(query: StreamingQuery, seconds: float, what: str) -> None:
    """``processAllAvailable()``, bounded: a query that cannot keep up is stopped with a sentence."""
    outcome: list[BaseException | None] = []

    def wait() -> None:
        try:
            query.processAllAvailable()
            outcome.append(None)
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            outcome.append(e)
    worker = threading.Thread(target=wait, name="lab11-round", daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        query.stop()
        raise TimeoutError(_("Spark took more than {seconds:.0f} s to process the round '{round}'; if the machine is "
                             "busy, run the check again").format(seconds=seconds, round=what))
    if outcome[0] is not None:
        raise outcome[0]


def _refused(report: Report, error: Exception) -> None:
    """Spark refused the query or failed running it: say so in one line."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    from ..spark.session import WORKER_LATE
    if WORKER_LATE in str(error):
        said = _("Spark could not start the query: {error} Spark gives a Python worker 10 s to start, and this "
                 "machine was too busy; your query is not at fault. Run the check again.")
    elif "watermark" in str(error).lower():
        said = _("Spark could not run the query in append mode: {error} In append mode Spark writes a window only "
                 "once it is final, and only a watermark on signup_ts tells it when that is: set one before grouping.")
    else:
        said = _("Spark could not run the query in append mode: {error}")
    report.check(False, "", said.format(error=first))
    return None


def _compare(report: Report, rows: list, plan: list[late.Round]) -> None:
    start = late.START
    got = Counter({(int(r.start - start), r.decade): r["count"] for r in rows})
    want = late.expected(plan)
    if not report.check(rows, _("windows are written once the watermark passes them ({count} rows)").format(
                            count=len(rows)),
                        _("No window was written at all. In append mode a window is written once, when the "
                          "watermark passes its end; the check's sign-ups go on to 200 s after the first, so a "
                          "10-second delay closes every window up to 50 s. Is your delay far longer than 10 "
                          "seconds?")):
        return _not_run(report, after_run()[1:])
    lengths = sorted({int(r.end - r.start) for r in rows})
    if not report.check(lengths == [WINDOW_SECONDS], _("the windows are 10 seconds long"),
                        _("The windows should be tumbling 10-second windows of signup_ts; yours are {lengths} "
                          "long.").format(lengths=", ".join(f"{n} s" for n in lengths))):
        return _not_run(report, after_run()[2:])
    _judge_late(report, got, want, plan)
    _judge_counts(report, got, want)


def _judge_late(report: Report, got: Counter, want: Counter, plan: list[late.Round]) -> None:
    a_little, too_late = plan[1].late, plan[2].late
    w1, w2 = late.window_of(a_little[0]), late.window_of(too_late[0])
    dropped = late.window_total(want, w1) - late.window_total(got, w1)
    report.check(dropped <= 0, _("sign-ups up to 10 s late are counted (the {count} that came {when})").format(
                     count=len(a_little), when=plan[1].name),
                 _("{dropped} of the {count} sign-ups that came {when} are missing from their window: the watermark "
                   "had already closed it. Your watermark waits less than 10 seconds.").format(
                     dropped=dropped, count=len(a_little), when=plan[1].name))
    extra = late.window_total(got, w2) - late.window_total(want, w2)
    report.check(extra <= 0, _("sign-ups more than 10 s late are left out (the {count} that came {when})").format(
                     count=len(too_late), when=plan[2].name),
                 _("{extra} of the {count} sign-ups that came {when} were counted: your watermark waits more than 10 "
                   "seconds, so windows stay open (and unwritten) longer than the team asked, and the state of old "
                   "windows is kept longer too.").format(extra=extra, count=len(too_late), when=plan[2].name))


def _judge_counts(report: Report, got: Counter, want: Counter) -> None:
    decades = sorted({d for _window, d in got})
    report.check(all(d % 10 == 0 and 1900 <= d <= 2100 for d in decades),
                 _("decades are years rounded down to a multiple of ten"),
                 _("Decades should look like 1970, 1980, ... (1987 -> 1980); yours are {decades}.").format(
                     decades=decades[:6]))
    wrong = sorted(k for k in want.keys() | got.keys() if got.get(k, 0) != want.get(k, 0))
    expected = ""
    if wrong:
        start, decade = wrong[0]
        expected = _("{wrong} of {total} (window, decade) counts differ: for the window starting {start} s after the "
                     "first sign-up and the {decade}s you counted {got}, expected {want}.").format(
                         wrong=len(wrong), total=len(want | got), start=start, decade=decade,
                         got=got.get(wrong[0], 0), want=want.get(wrong[0], 0))
    report.check(not wrong, _("every (window, decade) count matches Python's ({count} of them)").format(
                     count=len(want)), expected)

"""The instructor guide's times and agendas, computed (``python -m tests.course.agenda`` prints the
guide's tables; ``tests/course/test_agenda.py`` checks that the guide holds exactly these).

A notebook's time in a room is the sum of its speaker notes' ``Time: N min``
(``instructor/notes/``) plus the time its cells run (nbval, measured), with 25% slack for a room
(questions, a laptop that lags, the walk back from a break), rounded up to 5 minutes. A lab is a
time box: the room works on it for that long, and whoever is not done finishes at home.

A teaching day is 9:30 to 17:00 with a one-hour lunch and two 15-minute breaks: 6 hours of content.
Each plan is data (``PLANS``); its days must end by 17:00.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SLACK = 1.25
START, END = 9 * 60 + 30, 17 * 60

# Seconds each lesson's cells take under nbval, kernel start included, on the 2-core CI machine with
# three workers busy (the last full run before issue 25, in its closing note). Measure again with
# `pytest --durations=0 tests/course/test_notebooks.py -k nbval` after a lesson changes a lot.
RUN_SECONDS = {"00": 6.3, "01": 10.9, "02": 7.7, "03": 12.1, "04": 50.7, "05": 18.5, "05b": 42.9, "06": 24.4,
               "07": 22.0, "08": 31.0, "08b": 12.3, "09": 12.9, "10": 13.1, "11": 91.9, "12": 30.3, "13": 20.9}
TITLES = {"00": "setup and tour", "01": "messaging patterns", "02": "topics, partitions, offsets",
          "03": "producers", "04": "consumers and groups", "05": "brokers and replication",
          "05b": "the KRaft controller quorum",
          "06": "storage, retention, compaction", "07": "delivery guarantees", "08": "transactions",
          "08b": "operating and securing a cluster", "09": "a producer of fake sign-ups", "10": "a PHP-style consumer",
          "11": "Spark Structured Streaming", "12": "the ecosystem", "13": "Kafka, RabbitMQ and NATS"}
# lab number -> (name, minutes of the time box); each follows the notebook of its number (08c: 08b)
LABS = {"02": ("partitioner", 30), "03": ("producer tuning", 30), "04": ("scaling consumers", 30),
        "05": ("survive a broker failure", 40), "06": ("event sourcing", 40), "07": ("at-least-once", 30),
        "08": ("exactly-once pipeline", 40), "08b": ("lock down the shop's cluster", 30),
        "08c": ("operations with the command-line tools", 30), "10": ("group consumer migration", 30),
        "11": ("streaming aggregation", 40), "13": ("choose a broker", 30)}
OTHER = {"break": 15, "lunch": 60, "questions": 15, "recap": 15}
SAID = {"break": "break", "lunch": "lunch", "questions": "questions, what to read next",
        "recap": "recap: yesterday's quiz questions, from the decks"}

# Each plan: its days, each a list of notebooks ("02"), labs ("lab 02") and breaks, in order.
PLANS: dict[str, list[list[str]]] = {
    "one day": [["00", "01", "break", "02", "lunch", "09", "break", "10", "questions"]],
    "two days": [["00", "01", "break", "02", "lunch", "04", "break", "questions"],
                 ["recap", "05", "break", "06", "lunch", "08b", "break", "lab 08c", "questions"]],
    "three days": [["00", "01", "break", "02", "lunch", "lab 02", "03", "break", "lab 03"],
                   ["recap", "04", "break", "lab 04", "lunch", "05", "break", "lab 05", "questions"],
                   ["recap", "06", "break", "07", "lunch", "lab 07", "09", "break", "10", "questions"]],
}


def lessons() -> list[str]:
    return sorted(p.name.split("-")[0] for p in (ROOT / "notebooks").glob("*.ipynb"))


def lesson_name(number: str) -> str:
    return next(p.stem for p in (ROOT / "notebooks").glob(f"{number}-*.ipynb"))


def notes_minutes(number: str) -> int:
    """The sum of the lesson's speaker notes' ``Time: N min``."""
    from translations import notes
    return sum(int(m) for n in notes.read(lesson_name(number)) for m in re.findall(r"Time: (\d+) min", n.text))


def room_minutes(number: str) -> int:
    """Notes plus run time, with the room's slack, rounded up to 5 minutes."""
    return 5 * math.ceil(SLACK * (notes_minutes(number) + RUN_SECONDS[number] / 60) / 5)


def minutes(item: str) -> int:
    if item.startswith("lab "):
        return LABS[item[4:]][1]
    return OTHER[item] if item in OTHER else room_minutes(item)


def label(item: str) -> str:
    if item.startswith("lab "):
        return f"lab {item[4:]} {LABS[item[4:]][0]}"
    return SAID[item] if item in SAID else f"{item} {TITLES[item]}"


def clock(at: int) -> str:
    return f"{at // 60}:{at % 60:02d}"


def schedule(day: list[str]) -> list[tuple[int, str, int]]:
    """(start, item, minutes) for each item of a day from 9:30."""
    out, at = [], START
    for item in day:
        out.append((at, item, minutes(item)))
        at += minutes(item)
    return out


def ends(day: list[str]) -> int:
    start, _, length = schedule(day)[-1]
    return start + length


def content(day: list[str]) -> int:
    """Minutes of teaching and labs in a day (breaks and lunch aside)."""
    return sum(minutes(i) for i in day if i not in ("break", "lunch"))


def day_table(day: list[str]) -> str:
    rows = [f"| {clock(at)} | {label(item)} | {length} min |" for at, item, length in schedule(day)]
    rows.append(f"| {clock(ends(day))} | end of the day ({content(day)} min of content) | |")
    return "\n".join(["| time | part | length |", "|---|---|---|", *rows])


def times_table() -> str:
    rows = []
    for n in lessons():
        lab = next((f"lab {k} {name}, {m} min" for k, (name, m) in LABS.items()
                    if k == n or (n == "08b" and k == "08c")), "")
        if n == "08b":
            lab = f"lab 08b {LABS['08b'][0]}, {LABS['08b'][1]} min; lab 08c {LABS['08c'][0]}, {LABS['08c'][1]} min"
        cells = [f"{n} {TITLES[n]}", f"{notes_minutes(n)} min", f"{RUN_SECONDS[n]:.0f} s",
                 f"{room_minutes(n)} min", lab]
        rows.append(("| " + " | ".join(cells) + " |").replace("|  |", "| |"))
    return "\n".join(["| part | notes | run | in a room | lab |", "|---|---|---|---|---|", *rows])


def hours(total: int) -> str:
    return f"{total // 60} h {total % 60:02d} min"


def totals() -> str:
    notebooks = sum(room_minutes(n) for n in lessons())
    labs = sum(m for _, m in LABS.values())
    return (f"All notebooks: {hours(notebooks)} in a room; all labs: {hours(labs)}; together "
            f"{hours(notebooks + labs)}, {math.ceil((notebooks + labs) / 360)} teaching days of 6 hours.")


if __name__ == "__main__":
    print(times_table(), "", totals(), sep="\n")
    for plan, days in PLANS.items():
        for n, day in enumerate(days, 1):
            print(f"\n{plan}, day {n}: ends {clock(ends(day))}\n{day_table(day)}")

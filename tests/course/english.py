"""English sentences in what a Spanish notebook printed: a small heuristic for the tests.

A line of output counts as English when, after what is not prose is taken out (error names
and the sentence that follows them, which are the broker's or the library's; raw log lines of
minikafka, librdkafka and the JVM; output of the command-line tools shaped like Kafka's English
scripts; hyphenated terms such as at-least-once; printed Python source), it still holds one of
a few English function words that Spanish never uses. Data the notebook prints as strings
('invoice from the new instance') is checked too: a learner reads it.
"""

from __future__ import annotations

import ast
import re
import textwrap

ENGLISH = frozenset("""the and of to in is are was were with from this that not but for by will each every which
when into than then its been be on at an or it they their there these those what who how why would should
could don't isn't doesn't won't after before while until also only just""".split())  # noqa: SIM905 - reads as prose
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")  # whole words, accents included: estarían holds no "an"
# Not prose: at-least-once, read_committed, --execute, `code`, a one-word string ('at': a key), tqdm's it/s,
# a keyword argument (at=...).
_TERM = re.compile(r"\b[\w']+(?:-[\w']+)+\b|\b\w+_\w+\b|--[\w-]+|`[^`]*`|(['\"])\w+\1|\bit/s\b|\b\w+=")
# Where the rest of a line is someone else's sentence: an error name (INVALID_REPLICATION_FACTOR:, _FENCED,
# 'TYPE_MISMATCH',) or an exception (SchemaRegistryError: ...).
# librdkafka's raw log line (%0|...|FATAL|...) may also start in the middle of a line: it has its own test.
_ERROR = re.compile(r"\b_?[A-Z][A-Z0-9_]{3,}\b['\"]?[:,]|\b[A-Z]\w*(?:Error|Exception|Warning):|%\d\|\d+\.\d+\|")
_NOT_PROSE = re.compile(
    r"^\s*(?:minikafka (?:WARNING|ERROR|INFO)\b"  # the broker's own log lines
    r"|%\d\|"  # librdkafka's log lines (the decks drop them)
    r"|\d\d/\d\d/\d\d \d\d:\d\d:\d\d (?:WARN|INFO|ERROR)\b|To adjust logging level|Setting default log level"  # JVM
    r")")
# What the course's command-line tools print as Kafka's own scripts print it (kafka-configs.sh and friends).
KAFKA_TOOLS = ("Dynamic configs for ", "SCRAM credential configs for ", "Reassignment of partition ",
               "Save this to use as the --reassignment-json-file", "Warning: You must run --verify",
               "The inter-broker throttle limit was set", "Current partition replica assignment",
               "Proposed partition reassignment configuration", "No more messages; will wait for more",
               "Error: ", "(dry run: nothing changed", "Completed updating config for ",
               "Successfully started partition reassignment", "Status of partition reassignment",
               "Clearing broker-level throttles", "Clearing topic-level throttles", "Valid replica already elected",
               "Querying brokers for log directories", "Adding ACLs for resource", "Current ACLs for resource",
               "Removed ACLs for resource", "Sent ",  # fakeusers' closing line, on stderr
               "Processed a total of ",  # the console consumer's closing line, as kafka-console-consumer.sh
               "only showing top ")  # Spark's DataFrame.show()

# What a Spanish lesson prints once it has a cluster: the embedded minikafka's sentence, or notebook 05b's
# processes' (it starts brokers and KRaft controllers as processes of their own), both in Spanish.
SPANISH_CLUSTER_STARTED = ("Arrancado un minikafka embebido", "Iniciados 3 procesos de broker")


def is_python(text: str) -> bool:
    """Printed source code (a function shown with inspect.getsource, a file's contents)."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except SyntaxError:
        return False
    return any(not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Name) for node in tree.body) \
        and len(text.splitlines()) > 2


def english_lines(text: str) -> list[str]:
    if is_python(text):
        return []
    found = []
    for line in text.splitlines():
        if _NOT_PROSE.match(line) or line.strip().startswith(KAFKA_TOOLS):
            continue
        prose = _TERM.sub(" ", _ERROR.split(line, maxsplit=1)[0])
        if set(_WORD.findall(prose)) & ENGLISH:  # lower case only: IT and AT are country codes
            found.append(line.strip())
    return found


def printed(nb) -> list[tuple[int, str]]:
    """(cell index, text) of everything the notebook's code cells printed or showed as text."""
    out = []
    for i, cell in enumerate(nb.cells):
        for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if o.get("output_type") == "stream":
                out.append((i, o.get("text", "")))
            elif o.get("output_type") in ("execute_result", "display_data"):
                data = o.get("data", {})
                if not set(data) - {"text/plain"}:  # a plot's or a widget's text/plain is its repr, not shown
                    out.append((i, data.get("text/plain", "")))
            elif o.get("output_type") == "error":
                out.append((i, f"{o.get('ename')}: {o.get('evalue', '')}"))
    return out


def english_in(nb) -> list[str]:
    """Every English line the notebook printed, as 'cell N: line'."""
    return [f"cell {i}: {line[:200]}" for i, text in printed(nb) for line in english_lines(text)]


# What a Spanish lesson may print in English on purpose: Faust's own log line, quoted by notebook 12
# (a library's log, as Kafka's tool output is).
PENDING_IN_LESSONS = ("restored views-per-page from its changelog",)


def unexpected_english(nb) -> list[str]:
    return [line for line in english_in(nb) if not any(known in line for known in PENDING_IN_LESSONS)]

"""What the learner writes and runs in a lesson: the figures issue 25 asks for, computed from
the notebooks themselves (``python -m tests.course.learner_code`` prints them).

A lesson's code cells are sorted into:

- *set-up*: the helper import, the papermill parameters, ``course.bootstrap(...)`` alone;
- *quiz*: ``course.quiz(...)`` and ``course.predict(...)``;
- *real client*: the cell uses a client library in plain view (a name imported from
  ``confluent_kafka``, ``kafka``, ``pyspark``, ... or one of the clients' own methods);
- *helper only*: it calls the course's helpers and no client;
- *other*: plain Python (arithmetic, printing, a function of the learner's own).

The target: at most 20% of the lessons' code cells, set-up and quiz cells aside, are helper only.
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
TARGET = 0.20

# Libraries whose names, used in a cell, make it a real client cell.
CLIENT_LIBRARIES = ("confluent_kafka", "kafka", "pyspark", "faker", "pika", "nats", "faust", "requests", "aiokafka",
                    "fastavro", "psycopg", "psycopg2", "subprocess")
# Methods of those clients: a call of one of them on any object counts too.
CLIENT_METHODS = frozenset({
    "produce", "poll", "flush", "subscribe", "assign", "commit", "consume", "close", "send", "seek", "position",
    "create_topics", "delete_topics", "describe_topics", "list_topics", "describe_configs", "alter_configs",
    "incremental_alter_configs", "create_partitions", "list_consumer_groups", "describe_consumer_groups",
    "list_consumer_group_offsets", "alter_consumer_group_offsets", "delete_records", "list_offsets",
    "get_watermark_offsets", "offsets_for_times", "committed", "store_offsets", "init_transactions",
    "begin_transaction", "commit_transaction", "abort_transaction", "send_offsets_to_transaction",
    "describe_cluster", "create_acls", "describe_acls", "delete_acls", "end_offsets", "beginning_offsets",
    "readStream", "writeStream", "start", "awaitTermination", "basic_publish", "basic_consume", "publish",
    "subscription", "pause", "resume", "unsubscribe", "memberid", "consumer_group_metadata",
})
SHELL_PREFIXES = ("!", "%%bash", "%%sh")


def code_of(cell: dict) -> str:
    source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    return source


def is_setup(cell: dict) -> bool:
    meta = cell.get("metadata", {})
    if "parameters" in meta.get("tags", []):
        return True
    code = code_of(cell).strip()
    if code == "import kafka_course as course":
        return True
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    statements = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    return bool(statements) and all("course.bootstrap(" in ast.unparse(s) for s in statements)


def is_quiz(cell: dict) -> bool:
    code = code_of(cell).strip()
    return code.startswith(("course.quiz(", "course.predict("))


def _imports(cells: list[dict]):
    """Every import statement of the notebook's code cells (cells that do not parse are skipped)."""
    for cell in cells:
        try:
            tree = ast.parse(code_of(cell))
        except SyntaxError:
            continue
        yield from (n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))


def _imported_client_names(cells: list[dict]) -> set[str]:
    names: set[str] = set()
    for node in _imports(cells):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in CLIENT_LIBRARIES:
            names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.split(".")[0] in CLIENT_LIBRARIES}
    return names


def _course_names(cells: list[dict]) -> set[str]:
    return {"course"} | {a.asname or a.name for node in _imports(cells)
                         if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kafka_course")
                         for a in node.names}


def kind(cell: dict, client_names: set[str], course_names: set[str]) -> str:
    if is_setup(cell):
        return "set-up"
    if is_quiz(cell):
        return "quiz"
    code = code_of(cell)
    if code.lstrip().startswith(SHELL_PREFIXES) or "\n!" in code:
        return "real client"  # the learner runs Kafka's command-line tools
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return "other"
    uses_course = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in client_names:
            return "real client"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            root = node.func
            while isinstance(root, ast.Attribute):
                root = root.value  # type: ignore[assignment]
            if isinstance(root, ast.Name) and root.id in course_names:
                uses_course = True
            elif node.func.attr in CLIENT_METHODS:
                return "real client"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in course_names:
            uses_course = True
    return "helper only" if uses_course else "other"


def kinds(path: Path) -> Counter:
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    clients, helpers = _imported_client_names(cells), _course_names(cells)
    return Counter(kind(c, clients, helpers) for c in cells)


def helper_only_share(paths: list[Path] = LESSONS) -> tuple[int, int]:
    """(helper-only cells, code cells with set-up and quiz cells aside) over the lessons."""
    total = Counter()
    for path in paths:
        total += kinds(path)
    counted = sum(n for k, n in total.items() if k not in ("set-up", "quiz"))
    return total["helper only"], counted


if __name__ == "__main__":
    grand = Counter()
    for path in LESSONS:
        found = kinds(path)
        grand += found
        counted = sum(n for k, n in found.items() if k not in ("set-up", "quiz"))
        print(f"{path.name:42} helper only {found['helper only']:3} of {counted:3}   {dict(found)}")
    helper, counted = helper_only_share()
    print(f"all lessons: {helper} of {counted} code cells call only course helpers ({helper / counted:.0%}; "
          f"target at most {TARGET:.0%})")

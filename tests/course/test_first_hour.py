"""What a learner sees when something goes wrong on purpose: one line, not a wall of text.

- ``course.expect_error`` shows a refusal from confluent-kafka or kafka-python as the Kafka
  error name and the broker's sentence, and never raises.
- librdkafka's log lines (``%3|...|FAIL|... Connection refused``) go to the ``librdkafka``
  Python logger, silent unless a learner asks with ``course.show_client_logs()``.
"""

from __future__ import annotations

import logging

import pytest
from confluent_kafka.admin import NewTopic
from kafka.admin import KafkaAdminClient, NewTopic as KpNewTopic

import kafka_course as course
from kafka_course import client_logs


def test_expect_error_shows_a_confluent_refusal_in_one_line(bootstrap, capsys):
    with course.expect_error() as caught:
        course.admin(bootstrap).create_topics([NewTopic("four", 1, replication_factor=4)])["four"].result(10)
    out = capsys.readouterr().out
    assert caught.name == "INVALID_REPLICATION_FACTOR"
    assert out.count("\n") == 1 and out.startswith("INVALID_REPLICATION_FACTOR: ") and "4" in out


def test_expect_error_shows_a_kafka_python_refusal_in_one_line(bootstrap, capsys):
    client = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        with course.expect_error() as caught:
            client.create_topics([KpNewTopic("bad name!", 1, 1)])
    finally:
        client.close()
    out = capsys.readouterr().out
    # kafka-python names Kafka's INVALID_TOPIC_EXCEPTION (17) INVALID_TOPIC; the sentence is the broker's
    assert caught.name == "INVALID_TOPIC", out
    assert out.count("\n") == 1 and "'bad name!'" in out and "characters" in out


def test_expect_error_says_so_when_nothing_fails(capsys):
    with course.expect_error() as caught:
        pass
    assert not caught and "No error this time" in capsys.readouterr().out


def test_a_plain_python_error_is_named_too(capsys):
    with course.expect_error() as caught:
        {}["missing"]
    assert caught.name == "KeyError" and capsys.readouterr().out == "KeyError: 'missing'\n"


@pytest.fixture
def dead_broker(make_cluster):
    """A topic's address after its only broker has stopped."""
    cluster = make_cluster()
    servers = cluster.bootstrap_servers
    course.new_topic("gone", bootstrap=servers, unique=False, replication_factor=1)
    cluster.stop()
    return servers


def test_librdkafka_logs_stay_out_of_the_output_unless_asked(dead_broker, capfd):
    # librdkafka names each client "<client.id>#producer-N" in its lines: other tests' clients
    # in this process may print too, so only lines naming these two producers count.
    producer = course.producer(dead_broker, message_timeout_ms=1500, client_id="quiet-test")
    producer.produce("gone", b"x")
    producer.flush(3)
    out, err = capfd.readouterr()
    assert "quiet-test#" not in err + out

    course.show_client_logs()
    try:
        shown = course.producer(dead_broker, message_timeout_ms=1500, client_id="shown-test")
        shown.produce("gone", b"x")
        shown.flush(3)
    finally:
        course.show_client_logs(False)
    out, err = capfd.readouterr()
    lines = [line for line in out.splitlines() if line.startswith("librdkafka ") and "shown-test#" in line]
    assert lines and any("Connection refused" in line or "FAIL" in line for line in lines), out + err
    assert "shown-test#" not in err  # shown in the cell's output, not as raw stderr
    assert not client_logs._shown and all(isinstance(h, logging.NullHandler) for h in course.client_log.handlers)


def test_the_quiz_gives_feedback_and_reads_without_a_kernel():
    import importlib
    quiz = importlib.import_module("kafka_course.quiz")
    q = course.Question("Run `consume_all` twice: <how many>?", ["none", "all of them"], answer=1, why="Reading keeps.")
    assert q.verdict(1).startswith("✔") and q.verdict(0).startswith("✘") and "all of them" in q.verdict(0)
    assert q.verdict(None) == "Pick an answer first."
    page = quiz.static_html([q])
    assert "<code>consume_all</code>" in page and "&lt;how many&gt;" in page  # code shown, HTML escaped
    assert page.index("<details>") < page.index("all of them. Reading keeps.")  # the answer is folded
    with pytest.raises(ValueError):
        course.Question("?", ["a", "b"], answer=2, why="")


def test_a_prediction_and_the_recap_come_from_the_notebooks_bank_and_return_nothing(monkeypatch, capsys):
    """The cell holds ``course.predict("99", "key")`` or ``course.quiz("99")``: the questions, and their
    answers, stay in ``kafka_course/quizzes/nb99.py``; nothing is returned for JupyterLab to show again."""
    import sys
    import types
    bank = types.ModuleType("kafka_course.quizzes.nb99")
    bank.QUESTIONS = {"acks": course.Question("Default acks?", ["0", "1", "all"], answer=2, why="Since Kafka 3.0."),
                      "reads": course.Question("Who serves reads?", ["the leader", "any replica"], answer=0, why="")}
    bank.RECAP = ("acks", "reads")
    monkeypatch.setitem(sys.modules, "kafka_course.quizzes.nb99", bank)
    assert course.predict("99", "acks") is None
    assert course.quiz("99") is None
    assert capsys.readouterr().out.count("<IPython.core.display.HTML object>") == 2  # one display per cell
    with pytest.raises(ValueError, match="no question 'nope'"):
        course.predict("99", "nope")
    with pytest.raises(ValueError, match="no question bank for notebook '98'"):
        course.quiz("98")

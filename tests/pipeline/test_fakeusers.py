"""The fakeusers generator and the `minikafka fakeusers` command."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from kafka_course.clients import consume_all
from kafka_course.fakeusers import FIELDS, FakeUsers, Pacer, key_of, parse_locales, serialize


def mk(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "minikafka.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_a_seed_makes_the_whole_stream_reproducible():
    a = FakeUsers(seed=3, start=0, interval=1).take(50)
    assert a == FakeUsers(seed=3, start=0, interval=1).take(50)
    assert a != FakeUsers(seed=4, start=0, interval=1).take(50)
    assert len({e["user_id"] for e in a}) == 50


def test_events_carry_every_field_with_sensible_values():
    events = FakeUsers(seed=1, start=1_700_000_000, interval=0.5).take(200)
    for e in events:
        assert tuple(e) == FIELDS
        assert "@" in e["email"] and e["email"].isascii()
        assert 1970 <= e["registered_year"] <= time.gmtime().tm_year
        assert e["plan"] in ("free", "pro", "business") and len(e["country"]) == 2
    assert events[1]["signup_ts"] == "2023-11-14T22:13:20.500Z"
    assert len({e["country"] for e in events}) > 3  # the default mix of locales
    assert json.loads(serialize(events[0])) == events[0] and key_of(events[0]) == events[0]["user_id"].encode()


def test_a_single_locale_and_an_unknown_one():
    assert {e["country"] for e in FakeUsers(seed=1, locales=parse_locales("es_ES")).take(20)} == {"ES"}
    with pytest.raises(ValueError, match="Faker has no locale xx_XX"):
        parse_locales("es_ES,xx_XX")


def test_pacer_keeps_the_rate():
    pacer = Pacer(200)
    for i in range(40):
        pacer.wait(i)
    assert pacer.measured(40) == pytest.approx(200, rel=0.25)


def test_command_produces_exactly_n_records_with_every_field(bootstrap):
    done = mk("fakeusers", "--bootstrap-server", bootstrap, "--topic", "signups", "--count", "25",
              "--rate", "0", "--seed", "5", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "Sent 25 records to signups" in done.stderr
    records = consume_all("signups", bootstrap=bootstrap)
    assert len(records) == 25
    events = [json.loads(r.value) for r in records]
    assert all(tuple(e) == FIELDS and r.key.decode() == e["user_id"] for r, e in zip(records, events))
    assert sorted(e["user_id"] for e in events) == sorted(e["user_id"] for e in FakeUsers(seed=5).take(25))


def test_command_prints_each_record_and_keeps_the_rate(bootstrap):
    started = time.monotonic()
    done = mk("fakeusers", "--bootstrap-server", bootstrap, "--count", "10", "--rate", "20", "--locale", "es_ES")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 10 and all(json.loads(line)["country"] == "ES" for line in lines)
    assert time.monotonic() - started >= 0.45  # ten records at 20 per second take about half a second


def test_unreachable_broker_is_one_sentence():
    done = mk("fakeusers", "--bootstrap-server", "127.0.0.1:1", "--count", "3", "--timeout", "3")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("Error: Cannot reach a broker at 127.0.0.1:1")
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, words", [
    (["--count", "-1"], "--count must be 0 or more"),
    (["--rate", "-5"], "--rate must be 0"),
    (["--locale", "klingon"], "Faker has no locale klingon"),
])
def test_bad_arguments_are_one_sentence(args, words):
    done = mk("fakeusers", "--bootstrap-server", "127.0.0.1:1", *args)
    assert done.returncode != 0 and words in done.stderr and "Traceback" not in done.stderr


def on_a_terminal(*args: str, quiet_stdout: bool = False) -> tuple[str, str]:
    """Run the command with stderr (and stdout, unless ``quiet_stdout``) on a pseudo-terminal, as
    in a shell; return what the terminal showed and what went to stdout when it was a pipe."""
    import os
    import pty
    main, terminal = pty.openpty()
    done = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", *args], stderr=terminal,
                            stdout=subprocess.PIPE if quiet_stdout else terminal)
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the command closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    piped = done.stdout.read() if done.stdout else b""
    assert done.wait(timeout=60) == 0, shown
    os.close(main)
    return shown.decode(), piped.decode()


def test_on_a_terminal_the_records_are_json_lines_and_there_is_one_summary(bootstrap):
    shown, _ = on_a_terminal("fakeusers", "--bootstrap-server", bootstrap, "--count", "15", "--rate", "6")
    lines = [line.strip("\r") for line in shown.replace("\r\n", "\n").splitlines() if line.strip()]
    records = [line for line in lines if line.startswith("{")]
    rest = [line for line in lines if not line.startswith("{")]
    assert len(records) == 15 and all(json.loads(line) for line in records), "progress text inside the records"
    assert len(rest) == 1 and rest[0].startswith("Sent 15 records to fakeusers"), rest


def test_the_live_rate_shows_only_when_the_records_go_elsewhere(bootstrap):
    shown, piped = on_a_terminal("fakeusers", "--bootstrap-server", bootstrap, "--count", "12", "--rate", "6",
                                 "--topic", "rated", quiet_stdout=True)
    assert len(piped.splitlines()) == 12 and all(json.loads(line) for line in piped.splitlines())
    assert "records/s" in shown.split("Sent")[0], "a terminal watching a redirected run sees the rate live"
    assert shown.count("Sent 12 records") == 1 and "sent 12 records," not in shown.split("\r")[-1]

"""``minikafka serve --controllers N --links``, ``minikafka node`` and ``minikafka link --data-dir``: faults on
a process cluster from the command line (issue 31), driven by the real client over TCP."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from minikafka.processes import wait_for
from minikafka.running import NoLinks, RunningProcesses

pytestmark = pytest.mark.slow


def minikafka(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "minikafka", *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Two broker processes and a controller behind their links, as a trainer starts them in a terminal."""
    data_dir = tmp_path_factory.mktemp("links")
    serve = subprocess.Popen([sys.executable, "-m", "minikafka", "serve", "--brokers", "2", "--controllers", "1",
                              "--links", "--port", "0", "--data-dir", str(data_dir)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    said: list[str] = []  # what serve tells the terminal about its nodes (stderr)
    threading.Thread(target=lambda: said.extend(serve.stderr), daemon=True).start()
    try:
        banner = serve.stdout.readline()
        links = serve.stdout.readline()
        assert "2 broker process(es)" in banner, banner
        bootstrap = banner.split(" on ")[1].split(";")[0]
        yield data_dir, bootstrap, links, said
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(90)
        finally:
            if serve.poll() is None:
                serve.kill()


def leaders(bootstrap: str, topic: str) -> dict[int, int]:
    """Partition -> leader, once every partition has one."""
    def known():
        found = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10).topics[topic].partitions
        got = {p: found[p].leader for p in found}
        return got if got and all(leader > 0 for leader in got.values()) else None
    return wait_for(f"leaders for {topic}", known, 30)


def produce(bootstrap: str, topic: str, partition: int) -> str | None:
    """One record, acks=all; None when acknowledged, else the delivery error's name."""
    errors: list[str | None] = []
    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 3000, "acks": "all"})
    producer.produce(topic, b"v", partition=partition, on_delivery=lambda e, _m: errors.append(e and e.name()))
    producer.flush(15)
    return errors[0] if errors else "no answer"


def test_the_banner_prints_the_control_port_and_cluster_json_records_it(served):
    data_dir, _, links, _ = served
    control = RunningProcesses(data_dir).control
    assert control and control.startswith("127.0.0.1:")
    assert f"minikafka link --control {control} partition b1 c3" in links


def test_a_produce_to_the_broker_cut_from_the_client_times_out_while_the_other_answers(served):
    data_dir, bootstrap, _, _ = served
    topic = f"cut-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept: the future fails once its client is gone
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    led = {leader: partition for partition, leader in leaders(bootstrap, topic).items()}
    assert set(led) == {1, 2}
    cut = minikafka("link", "--data-dir", str(data_dir), "partition", "client", "b1")
    assert cut.returncode == 0 and cut.stdout.strip() == "ok", cut.stderr
    try:
        assert produce(bootstrap, topic, led[1]) == "_MSG_TIMED_OUT"
        assert produce(bootstrap, topic, led[2]) is None
    finally:
        assert minikafka("link", "--data-dir", str(data_dir), "heal", "client", "b1").returncode == 0
    assert produce(bootstrap, topic, led[1]) is None


def status(data_dir) -> dict[str, list[str]]:
    done = minikafka("node", "status", "--data-dir", str(data_dir))
    assert done.returncode == 0, done.stderr
    return {line.split()[0]: line.split() for line in done.stdout.splitlines()[1:]}


def test_node_pause_shows_in_status_and_resume_brings_it_back(served):
    data_dir, _, _, _ = served
    assert minikafka("node", "pause", "b1", "--data-dir", str(data_dir)).returncode == 0
    try:
        rows = status(data_dir)
        assert rows["b1"][4] == "paused" and rows["b2"][4] == "running"
        assert rows["c3"][2:3] == ["controller"] and rows["c3"][-1] == "active"
    finally:
        assert minikafka("node", "resume", "1", "--data-dir", str(data_dir)).returncode == 0
    assert status(data_dir)["b1"][4] == "running"


def test_node_kill_then_start_and_the_broker_registers_again(served):
    data_dir, bootstrap, _, said = served
    killed = minikafka("node", "kill", "b2", "--data-dir", str(data_dir))
    assert killed.returncode == 0 and killed.stdout.startswith("b2 killed"), killed.stderr
    assert status(data_dir)["b2"][4] == "stopped"
    again = minikafka("node", "pause", "b2", "--data-dir", str(data_dir))
    assert again.returncode == 1 and "b2 is not running; 'minikafka node start b2' starts it again." in again.stderr
    assert minikafka("node", "start", "b2", "--data-dir", str(data_dir)).returncode == 0
    output = data_dir / "b2.out"
    wait_for("b2 to register twice", lambda: output.read_text().count("broker 2 registered") == 2, 30)

    def listed():
        return {b.id for b in AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=5).brokers.values()}

    wait_for("broker 2 listed again", lambda: listed() == {1, 2}, 30)
    wait_for("serve to say b2 runs again", lambda: any("b2 runs again" in line for line in said), 10)
    assert any("b2 is not running" in line for line in said), said
    assert status(data_dir)["b2"][3] == str(json.loads((data_dir / "cluster.json").read_text())["nodes"]["2"]["pid"])


def test_running_processes_cut_a_link_from_python(served):
    data_dir, _, _, _ = served
    nodes = RunningProcesses(data_dir)
    nodes.delay(1, "c3", 50)
    assert set(nodes.links()["b1->c3"]["delay_ms"].values()) == {50}
    assert set(nodes.links()["c3->b1"]["delay_ms"].values()) == {50}
    nodes.heal()
    assert set(nodes.links()["b1->c3"]["delay_ms"].values()) == {0}
    with pytest.raises(ValueError, match="no node 'b7'"):
        nodes.partition("b7", "c3")


@pytest.mark.parametrize("args, sentence", [
    (["node", "kill", "b9"], "has no node 'b9'; its nodes are b1, b2, c3."),
    (["node", "pause"], "name the node to pause"),
    (["link", "--data-dir", "/nonexistent/minikafka", "heal"], "/nonexistent/minikafka/cluster.json does not exist"),
    (["node", "status", "--data-dir", "/nonexistent/minikafka"], "/nonexistent/minikafka/cluster.json does not exist"),
])
def test_a_wrong_node_or_a_missing_data_dir_is_one_sentence_and_exit_2(served, args, sentence):
    data_dir, _, _, _ = served
    if "--data-dir" not in args:
        args = [*args, "--data-dir", str(data_dir)]
    done = minikafka(*args)
    assert done.returncode == 2
    assert sentence in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_links_without_controllers_or_a_cluster_without_links_are_refused_with_a_sentence(tmp_path):
    done = minikafka("serve", "--links", "--port", "0", "--data-dir", str(tmp_path))
    assert done.returncode == 2 and "--links puts fault proxies between" in done.stderr
    (tmp_path / "cluster.json").write_text(json.dumps({"bootstrap_servers": "", "nodes": {}}))  # serve without --links
    done = minikafka("link", "--data-dir", str(tmp_path), "heal")
    assert done.returncode == 2 and "runs without links" in done.stderr, done.stderr
    with pytest.raises(NoLinks, match="runs without links"):
        RunningProcesses(tmp_path).heal()

"""Notebook 05b's plumbing (``kafka_course.kraft``) against real broker and KRaft controller processes.

What the notebook relies on: a process cluster named by ``MINIKAFKA_PROCESS_CLUSTER`` is used as
it is, its roles read from its ``cluster.json`` and its nodes killed, paused and started through
``handle``'s ``ProcessControl`` (the quorum elects another leader and takes the killed one back);
links can be cut only on a cluster this process started with fault proxies; a cluster nobody
should break makes the breaking cells skip with one sentence instead of failing.
"""

from __future__ import annotations


import pytest
from kafka.admin import KafkaAdminClient

from kafka_course import connection, handle, kraft
from minikafka.api import Cluster, ProcessCluster
from tests.groups.helpers import wait_until as until


def quorum_leader(servers: str) -> int:
    """The metadata quorum's leader as kafka-python's DescribeQuorum reports it (-1: none answers)."""
    client = KafkaAdminClient(bootstrap_servers=servers, request_timeout_ms=2000)
    try:
        return client.describe_metadata_quorum()["topics"][0]["partitions"][0]["leader_id"]
    except Exception:  # noqa: BLE001 - no leader, or the broker has nobody to forward to yet
        return -1
    finally:
        client.close()


@pytest.mark.timeout(180)
def test_a_running_process_cluster_is_used_as_it_is_and_its_active_controller_killed_and_started(
        tmp_path, monkeypatch, capsys):
    options = ("--election-timeout-ms", "500", "--fetch-timeout-ms", "1000")
    with ProcessCluster(brokers=1, controllers=3, data_dir=tmp_path, controller_options=options) as pc:
        monkeypatch.delenv(connection.ENV_VAR, raising=False)
        monkeypatch.setenv(handle.PROCESS_CLUSTER_VAR, str(tmp_path))
        lab = kraft.kraft_cluster()
        assert (lab.bootstrap_servers, lab.brokers, lab.controllers) == (pc.bootstrap_servers, (1,), (2, 3, 4))
        assert lab.can_break and not lab.can_cut_links and lab.started is None
        assert not lab.requires_links("Cutting a link")
        assert "Cutting a link cuts links between nodes" in capsys.readouterr().out

        first = until(lambda: (n := quorum_leader(lab.bootstrap_servers)) in lab.controllers and n)
        lab.kill(first)
        second = until(lambda: (n := quorum_leader(lab.bootstrap_servers)) not in (first, -1) and n)
        assert second in lab.controllers
        lab.start(first)  # another process's node, started again from its recorded command
        until(lambda: any(v["replica_id"] == first and v["log_end_offset"] > 0 for v in KafkaAdminClient(
            bootstrap_servers=lab.bootstrap_servers).describe_metadata_quorum()["topics"][0]["partitions"][0]
                          ["current_voters"]))
        lab.stop()  # not this process's cluster: left running
        assert pc.alive(1) and quorum_leader(lab.bootstrap_servers) == second


def test_a_cluster_nobody_should_break_makes_the_breaking_cells_skip_in_one_sentence(monkeypatch, capsys, tmp_path):
    outside = Cluster(brokers=1).start()
    try:
        monkeypatch.delenv(handle.PROCESS_CLUSTER_VAR, raising=False)
        monkeypatch.setattr(handle, "COMPOSE_FILE", tmp_path / "no-compose.yml")
        lab = kraft.kraft_cluster(outside.bootstrap_servers)
        assert not lab.can_break and not lab.can_cut_links
        assert not lab.requires_control("Killing the active controller")
        said = capsys.readouterr().out.strip().splitlines()
        assert said == [f"Killing the active controller kills and pauses nodes, and the nodes of "
                        f"{outside.bootstrap_servers} cannot be stopped from here (they are not the course's process "
                        f"or docker compose cluster), so it is skipped."]
        with pytest.raises(RuntimeError, match="cannot be stopped from here"):
            lab.kill(1)
    finally:
        outside.stop()


@pytest.mark.timeout(120)
def test_the_links_of_a_running_process_cluster_started_with_links_are_cut_through_its_control_port(
        tmp_path, monkeypatch):
    with ProcessCluster(brokers=2, controllers=1, data_dir=tmp_path, links=True) as pc:
        pc.serve_control()
        assert pc.network is not None
        monkeypatch.delenv(connection.ENV_VAR, raising=False)
        monkeypatch.setenv(handle.PROCESS_CLUSTER_VAR, str(tmp_path))
        lab = kraft.kraft_cluster()
        assert lab.started is None and lab.can_cut_links
        lab.cut(1, 2)  # replication between the two brokers, through the other process's control port
        modes = {name: link["mode"] for name, link in pc.network.status().items()}
        assert modes["b1->b2"] == modes["b2->b1"] == "partition"
        assert {name for name, mode in modes.items() if mode != "pass"} == {"b1->b2", "b2->b1"}  # clients pass
        lab.heal()
        assert {link["mode"] for link in pc.network.status().values()} == {"pass"}

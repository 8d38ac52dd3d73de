"""Partitions are bounded by disk, not by the process's file descriptor limit."""

from __future__ import annotations

import os

import pytest

from minikafka.log.store import FileStore, OpenFiles


def test_least_recently_used_files_are_closed_and_reopened(tmp_path):
    files = OpenFiles(limit=4)
    stores = [FileStore(tmp_path / f"{i:020d}.log", files) for i in range(10)]
    for i, store in enumerate(stores):
        store.append(b"segment %d" % i)
    assert len(files) == 4
    for i, store in enumerate(stores):  # every one still reads and appends after being closed
        assert store.read(0, 100) == b"segment %d" % i
        store.append(b"!")
    assert [s.size for s in stores] == [len(b"segment %d!" % i) for i in range(10)]
    assert [(tmp_path / f"{i:020d}.log").read_bytes()[-1:] for i in range(10)] == [b"!"] * 10
    assert len(files) == 4


def test_a_deleted_segment_is_not_brought_back(tmp_path):
    files = OpenFiles(limit=2)
    store = FileStore(tmp_path / "gone.log", files)
    store.append(b"x")
    store.delete()
    with pytest.raises(FileNotFoundError):
        store.read(0, 1)
    assert not (tmp_path / "gone.log").exists()


def test_a_topic_with_more_partitions_than_descriptors(tmp_path):
    """`minikafka serve` under `ulimit -n 1024` creates a 1,500-partition topic whole and
    every partition takes writes (one descriptor per partition would run out)."""
    import resource
    import subprocess
    import sys

    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    def limit_descriptors():
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", "--port", "0", "--data-dir",
                             str(tmp_path), "--log-level", "WARNING"], stdout=subprocess.PIPE, text=True,
                            preexec_fn=limit_descriptors)
    try:
        address = proc.stdout.readline().split("listening on ")[1].split()[0]
        admin = AdminClient({"bootstrap.servers": address})
        admin.create_topics([NewTopic("wide", 1500, 1)])["wide"].result(60)
        p = Producer({"bootstrap.servers": address, "linger.ms": 50})
        for i in range(1500):
            p.produce("wide", b"v", partition=i)
        assert p.flush(60) == 0
        assert len(os.listdir(f"/proc/{proc.pid}/fd")) < 1024
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(10)
    assert len(list(tmp_path.glob("wide-*/*.log"))) == 1500

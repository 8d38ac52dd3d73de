"""The room kit: ``./course pack`` builds one archive, and ``./course`` sets up from it offline.

The archive is unpacked in a scratch directory and set up with every package index pointing
at a closed port, so a single download attempt would fail the install. Then the kit's own
environment runs a broker and a real client, and imports Spark. As root with apt-get and npm
on the PATH, the kit runs neither.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.course.test_course_script import as_root_with_apt

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "dist" / "kafka-hands-on-room-kit.tar"
DEAD = "http://127.0.0.1:9/simple"  # nothing listens on port 9 (discard): any download fails at once


@pytest.mark.slow
def test_the_room_kit_installs_with_no_network(tmp_path):
    built = subprocess.run([str(ROOT / "course"), "pack"], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert "Room kit:" in built.stdout and KIT.exists()
    with tarfile.open(KIT) as kit:
        names = kit.getnames()
        kit.extractall(tmp_path, filter="tar")
    course = tmp_path / "kafka-hands-on"
    wheels = [n for n in names if n.startswith("kafka-hands-on/wheelhouse/") and n.endswith(".whl")]
    assert any("pyspark" in n for n in wheels) and any("confluent_kafka" in n for n in wheels)
    assert not any("kafka_hands_on-" in n for n in wheels), "the course itself is installed from its source"
    if (ROOT / "slides/node_modules/reveal.js/dist/reveal.js").exists():
        assert "kafka-hands-on/slides/node_modules/reveal.js/dist/reveal.js" in names

    offline = {**os.environ, "PIP_INDEX_URL": DEAD, "PIP_EXTRA_INDEX_URL": DEAD, "PIP_FIND_LINKS": "",
               "npm_config_registry": DEAD, "PIP_CONFIG_FILE": os.devnull}
    setup = subprocess.run([str(course / "course"), "setup"], cwd=course, env=offline, capture_output=True,
                           text=True, timeout=900)
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
    assert "installing from ./wheelhouse, without the network" in setup.stdout
    assert "Editable installation" not in setup.stderr  # setuptools' banner is filtered out

    # As root with apt-get and npm at hand, the kit still downloads nothing: not the system
    # packages `./course slides` and `./course test` would install, not reveal.js.
    root_env, calls = as_root_with_apt(tmp_path)
    slides = subprocess.run(["bash", str(course / "course"), "slides", "--help"], cwd=course,
                            env={**offline, "PATH": root_env["PATH"]}, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=300)
    assert slides.returncode == 0, slides.stdout[-3000:] + slides.stderr[-3000:]
    assert "the room kit downloads nothing" in slides.stdout
    assert not calls.exists(), f"the room kit ran {calls.read_text()}"

    smoke = ("import pyspark, kafka_course\n"
             "from confluent_kafka import Producer\n"
             "from minikafka import Cluster\n"
             "with Cluster() as c:\n"
             "    p = Producer({'bootstrap.servers': c.bootstrap_servers})\n"
             "    p.produce('t', b'x')\n"
             "    assert p.flush(10) == 0\n"
             "    print(len(kafka_course.consume_all('t', bootstrap=c.bootstrap_servers)))\n")
    ran = subprocess.run([str(course / ".venv/bin/python"), "-c", smoke], cwd=course, capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 0 and ran.stdout.strip() == "1", ran.stdout + ran.stderr[-3000:]

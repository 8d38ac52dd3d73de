r"""``minikafka configs``: describe and change topic, broker and user settings, like kafka-configs.sh.

The same options as Kafka's script, and like it a plain Kafka client (DescribeConfigs and
IncrementalAlterConfigs, KIP-339, through confluent-kafka's AdminClient), so it works
against any Kafka cluster::

    minikafka configs --bootstrap-server B --entity-type topics --entity-name T --describe [--all]
    minikafka configs --bootstrap-server B --topic T --alter \
        --add-config 'retention.ms=86400000,cleanup.policy=[compact,delete]'
    minikafka configs --bootstrap-server B --topic T --alter --delete-config segment.ms
    minikafka configs --bootstrap-server B --entity-type brokers --entity-name 1 --describe
    minikafka configs --bootstrap-server B --entity-type users --entity-name alice --alter \
        --add-config 'SCRAM-SHA-256=[iterations=8192,password=alice-secret]'
    minikafka configs --bootstrap-server B --entity-type users --describe

``--describe`` lists the settings set on the entity itself (a topic's overrides, a
broker's dynamic settings), each with its synonyms: where the value would come from
otherwise. ``--all`` lists every setting. ``--add-config`` changes only the settings it
names (a value holding commas goes in square brackets, as in Kafka); ``--delete-config``
removes an override so the broker's default applies again.

Users carry SCRAM credentials (KIP-554: DescribeUserScramCredentials and
AlterUserScramCredentials): ``--add-config 'SCRAM-SHA-256=[password=...]'`` creates or
changes one (4096 iterations unless ``iterations=`` says otherwise), ``--delete-config
SCRAM-SHA-256`` removes it, and ``--describe`` shows the mechanisms and iterations, never
the password (the broker keeps only a salted hash).
"""

from __future__ import annotations

import argparse
import re
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

from .common import add_bootstrap, client_settings, describe_client_error, fail

if TYPE_CHECKING:
    from confluent_kafka.admin import AdminClient, ConfigEntry, ConfigResource, ScramMechanism

T = TypeVar("T")

TIMEOUT = 15  # seconds for each admin call
CONNECT_TIMEOUT = 5  # seconds to find a broker at the bootstrap address
ENTITY_TYPES = {"topics": "topic", "brokers": "broker", "users": "user"}
SCRAM = ("SCRAM-SHA-256", "SCRAM-SHA-512")
DEFAULT_ITERATIONS = 4096  # kafka-configs.sh's default
OWN_SOURCES = {"topic": {"DYNAMIC_TOPIC_CONFIG"}, "broker": {"DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG"}}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minikafka configs",
                                description="Describe and change topic, broker and user settings.")
    add_bootstrap(p)
    action = p.add_mutually_exclusive_group(required=True)
    action.add_argument("--describe", action="store_true", help="show the settings of the entity")
    action.add_argument("--alter", action="store_true", help="change settings (--add-config, --delete-config)")
    p.add_argument("--entity-type", choices=sorted(ENTITY_TYPES),
                   help="what to configure: topics, brokers or users (SCRAM credentials)")
    p.add_argument("--entity-name", help="the topic's name, the broker's id or the user's name")
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
    if kind == "user":
        return _users(client, name, args)
    if args.describe:
        names = [name] if name else _all_names(client, kind)
        for each in names:
            _describe(client, kind, each, args.all)
    else:
        if not name:
            fail(f"--alter needs the {kind} to change: --entity-name (or --{kind}).")
        _alter(client, kind, name, args)
    return 0


def _entity(args: argparse.Namespace) -> tuple[str, str | None]:
    """(``topic`` or ``broker``, the name or None) from the long form or a shorthand."""
    chosen = [("topic", args.topic), ("broker", args.broker)]
    given = [(kind, name) for kind, name in chosen if name is not None]
    if args.entity_type:
        given.append((ENTITY_TYPES[args.entity_type], args.entity_name))
    elif args.entity_name is not None:
        fail("--entity-name needs --entity-type topics, brokers or users.")
    if not given:
        fail("Say what to configure: --entity-type topics|brokers|users (with --entity-name), or --topic / --broker.")
    if len({kind for kind, _ in given}) > 1 or len({name for _, name in given if name is not None}) > 1:
        fail("Name one entity: --entity-type with --entity-name, or --topic, or --broker.")
    kind = given[0][0]
    return kind, next((name for _, name in given if name is not None), None)


def _connect(bootstrap: str) -> AdminClient:
    """An AdminClient that has reached a broker, or one sentence saying why not."""
    from confluent_kafka.admin import AdminClient
    client = AdminClient(client_settings(bootstrap, **{"socket.timeout.ms": TIMEOUT * 1000, "log_level": 0}))
    try:
        client.list_topics(timeout=CONNECT_TIMEOUT)
    except Exception as e:  # noqa: BLE001 - every client error becomes one sentence
        fail(f"Cannot reach a Kafka broker at {bootstrap}: is one running there? ({describe_client_error(e)})")
    return client


def _all_names(client: AdminClient, kind: str) -> list[str]:
    metadata = client.list_topics(timeout=TIMEOUT)
    if kind == "broker":
        return [str(b) for b in sorted(metadata.brokers)]
    return sorted(t for t in metadata.topics if not t.startswith("__"))


def _resource(kind: str, name: str, **kwargs: Any) -> ConfigResource:
    from confluent_kafka.admin import ConfigResource
    return ConfigResource(kind, name, **kwargs)


def _wait(future: Future[T], what: str) -> T:
    try:
        return future.result(timeout=TIMEOUT)
    except Exception as e:  # noqa: BLE001 - every client error becomes one sentence
        fail(f"Could not {what}: {describe_client_error(e)}")


def _describe(client: AdminClient, kind: str, name: str, everything: bool) -> None:
    resource = _resource(kind, name)
    entries = _wait(client.describe_configs([resource], request_timeout=TIMEOUT)[resource],
                    f"describe {kind} {name!r}")
    shown = [e for e in entries.values() if everything or _source(e) in OWN_SOURCES[kind]]
    print(f"{'All' if everything else 'Dynamic'} configs for {kind} {name} are:")
    for entry in sorted(shown, key=lambda e: e.name):
        print(f"  {_line(entry)}")


def _source(entry: ConfigEntry) -> str:
    from confluent_kafka.admin import ConfigSource
    try:
        return ConfigSource(entry.source).name
    except ValueError:
        return str(entry.source)


def _line(entry: ConfigEntry) -> str:
    value = "null" if entry.is_sensitive or entry.value is None else entry.value
    synonyms = ", ".join(f"{_source(s)}:{s.name}={'null' if s.value is None else s.value}"
                         for s in (entry.synonyms or {}).values())
    return f"{entry.name}={value} sensitive={str(entry.is_sensitive).lower()} synonyms={{{synonyms}}}"


def _alter(client: AdminClient, kind: str, name: str, args: argparse.Namespace) -> None:
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


def _require_topic(client: AdminClient, name: str) -> None:
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


# -- users: SCRAM credentials ----------------------------------------------------------------------
def _users(client: AdminClient, name: str | None, args: argparse.Namespace) -> int:
    if args.describe:
        _describe_users(client, name)
    elif not name:
        fail("--alter needs the user to change: --entity-name.")
    else:
        _alter_user(client, name, args)
    return 0


def _mechanism_name(mechanism: ScramMechanism) -> str:
    """``ScramMechanism.SCRAM_SHA_256`` -> ``SCRAM-SHA-256``, Kafka's spelling."""
    return mechanism.name.replace("_", "-")


def _mechanism(name: str) -> ScramMechanism:
    """``SCRAM-SHA-256`` -> confluent-kafka's ``ScramMechanism.SCRAM_SHA_256``."""
    from confluent_kafka.admin import ScramMechanism
    return ScramMechanism[name.replace("-", "_")]


def _describe_users(client: AdminClient, name: str | None) -> None:
    from confluent_kafka import KafkaError, KafkaException
    try:
        # one future per named user, or one future for every user: which one depends on ``name``
        found: Any = client.describe_user_scram_credentials([name] if name else None, request_timeout=TIMEOUT)
        answers = {name: found[name].result(timeout=TIMEOUT)} if name else found.result(timeout=TIMEOUT)
    except KafkaException as e:
        if e.args and e.args[0].code() == KafkaError.RESOURCE_NOT_FOUND:
            print(f"No SCRAM credentials for user-principal '{name}'.")  # kafka-configs.sh prints nothing
            return
        fail(f"Could not describe SCRAM credentials: {describe_client_error(e)}")
    except Exception as e:  # noqa: BLE001 - every client error becomes one sentence
        fail(f"Could not describe SCRAM credentials: {describe_client_error(e)}")
    for user in sorted(answers):
        infos = ", ".join(f"{_mechanism_name(i.mechanism)}=iterations={i.iterations}"
                          for i in answers[user].scram_credential_infos)
        print(f"SCRAM credential configs for user-principal '{user}' are {infos}")


def _alter_user(client: AdminClient, name: str, args: argparse.Namespace) -> None:
    from confluent_kafka.admin import ScramCredentialInfo, UserScramCredentialDeletion, UserScramCredentialUpsertion
    added = _parse_added(args.add_config)
    deleted = [k.strip() for item in args.delete_config for k in item.split(",") if k.strip()]
    if not added and not deleted:
        fail("--alter needs --add-config 'SCRAM-SHA-256=[password=...]' or --delete-config SCRAM-SHA-256.")
    for key in [*added, *deleted]:
        if key not in SCRAM:
            fail(f"A user's settings here are its SCRAM credentials ({' or '.join(SCRAM)}), not {key!r}.")
    alterations: list = []
    for key, value in added.items():
        fields = _scram_fields(key, value)
        info = ScramCredentialInfo(_mechanism(key), fields["iterations"])
        alterations.append(UserScramCredentialUpsertion(name, info, fields["password"].encode()))
    alterations += [UserScramCredentialDeletion(name, _mechanism(k)) for k in deleted]
    for alteration in alterations:  # one per request: Kafka refuses a user altered twice in one request
        futures = client.alter_user_scram_credentials([alteration], request_timeout=TIMEOUT)
        _wait(futures[name], f"change the SCRAM credentials of user {name!r}")
    print(f"Completed updating config for user {name}.")


def _scram_fields(mechanism: str, value: str) -> dict:
    """``iterations=8192,password=secret`` (the brackets already removed) -> its fields."""
    fields: dict = {}
    for part in value.split(","):
        key, sep, item = part.partition("=")
        if not sep or key.strip() not in ("iterations", "password"):
            fail(f"{mechanism} takes [iterations=N,password=SECRET], not {value!r}.")
        fields[key.strip()] = item
    if not fields.get("password"):
        fail(f"{mechanism} needs a password: --add-config '{mechanism}=[password=SECRET]'.")
    try:
        fields["iterations"] = int(fields.get("iterations", DEFAULT_ITERATIONS))
    except ValueError:
        fail(f"{mechanism}'s iterations must be a number, not {fields['iterations']!r}.")
    return fields

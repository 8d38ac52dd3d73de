"""The connector plugins this worker offers, with their configuration definitions (Kafka's ConfigDef).

Every connector configuration has the common keys of Kafka's ``ConnectorConfig`` (name,
connector.class, tasks.max, key.converter, value.converter, transforms, errors.tolerance,
...), sinks add ``topics`` or ``topics.regex``, and each plugin adds its own. Validation
answers with the sentences Kafka uses ("Missing required configuration "file" which has
no default value."), so the JSON a learner writes here is judged as a real worker judges it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import converters, transforms

KAFKA_VERSION = "3.9.1"
NO_DEFAULT = object()


@dataclass(frozen=True)
class Key:
    name: str
    type: str = "STRING"  # STRING INT LONG BOOLEAN LIST CLASS PASSWORD
    default: Any = None
    importance: str = "MEDIUM"
    documentation: str = ""
    group: str | None = None
    choices: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is NO_DEFAULT

    def definition(self, order: int) -> dict:
        return {"name": self.name, "type": self.type, "required": self.required,
                "default_value": None if self.required or self.default is None else str(self.default),
                "importance": self.importance, "documentation": self.documentation, "group": self.group,
                "width": "NONE", "display_name": self.name, "dependents": [], "order": order}

    def problems(self, value: str | None) -> list[str]:
        if value is None or value == "":
            if self.required:
                return [f"Missing required configuration \"{self.name}\" which has no default value."]
            return []
        if self.type in ("INT", "LONG") and not str(value).lstrip("-").isdigit():
            return [f"Invalid value {value} for configuration {self.name}: Not a number of type {self.type}"]
        if self.type == "BOOLEAN" and str(value).lower() not in ("true", "false"):
            return [f"Invalid value {value} for configuration {self.name}: Expected value to be either true or false"]
        if self.choices and str(value).lower() not in [c.lower() for c in self.choices]:
            return [f"Invalid value {value} for configuration {self.name}: String must be one of: "
                    f"{', '.join(self.choices)}"]
        if self.type == "CLASS" and value not in converters.CONVERTERS:
            return [f"Invalid value {value} for configuration {self.name}: Class {value} could not be found."]
        return []


COMMON = [
    Key("name", default=NO_DEFAULT, importance="HIGH", documentation="Globally unique name for this connector.",
        group="Common"),
    Key("connector.class", default=NO_DEFAULT, importance="HIGH", group="Common",
        documentation="Name or alias of the class for this connector."),
    Key("tasks.max", "INT", 1, "HIGH", "Maximum number of tasks to use for this connector.", "Common"),
    Key("key.converter", "CLASS", None, "LOW", "Converter for the keys (the worker's when not set).", "Common"),
    Key("value.converter", "CLASS", None, "LOW", "Converter for the values (the worker's when not set).", "Common"),
    Key("header.converter", "CLASS", None, "LOW", "Converter for the headers.", "Common"),
    Key("transforms", "LIST", "", "LOW", "Aliases for the transformations to apply to records.", "Transforms"),
    Key("predicates", "LIST", "", "LOW", "Aliases for the predicates used by transformations.", "Predicates"),
    Key("errors.tolerance", default="none", importance="MEDIUM", group="Error Handling", choices=("none", "all"),
        documentation="none: an error fails the task; all: problematic records are skipped."),
    Key("errors.log.enable", "BOOLEAN", False, "MEDIUM", "Log each skipped record's error.", "Error Handling"),
]
SINK = [
    Key("topics", "LIST", "", "HIGH", "List of topics to consume, separated by commas.", "Common"),
    Key("topics.regex", default="", importance="HIGH", group="Common",
        documentation="Regular expression giving the topics to consume."),
    Key("errors.deadletterqueue.topic.name", default="", importance="MEDIUM", group="Error Handling",
        documentation="The topic that receives the records that failed, with errors.tolerance=all."),
]


@dataclass(frozen=True)
class Plugin:
    class_name: str
    type: str  # "source" or "sink"
    version: str
    keys: tuple[Key, ...]

    @property
    def aliases(self) -> set[str]:
        simple = self.class_name.rsplit(".", 1)[-1]
        return {self.class_name, simple, simple.removesuffix("Connector")}

    def all_keys(self) -> list[Key]:
        return COMMON + (SINK if self.type == "sink" else []) + list(self.keys)

    def validate(self, config: dict[str, str]) -> dict[str, list[str]]:
        """Configuration key -> the errors a real worker would report for it."""
        out = {k.name: k.problems(config.get(k.name)) for k in self.all_keys()}
        if self.type == "sink":
            topics, regex = config.get("topics", "").strip(), config.get("topics.regex", "").strip()
            if topics and regex:
                out["topics"].append("topics and topics.regex are mutually exclusive options, but both are set.")
            elif not topics and not regex:
                out["topics"].append("Must configure one of topics or topics.regex")
        if (self.class_name.endswith("JdbcSinkConnector") and config.get("delete.enabled", "false").lower() == "true"
                and config.get("pk.mode") != "record_key"):
            out["delete.enabled"].append("Deletes are only supported for pk.mode record_key")
        out.update(transforms.problems(config))
        return out

    def task_configs(self, config: dict[str, str]) -> list[dict[str, str]]:
        count = 1 if self.type == "source" else max(1, int(config.get("tasks.max", 1)))
        return [dict(config) for _ in range(count)]

    def describe(self) -> dict:
        return {"class": self.class_name, "type": self.type, "version": self.version}


FILE_SOURCE = Plugin("org.apache.kafka.connect.file.FileStreamSourceConnector", "source", KAFKA_VERSION, (
    Key("file", importance="HIGH", documentation="Source filename. If not specified, the standard input will be "
                                                  "used"),
    Key("topic", default=NO_DEFAULT, importance="HIGH", documentation="The topic to publish data to"),
    Key("batch.size", "INT", 2000, "LOW", "The maximum number of records the source task can read from the file "
                                          "each time it is polled"),
))
FILE_SINK = Plugin("org.apache.kafka.connect.file.FileStreamSinkConnector", "sink", KAFKA_VERSION, (
    Key("file", importance="HIGH", documentation="Destination filename. If not specified, the standard output "
                                                  "will be used"),
))
JDBC_SINK = Plugin("io.confluent.connect.jdbc.JdbcSinkConnector", "sink", "10.8.4", tuple(
    Key(name, kind, default, importance, doc, group, choices) for name, kind, default, importance, doc, group, choices
    in [
        ("connection.url", "STRING", NO_DEFAULT, "HIGH", "JDBC connection URL.", "Connection", ()),
        ("connection.user", "STRING", None, "HIGH", "JDBC connection user.", "Connection", ()),
        ("connection.password", "PASSWORD", None, "HIGH", "JDBC connection password.", "Connection", ()),
        ("insert.mode", "STRING", "insert", "HIGH", "The insertion mode to use.", "Writes",
         ("insert", "upsert", "update")),
        ("batch.size", "INT", 3000, "MEDIUM", "Records to batch together for insertion.", "Writes", ()),
        ("delete.enabled", "BOOLEAN", False, "MEDIUM", "Treat null record values as deletes.", "Writes", ()),
        ("table.name.format", "STRING", "${topic}", "MEDIUM", "Destination table name; ${topic} is replaced by the "
                                                             "record's topic.", "Data Mapping", ()),
        ("pk.mode", "STRING", "none", "HIGH", "The primary key mode.", "Data Mapping",
         ("none", "kafka", "record_key", "record_value")),
        ("pk.fields", "LIST", "", "MEDIUM", "Primary key field names (meaning depends on pk.mode).", "Data Mapping",
         ()),
        ("fields.whitelist", "LIST", "", "MEDIUM", "Record value fields to use; all when empty.", "Data Mapping", ()),
        ("auto.create", "BOOLEAN", False, "MEDIUM", "Create the destination table when it is missing.", "DDL Support",
         ()),
        ("auto.evolve", "BOOLEAN", False, "MEDIUM", "Add columns for new optional fields.", "DDL Support", ()),
        ("quote.sql.identifiers", "STRING", "ALWAYS", "MEDIUM", "When to quote table and column names.",
         "Data Mapping", ("ALWAYS", "NEVER")),
    ]))
PLUGINS = (FILE_SINK, FILE_SOURCE, JDBC_SINK)


def find(name: str) -> Plugin | None:
    return next((p for p in PLUGINS if name in p.aliases), None)


def validation_answer(plugin: Plugin, config: dict[str, str]) -> dict:
    """The body of ``PUT /connector-plugins/{plugin}/config/validate``."""
    found = plugin.validate(config)
    keys = {k.name: k for k in plugin.all_keys()}
    for name in found:
        keys.setdefault(name, Key(name, group="Transforms"))
    configs = [{"definition": key.definition(i), "value": {
        "name": name, "value": config.get(name, None if key.default in (None, NO_DEFAULT) else str(key.default)),
        "recommended_values": list(key.choices), "errors": found.get(name, []), "visible": True}}
        for i, (name, key) in enumerate(keys.items())]
    groups = list(dict.fromkeys(k.group for k in keys.values() if k.group))
    return {"name": plugin.class_name, "error_count": sum(len(e) for e in found.values()), "groups": groups,
            "configs": configs}

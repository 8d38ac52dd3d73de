"""DescribeConfigs: a topic's, broker's or group's settings with their source and synonyms.

The broker (``minikafka.resource_configs``, through the ``ConfigsPort``) lists every known
setting with its value, where it comes from (topic override, a broker's dynamic setting, the
cluster-wide dynamic default, the broker's file, the default) and its synonyms (every place it
has a value, most specific first); the answer carries the synonyms and a sentence of
documentation when asked. The broker resource "" holds only the cluster-wide dynamic defaults,
as in Kafka. A BROKER_LOGGER resource lists the broker's loggers and their levels (KIP-412).
"""

from __future__ import annotations

from typing import Any

from kio.schema.describe_configs.v4.request import DescribeConfigsRequest, DescribeConfigsResource

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation
from . import _configs
from .ports import Caller, Described, Response


def _entry(caller: Caller, e: Described, synonyms: bool, docs: bool) -> Any:
    name, value, source, kind, read_only, doc, synonyms_of = e
    syn = tuple(caller.make("DescribeConfigsSynonym", name=n, value=v, source=s)
                for n, v, s in synonyms_of) if synonyms else ()
    return caller.make("DescribeConfigsResourceResult", name=name, value=value, read_only=read_only,
                       config_source=source, is_sensitive=False, synonyms=syn, config_type=kind,
                       documentation=doc if docs else None)


class DescribeConfigs(_configs.ConfigsHandler):
    async def handle(self, caller: Caller, request: DescribeConfigsRequest) -> Response:
        synonyms, docs = request.include_synonyms, request.include_documentation
        return caller.respond(results=tuple(self._result(caller, r, synonyms, docs) for r in request.resources))

    def _result(self, caller: Caller, res: DescribeConfigsResource, synonyms: bool, docs: bool) -> Any:
        try:
            _configs.check_access(caller, res.resource_type, res.resource_name, Operation.DESCRIBE_CONFIGS)
            wanted = set(res.configuration_keys) if res.configuration_keys is not None else None
            entries = self.configs.describe_resource_configs(res.resource_type, res.resource_name)
            configs = tuple(_entry(caller, e, synonyms, docs) for e in entries if wanted is None or e[0] in wanted)
            code, message = ErrorCode.none, None
        except KafkaError as e:
            configs, code, message = (), e.code, e.message
        return caller.make("DescribeConfigsResult", error_code=code, error_message=message,
                           resource_type=res.resource_type, resource_name=res.resource_name, configs=configs)

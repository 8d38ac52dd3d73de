"""ApiVersions (KIP-35, KIP-511): which APIs and versions this broker speaks.

The answer is derived from ``protocol.apis.API_TABLE``. A client that asks with a
newer ApiVersions version than the broker knows gets a v0 body with
UNSUPPORTED_VERSION and the broker's ranges, and retries with a version from them.

From v3 the answer also lists the cluster's features (KIP-584): the levels this broker
supports and those the cluster finalized, which clients read to choose a protocol (a
Java client uses transaction protocol v2 only where ``transaction.version`` is finalized
at 2). ``FEATURES`` says what minikafka has: the consumer group protocol (KIP-848,
``group.version`` 1), share groups (KIP-932, ``share.version`` 1) and both transaction
protocols (``transaction.version`` 1 and 2, KIP-890 part 2), and eligible leader replicas
(KIP-966, ``eligible.leader.replicas.version`` 1). As a new Kafka 4.4 cluster, minikafka
finalizes ``transaction.version`` 2 and ``eligible.leader.replicas.version`` 1; the broker
settings of those names lower them (a cluster that offers only the classic transaction
protocol, or one without ELR). ``metadata.version`` is not listed: its feature level numbers
for 4.2-4.4 were not at hand to be checked, and a guessed level would mislead
``kafka-features describe``.
"""

from __future__ import annotations

from functools import cache

from kio.schema.api_versions.v0.response import ApiVersion, ApiVersionsResponse
from kio.schema.api_versions.v4.request import ApiVersionsRequest

from ..errors import ErrorCode
from ..protocol import codec
from ..protocol.apis import API_TABLE
from .ports import Caller, Response, SettingsPort

# feature -> (lowest supported level, highest supported level, finalized level); a setting
# of the same name, where the broker has one, chooses the finalized level.
FEATURES: dict[str, tuple[int, int, int]] = {
    "eligible.leader.replicas.version": (0, 1, 1),
    "group.version": (0, 1, 1),
    "share.version": (0, 1, 1),
    "transaction.version": (0, 2, 2),
}
SET_BY_CONFIG = ("eligible.leader.replicas.version", "transaction.version")
API_KEY = codec.API_VERSIONS_KEY
FEATURES_EPOCH = 1  # the finalized levels never change in a running minikafka


def _ranges(entry: type) -> tuple:
    """The API table as ApiVersion entries (the entry class has the same fields in every version)."""
    return tuple(entry(api_key=api.key, min_version=api.advertised_range[0], max_version=api.max_version)
                 for api in API_TABLE)


def finalized(settings: SettingsPort) -> dict[str, int]:
    """Each feature's finalized level on this broker."""
    return {name: settings.int_setting(name) if name in SET_BY_CONFIG else level
            for name, (_, _, level) in FEATURES.items()}


class ApiVersions:
    """The ApiVersions API over the broker's ``SettingsPort`` (the settings that lower feature levels)."""

    def __init__(self, settings: SettingsPort) -> None:
        self.settings = settings

    async def handle(self, caller: Caller, request: ApiVersionsRequest) -> Response:
        return _answer(caller.api_version, tuple(finalized(self.settings).items()))


@cache
def _answer(version: int, levels: tuple[tuple[str, int], ...]) -> Response:
    """The answer of one version with these finalized feature levels: the same for every request
    to a broker, so it is built and encoded once."""
    cls, schema = codec.response_class(API_KEY, version), codec.response_module(API_KEY, version)
    if version < 3:
        return codec.constant(codec.downgrade(cls, error_code=ErrorCode.none, api_keys=_ranges(schema.ApiVersion)))
    return codec.constant(codec.downgrade(
        cls, error_code=ErrorCode.none, api_keys=_ranges(schema.ApiVersion),
        supported_features=tuple(codec.entity(schema, "SupportedFeatureKey", name=name, min_version=low,
                                              max_version=high) for name, (low, high, _) in FEATURES.items()),
        finalized_features_epoch=FEATURES_EPOCH,
        finalized_features=tuple(codec.entity(schema, "FinalizedFeatureKey", name=name, max_version_level=level,
                                              min_version_level=level) for name, level in levels)))


def unsupported_version_answer(correlation_id: int) -> bytes:
    body = ApiVersionsResponse(error_code=ErrorCode.unsupported_version, api_keys=_ranges(ApiVersion))
    return codec.encode_response(correlation_id, body)

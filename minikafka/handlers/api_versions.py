"""ApiVersions (KIP-35, KIP-511): which APIs and versions this broker speaks.

The answer is derived from ``protocol.apis.API_TABLE``. A client that asks with a
newer ApiVersions version than the broker knows gets a v0 body with
UNSUPPORTED_VERSION and the broker's ranges, and retries with a version from them.
"""

from __future__ import annotations

from kio.schema.api_versions.v0.response import ApiVersion, ApiVersionsResponse

from ..errors import ErrorCode
from ..protocol import codec
from ..protocol.apis import API_TABLE


def _ranges(entry: type) -> tuple:
    """The API table as ApiVersion entries (the entry class has the same fields in every version)."""
    return tuple(entry(api_key=api.key, min_version=api.advertised_range[0], max_version=api.max_version)
                 for api in API_TABLE)


async def handle(ctx, request):
    return ctx.respond(error_code=ErrorCode.none, api_keys=_ranges(ctx.schema.ApiVersion))


def unsupported_version_answer(correlation_id: int) -> bytes:
    body = ApiVersionsResponse(error_code=ErrorCode.unsupported_version, api_keys=_ranges(ApiVersion))
    return codec.encode_response(correlation_id, body)

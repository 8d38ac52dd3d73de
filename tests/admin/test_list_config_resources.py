"""ListConfigResources (KIP-1142, API key 74) over TCP with the raw client: every resource
type, a filter by type, an unknown type refused, and version 0 (client metrics only)."""

from __future__ import annotations

from kio.schema.list_config_resources.v0 import request as v0
from kio.schema.list_config_resources.v1 import request as v1
from kio.static.primitive import i8

from tests.rawclient import RawClient


def listed(cluster, *types: int) -> tuple[int, set[tuple[int, str]]]:
    with RawClient(cluster.bootstrap_servers) as client:
        answer = client.request(v1.ListConfigResourcesRequest(resource_types=tuple(i8(t) for t in types)))
    return answer.error_code, {(r.resource_type, r.resource_name) for r in answer.config_resources}


def test_every_resource_with_settings_is_listed_and_can_be_filtered(make_cluster):
    cluster = make_cluster(brokers=2)
    cluster.create_topic("orders", 1, 1)
    cluster.call(lambda: cluster.metadata.set_group_configs("queue", {"share.auto.offset.reset": "earliest"}))
    code, everything = listed(cluster)
    assert code == 0
    assert {(2, "orders"), (4, "1"), (4, "2"), (8, "1"), (8, "2"), (32, "queue")} <= everything
    assert {kind for kind, _ in everything} <= {2, 4, 8, 16, 32}
    assert listed(cluster, 4) == (0, {(4, "1"), (4, "2")})
    assert listed(cluster, 32, 2)[1] >= {(32, "queue"), (2, "orders")}
    assert listed(cluster, 16) == (0, set()), "no client-metrics resources here"
    assert listed(cluster, 1) == (42, set()), "an unknown resource type is INVALID_REQUEST"


def test_version_0_lists_client_metrics_resources_only(make_cluster):
    cluster = make_cluster(brokers=1)
    cluster.create_topic("orders", 1, 1)
    with RawClient(cluster.bootstrap_servers) as client:
        answer = client.request(v0.ListConfigResourcesRequest())
    assert answer.error_code == 0 and answer.config_resources == ()

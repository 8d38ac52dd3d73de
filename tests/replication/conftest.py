"""``replicated_cluster``: ``make_cluster`` once per replication transport (issue 31).

Followers copy their leaders' logs by method calls (the embedded cluster's default) or by
Fetch requests over TCP (``Cluster(replication="network")``); a test that takes this
fixture runs with each, so both keep the same replication rules.
"""

from __future__ import annotations

import pytest


@pytest.fixture(params=["in-process", "network"])
def replicated_cluster(request, make_cluster):
    def factory(**kwargs):
        return make_cluster(replication=request.param, **kwargs)
    factory.transport = request.param
    return factory

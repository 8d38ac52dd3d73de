"""The controller's rules with stand-in brokers: elections from the ISR, epochs, unclean
election, ISR changes and the preferred leader, with no socket and no event loop."""

from __future__ import annotations

from minikafka.config import BrokerConfig
from minikafka.controller import NO_LEADER, Controller
from minikafka.metadata import ClusterMetadata, PartitionInfo, TopicInfo
from minikafka.replica.peers import Peers


class StandIn:
    """A broker as the controller sees it: it only hears partition changes."""

    def __init__(self, node_id: int):
        self.node_id, self.heard = node_id, []

    def on_partition_change(self, topic, info):
        self.heard.append((topic, info.index, info.leader, info.leader_epoch, list(info.isr)))


def cluster_of(*ids: int, unclean: bool = False):
    hosts = {i: StandIn(i) for i in ids}
    metadata = ClusterMetadata(BrokerConfig({"unclean.leader.election.enable": unclean}))
    info = PartitionInfo(0, [1, 2, 3], 1, [1, 2, 3])
    metadata.topics["t"] = TopicInfo("t", "00000000-0000-0000-0000-000000000001", [info])
    controller = Controller(metadata, Peers(hosts))
    controller.elect_controller()
    return controller, hosts, info


def test_the_controller_is_the_lowest_live_broker():
    controller, _hosts, _ = cluster_of(2, 3)
    assert controller.metadata.controller_id == 2


def test_a_leaving_leader_hands_over_to_the_next_in_sync_replica_with_a_new_epoch():
    controller, hosts, info = cluster_of(1, 2, 3)
    del hosts[1]  # broker 1 stops
    controller.broker_leaving(1)
    assert (info.leader, info.leader_epoch, info.isr) == (2, 1, [2, 3])
    assert hosts[2].heard[-1] == ("t", 0, 2, 1, [2, 3])  # the new leader was told


def test_with_no_in_sync_replica_alive_the_partition_goes_offline_unless_unclean_election_is_on():
    for unclean, expected_leader in ((False, NO_LEADER), (True, 3)):
        controller, hosts, info = cluster_of(1, 3, unclean=unclean)
        info.isr = [1]  # only the leader was in sync
        del hosts[1]
        controller.broker_leaving(1)
        assert info.leader == expected_leader, f"unclean={unclean}"


def test_a_caught_up_preferred_replica_gets_its_leadership_back():
    controller, _hosts, info = cluster_of(1, 2, 3)
    controller.shrink_isr("t", info, 1)
    controller.elect_leader("t", info, exclude=(1,))
    assert info.leader == 2 and info.isr == [2, 3]
    controller.expand_isr("t", info, 1)  # broker 1 caught up
    assert info.isr == [1, 2, 3] and info.leader == 1, "the preferred (first) replica leads again"


def test_the_last_in_sync_replica_is_never_dropped_from_the_isr():
    controller, _hosts, info = cluster_of(1, 2, 3)
    info.isr = [2]
    controller.shrink_isr("t", info, 2)
    assert info.isr == [2]

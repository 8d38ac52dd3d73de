"""A broker as its own process, beside a KRaft controller quorum (``minikafka broker``).

The embedded ``Cluster`` runs its brokers in one process around one ``Controller`` object.
Here one ``Broker`` (the same class) runs alone in a process, behind its own listener, and
learns everything else over TCP from the controllers of ``minikafka.kraft``, as a Kafka 4
broker does (KIP-500, KIP-631):

- ``quorum_client``: finding the active controller (DescribeQuorum, following NOT_CONTROLLER)
  and calling it; raw frames are forwarded as they came;
- ``observer``: following ``__cluster_metadata`` as a Raft observer (Fetch with the broker's
  id, FetchSnapshot when told) and applying the committed records to the broker's metadata;
- ``process``: the broker process itself: registration with an incarnation id, heartbeats,
  fencing, controlled shutdown on SIGTERM, requests that change metadata forwarded to the
  active controller;
- ``cli``: ``python -m minikafka broker --node-id N --listen H:P --controllers 1@H:P,...``.

``minikafka.processes.ProcessCluster`` starts controllers and brokers as processes.
"""

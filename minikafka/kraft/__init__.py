"""A KRaft controller quorum: controllers as separate processes talking Kafka's Raft over TCP.

Kafka keeps its cluster metadata in one replicated log, ``__cluster_metadata``, whose
replicas are the controllers. KIP-595 describes the protocol that elects the quorum's
leader and replicates the log (Vote, BeginQuorumEpoch, EndQuorumEpoch and a follower-driven
Fetch); KIP-630 adds snapshots, KIP-853 a voter set that can change. This package has:

- ``config``: the ``controller.quorum.*`` settings, by Kafka's names;
- ``messages``: the Raft requests and answers as plain objects;
- ``metadata_log``, ``snapshots`` and ``quorum_state``: what a controller keeps on disk;
- ``leader`` and ``raft``: the Raft core, sans I/O (driven by messages and a clock);
- ``records`` and ``brokers``: the metadata records and the broker registrations they make;
- ``image``: the state the committed records build (registrations and ``ClusterMetadata``),
  applied record by record with a delta saying what changed; controllers and brokers use it;
- ``quorum_controller``: the active controller's state machine: registrations, fencing, and
  the topics and partitions (placement, elections, ISR changes by the embedded controller's rules);
- ``admin``: CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders, AlterPartition and
  AllocateProducerIds as the active controller answers them, once their records commit;
- ``wire``: those messages to and from Kafka's wire format (kio);
- ``process`` and ``cli``: one controller as an asyncio process (``minikafka controller``).

The embedded ``Cluster`` does not use this package: its controller is still one object, and
its ``ClusterMetadata`` journals to a file instead of handing its changes to the quorum.
"""

"""Notebook 05's questions: where replicas live, failover, min.insync.replicas, the high watermark, the ISR, unclean
election and reading from a follower."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "replica-placement": Question(
        N_("A topic has three partitions with replication factor 3, on a cluster of three brokers. Which partitions "
           "does each broker hold a copy of?"),
        [N_("One each: a broker holds one partition"),
         N_("All three: each broker has a replica of every partition, and leads about one of them"),
         N_("Only the partitions it leads")],
        answer=1,
        why=N_("Partitions and brokers are not one to one: each partition has a replica on three brokers here, so "
               "every broker holds all three, and the leaders are spread so that each broker leads about one.")),
    "failover-leader": Question(
        N_("The broker that leads partition 0 stops. Which broker leads the partition next?"),
        [N_("One of the in-sync followers, chosen by the controller"),
         N_("The broker with the lowest id, whatever its copy holds"),
         N_("Nobody until the stopped broker comes back: a partition has one leader for life")],
        answer=0,
        why=N_("The controller elects a new leader from the ISR and bumps the leader epoch; clients refresh their "
               "metadata and carry on.")),
    "acks-min-isr": Question(
        N_("Replication factor 3, min.insync.replicas=2, and both followers of a partition are down. What happens "
           "to an acks=1 write and to an acks=all write?"),
        [N_("Both are stored: acks=1 is the default, and the defaults always work"),
         N_("acks=1 is stored; acks=all is refused with NOT_ENOUGH_REPLICAS"),
         N_("Both are refused")],
        answer=1,
        why=N_("acks=1 only needs the leader; acks=all needs min.insync.replicas in-sync copies, and only one is "
               "left. (And acks=all, not 1, is the default of current clients.)")),
    "follower-reads": Question(
        N_("Brokers in racks a, b and c use the rack-aware replica selector; a partition's leader is in rack a. "
           "Where does a consumer with client.rack=c fetch from?"),
        [N_("Always from the leader in rack a: followers never serve reads"),
         N_("From all three brokers in turn"),
         N_("From the follower in rack c, after the leader points it there")],
        answer=2,
        why=N_("Since Kafka 2.4 (KIP-392) the leader answers the first fetch with a preferred read replica; the "
               "consumer then fetches from the follower in its own rack.")),
    "high-watermark": Question(
        N_("The leader has records up to offset 120 and one in-sync follower has up to 100. Up to which offset can "
           "a consumer read?"),
        [N_("Up to 100: the high watermark is the smallest log end offset in the ISR"),
         N_("Up to 120: the leader has them"),
         N_("Nothing until both agree")],
        answer=0,
        why=N_("Consumers only see records below the high watermark, which every in-sync replica already has.")),
    "slow-follower": Question(
        N_("A follower is slowed down for longer than replica.lag.time.max.ms. What happens to it?"),
        [N_("It stays in the ISR and every acks=all write waits for it"),
         N_("It leaves the ISR, and rejoins once it has caught up"),
         N_("The controller deletes its replica")],
        answer=1,
        why=N_("The ISR holds only replicas that keep up, so one sick machine does not slow every write.")),
    "unclean": Question(
        N_("With unclean leader election on, which producer loses acknowledged records?"),
        [N_("The acks=all producer with min.insync.replicas=2"), N_("Neither"), N_("The acks=1 producer")],
        answer=2,
        why=N_("acks=1 lets a lonely leader acknowledge writes no other replica has; the unclean election erases "
               "them.")),
}

RECAP = ("acks-min-isr", "high-watermark", "slow-follower", "unclean")

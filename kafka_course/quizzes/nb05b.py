"""Notebook 05b's questions: the KRaft quorum, controller elections, fencing, the ISR below min.insync.replicas."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "election": Question(
        N_("You SIGKILL the active controller of a three-voter quorum. What happens next?"),
        [N_("Nothing until an operator starts it again: the quorum has no leader"),
         N_("Within a few seconds another voter wins an election in a higher epoch"),
         N_("Every broker stops serving records until a new controller is elected")],
        answer=1, why=N_("A voter that stops hearing its leader stands after the fetch timeout; two of three "
                         "voters are a majority, so one wins a new epoch. Brokers keep serving records meanwhile.")),
    "fenced": Question(
        N_("A broker's process runs, clients reach it, but its links to every controller are cut. What does the "
           "cluster do?"),
        [N_("Nothing: the broker is alive, so it keeps its leaderships"),
         N_("It elects a new active controller"),
         N_("After broker.session.timeout.ms the controller fences it and moves its leaderships to in-sync "
            "replicas")],
        answer=2, why=N_("The controller knows a broker is alive only from its heartbeats; without them it fences "
                         "the broker, whatever clients see.")),
    "cut-followers": Question(
        N_("A topic has three replicas and min.insync.replicas=2. The links between its leader and both followers "
           "are cut; clients still reach all three brokers. What do acks=all writes get once the leader has shrunk "
           "the ISR to itself?"),
        [N_("NOT_ENOUGH_REPLICAS, and the high watermark stops"),
         N_("Success: the leader alone is enough once the followers are out of the ISR"),
         N_("The controller moves the leadership to a follower, since clients reach it")],
        answer=0, why=N_("acks=all needs min.insync.replicas copies in sync; with one, the leader refuses the write "
                         "and commits nothing new. The leader still heartbeats to the controller, so nothing moves "
                         "its leadership.")),
    "majority": Question(
        N_("How many controllers of a five-voter quorum can fail while metadata can still change?"),
        [N_("One"),
         N_("Four, as long as one is left"),
         N_("Two")],
        answer=2, why=N_("A change needs a majority of the voters: three of five, so two may be down.")),
    "observers": Question(
        N_("In KRaft, what are the brokers to the metadata log __cluster_metadata?"),
        [N_("Observers: they fetch the log but do not vote"),
         N_("Voters, like the controllers"),
         N_("Nothing: the controller sends each broker requests, as with ZooKeeper")],
        answer=0, why=N_("Brokers register, send heartbeats and fetch the metadata log; only the controllers "
                         "vote.")),
    "zookeeper": Question(
        N_("Why did a controller failover take longer with ZooKeeper as clusters grew?"),
        [N_("ZooKeeper allowed only one broker per cluster"),
         N_("The new controller first had to read every partition's state from ZooKeeper"),
         N_("ZooKeeper elections need a full restart of every broker")],
        answer=1, why=N_("A KRaft controller already holds the whole metadata log in memory; a ZooKeeper-era "
                         "controller had to load it before it could act.")),
    "elr": Question(
        N_("What does the ELR (eligible leader replicas, KIP-966) keep?"),
        [N_("The replicas that left the ISR below min.insync.replicas but still hold every committed record"),
         N_("The brokers that may become active controller"),
         N_("The followers that are slowest, to move them to another rack")],
        answer=0, why=N_("Such a replica may lead without losing committed records, so losing the leader next does "
                         "not force an unclean election.")),
}

RECAP = ("majority", "observers", "zookeeper", "elr")

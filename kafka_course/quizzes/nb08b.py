"""Notebook 08b's questions: dry runs, moving replicas, what the wire shows, ACLs and their errors."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "dry-run": Question(
        N_("You run `consumer-groups --reset-offsets --to-datetime ...` without `--execute`. What changes in the "
           "cluster?"),
        [N_("The group's offsets move to that time"),
         N_("The records written after that time are deleted"),
         N_("Nothing: the tool prints the plan")],
        answer=2, why=N_("Without --execute the tool is a dry run: it shows the offsets it would commit and changes "
                         "nothing.")),
    "move-replicas": Question(
        N_("Partition 0 moves from two brokers to two others, one of them new. How many replicas does it list "
           "while the move runs?"),
        [N_("Two: the old copy is removed first, then the new one is added"),
         N_("Three for a while: the new copy is added and catches up, then the old one goes"),
         N_("None: the partition is offline during the move")],
        answer=1, why=N_("A move adds the new replicas first, waits for them to join the ISR, then removes the "
                         "ones not in the plan, so the partition is never less safe than before.")),
    "wire": Question(
        N_("Which listener keeps a SASL/PLAIN password from someone on the network path?"),
        [N_("SASL_SSL"),
         N_("SASL_PLAINTEXT"),
         N_("Both: SASL hides passwords")],
        answer=0, why=N_("PLAIN sends the password as it is; only TLS hides it. SCRAM never sends it, but without "
                         "TLS the records stay readable.")),
    "group-acl": Question(
        N_("billing may Read and Describe the topic orders and Read the group billing. It reads orders in the "
           "group analytics. What happens?"),
        [N_("It reads: the topic permission is enough"),
         N_("TOPIC_AUTHORIZATION_FAILED"),
         N_("GROUP_AUTHORIZATION_FAILED")],
        answer=2, why=N_("A consumer needs Read on its group as well as on the topic; billing may use only the "
                         "group billing.")),
    "create-topic": Question(
        N_("billing has no Create permission and tries to create a topic. Which error does CreateTopics answer?"),
        [N_("CLUSTER_AUTHORIZATION_FAILED: creating topics is a cluster operation"),
         N_("TOPIC_AUTHORIZATION_FAILED"),
         N_("SASL_AUTHENTICATION_FAILED")],
        answer=1, why=N_("Create on the cluster or on the topic's name allows it; without either, Kafka refuses that "
                         "topic with TOPIC_AUTHORIZATION_FAILED. The login itself worked.")),
    "authn-authz": Question(
        N_("orders-app logs in with the right password and gets TOPIC_AUTHORIZATION_FAILED. What is wrong?"),
        [N_("No ACL allows User:orders-app to write that topic"),
         N_("The password"),
         N_("The TLS certificate")],
        answer=0, why=N_("The login worked (a wrong password gives SASL_AUTHENTICATION_FAILED); authorization is a "
                         "separate check.")),
}

RECAP = ("authn-authz", "create-topic", "group-acl")

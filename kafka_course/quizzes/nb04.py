"""Notebook 04's questions: commits and crashes, groups and idle members, strategies, lag and KIP-848."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "auto-commit-crash": Question(
        N_("A consumer with auto-commit every 60 s handles half the sign-ups, then its process dies before the "
           "first auto-commit. How many of those records does the restarted consumer handle a second time?"),
        [N_("None: auto-commit saved the position when the process died"),
         N_("Only the last batch, the one in flight when it died"),
         N_("All of them: nothing was committed, so the group starts again from the beginning")],
        answer=2,
        why=N_("Auto-commit commits on a timer (and in close(), which a crash never reaches); the timer had not "
               "fired, so the group has no committed offset and starts again.")),
    "idle-member": Question(
        N_("A group of four members reads a topic with three partitions. What happens to the fourth member?"),
        [N_("It stays in the group with no partition, a spare that takes over when a member leaves"),
         N_("The coordinator removes it from the group, since it has nothing to do"),
         N_("It shares a partition with another member, and they split that partition's records")],
        answer=0,
        why=N_("A partition has one owner in a group, so the partition count caps the busy members; the extra one "
               "keeps heartbeating and gets a partition at the next rebalance that frees one.")),
    "kip848-join": Question(
        N_("With `group.protocol=consumer`, a third member joins two members that own three of six partitions "
           "each. What do the two members already there do?"),
        [N_("Stop all their partitions until the whole group has rebalanced"),
         N_("Give up one partition each, when their heartbeat tells them, and keep consuming the other two"),
         N_("Nothing: the newcomer waits until one of them leaves")],
        answer=1,
        why=N_("The broker computes the assignment and tells each member, in its own heartbeat, what to give up; "
               "there is no group-wide barrier.")),
    "cooperative": Question(
        N_("Which classic assignment strategy lets members keep consuming their other partitions during a rebalance?"),
        [N_("range"), N_("roundrobin"), N_("cooperative-sticky")],
        answer=2,
        why=N_("Cooperative rebalancing revokes only the partitions that move; the eager strategies revoke "
               "everything first.")),
    "lag-grows": Question(
        N_("A group's lag grows steadily over an hour. What does that tell you?"),
        [N_("The group cannot keep up with the producers"), N_("A rebalance is in progress"),
         N_("Records are being lost")],
        answer=0,
        why=N_("Lag is records waiting; steady growth means input outpaces processing. A spike that recovers is "
               "more typical of a rebalance.")),
}

RECAP = ("auto-commit-crash", "idle-member", "cooperative", "lag-grows")

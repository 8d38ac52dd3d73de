"""Network faults between nodes, and a Jepsen-style check of what survived them.

Each ordered pair of nodes gets a TCP proxy (a :class:`Link`); a :class:`Network` makes
them all and hands each node the addresses to use for its peers. At runtime a link
passes traffic, is cut as a **partition** (bytes held, nothing arrives, connections time
out as with a lost route), is cut by **reset** (connections closed), **delays** each
direction by N ms ± jitter, or **drops** a fraction of new connections::

    from minikafka.netfault import Network
    with Network({"b1": 19092, "b2": 19093}, clients=["client"]) as net:
        net.peers("b1")             # {"b2": "127.0.0.1:<proxy port>"}
        net.partition("b1", "b2")   # both ways; one_way=True for b1's connections only
        net.delay("client", "b1", 200, jitter_ms=20)
        net.heal()

The control port (``net.serve_control(port)``, or ``minikafka link serve``) takes one
command per line on 127.0.0.1 and answers one line, ``ok [json]`` or ``error ...``:

    partition A B [one-way]      reset A B [one-way]      isolate A [reset]
    delay A B MS [JITTER] [request|response]              drop A B FRACTION
    heal [A B]                   status                   routes

From a shell: ``minikafka link --control 127.0.0.1:PORT partition b1 c2`` (or
``python -m minikafka link ...``). :mod:`minikafka.netfault.history` records produce
attempts and checks the data read back (no acknowledged record lost or duplicated).
"""

from .history import Check, History, check
from .network import Network
from .proxy import Link
from .rules import Direction, LinkRules, Mode

__all__ = ["Check", "Direction", "History", "Link", "LinkRules", "Mode", "Network", "check"]

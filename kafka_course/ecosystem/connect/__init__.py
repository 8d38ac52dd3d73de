"""A Kafka Connect worker that takes the JSON a real Connect cluster takes, over its REST API.

The course's rule for every tool: the real client, the same interface, a small server
behind it, and the real server on the compose path. The client is any HTTP client
(``requests``, ``curl``); the interface is Connect's REST API with its standard
configuration keys; this package is the small server (Kafka's FileStream source and sink,
Confluent's JDBC sink into PostgreSQL, Kafka's single message transforms and converters),
keeping its state in ``connect-configs``, ``connect-offsets`` and ``connect-status`` as
distributed Connect does; docker-compose.yml runs the real worker.

* ``worker``: connectors, tasks and states; ``runtime``: one task's thread and client;
* ``plugins`` with ``tasks`` and ``jdbc``: the connectors; ``transforms``; ``converters``;
* ``storage``: the three topics; ``rest`` and ``server``: the HTTP side.
"""

from .server import ConnectServer

__all__ = ["ConnectServer"]

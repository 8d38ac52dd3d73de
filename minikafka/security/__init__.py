"""Security: who a client is (SASL, TLS) and what it may do (ACLs).

Off by default. Kafka's own settings turn it on (``listeners``,
``listener.security.protocol.map``, ``sasl.enabled.mechanisms``, ``ssl.keystore.*``,
``authorizer.class.name``, ``super.users``, ``allow.everyone.if.no.acl.found``; see
``settings``). Every module here is sans-I/O: SASL exchanges take bytes and give bytes
(``sasl``, ``plain``, ``scram``), the authorizer answers yes or no (``authorizer``), and
only ``minikafka.server`` touches sockets (TLS included, through the stdlib ``ssl``).
"""

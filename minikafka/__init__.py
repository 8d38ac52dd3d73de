"""minikafka: a small Kafka-compatible broker in Python, for teaching and testing.

Real Kafka clients (kafka-python, confluent-kafka, aiokafka, kcat) talk to it over
the Kafka wire protocol. ``Cluster`` runs brokers inside your process::

    from minikafka import Cluster
    with Cluster() as cluster:
        print(cluster.bootstrap_servers)
"""

from .cluster import Cluster

__all__ = ["Cluster"]
__version__ = "0.1.0"

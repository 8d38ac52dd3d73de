"""minikafka: a small Kafka-compatible broker in Python, for teaching and testing.

Real Kafka clients (kafka-python, confluent-kafka, aiokafka, kcat) talk to it over
the Kafka wire protocol. ``Cluster`` runs brokers inside your process::

    from minikafka import Cluster
    with Cluster() as cluster:
        print(cluster.bootstrap_servers)
"""

__all__ = ["Cluster"]
__version__ = "0.1.0"


def __getattr__(name: str) -> type:
    # Imported on first use, so that `minikafka --help` and the CLI tools start fast.
    if name == "Cluster":
        from .cluster import Cluster
        return Cluster
    raise AttributeError(f"module 'minikafka' has no attribute {name!r}")

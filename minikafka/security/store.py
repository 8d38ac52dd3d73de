"""ACLs and SCRAM credentials as cluster metadata, the way KRaft keeps them.

In Kafka both live in the metadata log (``AccessControlEntryRecord``,
``UserScramCredentialRecord`` and their removals), so every broker sees them and they
survive a restart. Here they are records of minikafka's metadata journal
(``minikafka.metadata``): this object holds the current state, writes one record per
change through the ``append`` it is given, and rebuilds itself from the snapshot and
the records on start-up.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from .acl import AclBinding, ResourceType
from .scram import ScramCredential

RECORD_TYPES = frozenset({"acl", "remove_acl", "scram", "remove_scram"})


class SecurityRecords:
    def __init__(self, append: Callable[[dict], None] = lambda record: None):
        self._append = append
        self._acls: dict[ResourceType, set[AclBinding]] = defaultdict(set)
        self._credentials: dict[tuple[str, str], ScramCredential] = {}  # (user, mechanism) -> keys

    # -- ACLs ----------------------------------------------------------------------
    def of_type(self, resource_type: ResourceType) -> Iterable[AclBinding]:
        return self._acls.get(resource_type, ())

    def acls(self) -> list[AclBinding]:
        return [acl for group in self._acls.values() for acl in group]

    def add_acl(self, acl: AclBinding) -> None:
        if acl not in self._acls[acl.resource_type]:  # creating an existing ACL changes nothing, as in Kafka
            self._acls[acl.resource_type].add(acl)
            self._append({"type": "acl", "acl": acl.to_record()})

    def remove_acl(self, acl: AclBinding) -> None:
        self._acls[acl.resource_type].discard(acl)
        self._append({"type": "remove_acl", "acl": acl.to_record()})

    # -- SCRAM credentials -----------------------------------------------------------
    def credential(self, user: str, mechanism: str) -> ScramCredential | None:
        return self._credentials.get((user, mechanism))

    def credentials(self) -> dict[tuple[str, str], ScramCredential]:
        return dict(self._credentials)

    def set_credential(self, user: str, mechanism: str, credential: ScramCredential) -> None:
        self._credentials[(user, mechanism)] = credential
        self._append({"type": "scram", "user": user, "mechanism": mechanism, **credential.to_record()})

    def remove_credential(self, user: str, mechanism: str) -> None:
        self._credentials.pop((user, mechanism), None)
        self._append({"type": "remove_scram", "user": user, "mechanism": mechanism})

    # -- persistence (called by minikafka.metadata) ----------------------------------------
    def snapshot(self) -> dict:
        return {"acls": [a.to_record() for a in self.acls()],
                "scram": [{"user": u, "mechanism": m, **c.to_record()} for (u, m), c in self._credentials.items()]}

    def load_snapshot(self, data: dict) -> None:
        for rec in data.get("acls", ()):
            acl = AclBinding.from_record(rec)
            self._acls[acl.resource_type].add(acl)
        for rec in data.get("scram", ()):
            self._credentials[(rec["user"], rec["mechanism"])] = ScramCredential.from_record(rec)

    def replay(self, rec: dict) -> None:
        kind = rec["type"]
        if kind in ("acl", "remove_acl"):
            acl = AclBinding.from_record(rec["acl"])
            if kind == "acl":
                self._acls[acl.resource_type].add(acl)
            else:
                self._acls[acl.resource_type].discard(acl)
        elif kind == "scram":
            self._credentials[(rec["user"], rec["mechanism"])] = ScramCredential.from_record(rec)
        elif kind == "remove_scram":
            self._credentials.pop((rec["user"], rec["mechanism"]), None)

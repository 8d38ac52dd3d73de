"""The registry's errors, with the HTTP status, error code and sentence Confluent Schema Registry uses.

A client (confluent-kafka's ``SchemaRegistryClient`` raises ``SchemaRegistryError``) sees
``{"error_code": 40401, "message": "Subject 'orders-value' not found."}`` with status 404.
"""

from __future__ import annotations


class RegistryError(Exception):
    def __init__(self, status: int, code: int, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def body(self) -> dict:
        return {"error_code": self.code, "message": self.message}


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def version_not_found(version: object) -> RegistryError:
    return RegistryError(404, 40402, f"Version {version} not found.")


def schema_not_found(schema_id: int | None = None) -> RegistryError:
    return RegistryError(404, 40403, "Schema not found" if schema_id is None else f"Schema {schema_id} not found")


def subject_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(404, 40404, f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently")


def subject_not_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(404, 40405, f"Subject '{subject}' was not deleted first before being permanently deleted")


def version_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(404, 40406, f"Subject '{subject}' Version {version} was soft deleted."
                                     "Set permanent=true to delete permanently")


def version_not_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(404, 40407, f"Subject '{subject}' Version {version} was not deleted first before being "
                                     "permanently deleted")


def no_subject_compatibility(subject: str) -> RegistryError:
    return RegistryError(404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured")


def incompatible(subject: str, details: list[str]) -> RegistryError:
    # Schema Registry 7.x answers 409 with error code 409 (newer releases say 40901).
    return RegistryError(409, 409, "Schema being registered is incompatible with an earlier schema for subject "
                                   f"\"{subject}\", details: [{', '.join(details)}]")


def invalid_schema(message: str) -> RegistryError:
    return RegistryError(422, 42201, message)


def invalid_version(version: str) -> RegistryError:
    return RegistryError(422, 42202, f"The specified version '{version}' is not a valid version id. "
                                     "Allowed values are between [1, 2^31-1] and the string \"latest\"")


def invalid_compatibility() -> RegistryError:
    return RegistryError(422, 42203, "Invalid compatibility level. Valid values are none, backward, forward, full, "
                                     "backward_transitive, forward_transitive, and full_transitive")


def reference_exists(subject: str, version: int) -> RegistryError:
    return RegistryError(422, 42206, "One or more references exist to the schema "
                                     f"{{magic=1,keytype=SCHEMA,subject={subject},version={version}}}.")

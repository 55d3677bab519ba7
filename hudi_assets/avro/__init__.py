"""Hudi's Avro timeline metadata: our copies of Hudi's schemas and the container files holding them."""

from hudi_assets.avro.container import deserialize_any, deserialize_metadata, serialize_metadata
from hudi_assets.avro.schemas import NAMESPACE, SCHEMAS, java_schema_json, parsed

__all__ = [
    "NAMESPACE",
    "SCHEMAS",
    "deserialize_any",
    "deserialize_metadata",
    "java_schema_json",
    "parsed",
    "serialize_metadata",
]

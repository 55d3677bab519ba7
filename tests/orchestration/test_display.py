"""Readable metadata: byte counts with a readable twin, instants as timestamps in the table's zone."""

from __future__ import annotations

from datetime import UTC, datetime

import dagster as dg
import pandas as pd

from hudi_assets.orchestration.display import bytes_metadata, instant_epoch, instant_metadata, table_value


def test_bytes_are_a_number_and_a_text():
    values = bytes_metadata("bytes_reclaimed", 10 * 1024**2 + 1)
    assert values["bytes_reclaimed"].value == 10 * 1024**2 + 1
    assert values["bytes_reclaimed_text"].value == "10.0 MiB"
    assert bytes_metadata("b", 1023)["b_text"].value == "1023 B"


def test_instants_are_timestamps_in_the_timeline_zone():
    assert instant_epoch("20240101000000123", "UTC") == datetime(2024, 1, 1, 0, 0, 0, 123000, UTC).timestamp()
    assert instant_epoch("20240101000000123", "LOCAL") == datetime(2024, 1, 1, 0, 0, 0, 123000).timestamp()
    assert instant_epoch("00000001", "UTC") is None  # Hudi's initial instant time is not a date
    values = instant_metadata("clean", "20240101000000123", "UTC")
    assert isinstance(values["clean"], dg.TimestampMetadataValue)
    assert values["clean_instant"].value == "20240101000000123"
    assert instant_metadata("clean", None) == {}


def test_tables_keep_their_column_types():
    value = table_value(pd.DataFrame({"file": ["a", "b"], "size_bytes": [3, 4], "age": [1.5, float("nan")],
                                      "ok": [True, False]}))
    assert {c.name: c.type for c in value.schema.columns} == {"file": "string", "size_bytes": "int",
                                                              "age": "float", "ok": "bool"}
    assert value.records[1].data == {"file": "b", "size_bytes": 4, "age": None, "ok": False}

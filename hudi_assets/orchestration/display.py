"""Metadata people can read in the Dagster UI: typed tables, timestamps, bytes with a readable twin."""

from __future__ import annotations

import dagster as dg
import pandas as pd

from hudi_assets.timeline.instant_time import instant_epoch

_COLUMN_TYPES = {"b": "bool", "i": "int", "u": "int", "f": "float"}


def table_value(frame: pd.DataFrame) -> dg.TableMetadataValue:
    """A DataFrame as a typed `MetadataValue.table` (the UI sorts and formats it by column type)."""
    columns = [dg.TableColumn(str(name), _COLUMN_TYPES.get(dtype.kind, "string"))
               for name, dtype in frame.dtypes.items()]
    records = [dg.TableRecord({str(k): None if _missing(v) else _plain(v) for k, v in row.items()})
               for row in frame.to_dict("records")]
    return dg.MetadataValue.table(records, schema=dg.TableSchema(columns))


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _plain(value: object) -> str | int | float | bool:
    """numpy scalars to the Python types TableRecord accepts; anything else as text."""
    if hasattr(value, "item"):
        value = value.item()
    return value if isinstance(value, str | int | float | bool) else str(value)


def readable_bytes(size: int) -> str:
    """1536 -> '1.5 KiB': the text shown beside every byte count (the number stays for plots)."""
    if abs(size) < 1024:
        return f"{int(size)} B"
    value, unit = size / 1024, "KiB"
    for bigger in ("MiB", "GiB", "TiB"):
        if abs(value) < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{value:.1f} {unit}"


def bytes_metadata(name: str, size: int) -> dict[str, dg.MetadataValue]:
    """`name` as an integer (plotted) and `name_text` as '12.3 MiB' (read)."""
    return {name: dg.MetadataValue.int(int(size)),
            f"{name}_text": dg.MetadataValue.text(readable_bytes(size))}


def instant_metadata(name: str, instant: str | None, timezone: str = "LOCAL") -> dict[str, dg.MetadataValue]:
    """An instant as a `MetadataValue.timestamp` (rendered as a date, never plotted) plus its text;
    nothing when there is no instant."""
    if not instant:
        return {}
    epoch = instant_epoch(instant, timezone)
    values = {f"{name}_instant": dg.MetadataValue.text(instant)}
    if epoch is not None:
        values[name] = dg.MetadataValue.timestamp(epoch)
    return values

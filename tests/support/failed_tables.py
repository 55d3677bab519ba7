"""Demo tables with a failed write, its markers in each layout Hudi writers leave, and hudi-rs reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import fastavro
import pyarrow as pa
from hudi import HudiReadOptions, HudiTable

from hudi_assets.demo.generator import DemoTable, generate_table
from hudi_assets.storage import Storage
from support.refdata import shared_path

SMALL = {"commits": 5, "partitions": 2, "files_per_partition": 2, "records_per_file": 3, "bloom_entries": 100}
MARKER_LAYOUTS = ("timeline_server", "direct", "none")


def read_rows(base: str, as_of: str | None = None) -> dict[str, tuple[str, float]]:
    """What hudi-rs returns: record key -> (commit time, fare)."""
    options = HudiReadOptions() if as_of is None else HudiReadOptions().with_as_of_timestamp(as_of)
    batches = HudiTable(base).read(options)
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    return {r["id"]: (r["_hoodie_commit_time"], r["fare"]) for r in rows}


def expected_rows(demo: DemoTable, as_of: str | None = None) -> dict[str, tuple[str, float]]:
    rows = demo.latest_rows if as_of is None else demo.snapshots[as_of]
    return {r["id"]: (r["_hoodie_commit_time"], r["fare"]) for r in rows.values()}


def marker_folder(demo: DemoTable) -> Path:
    return Path(demo.base_path) / ".hoodie" / ".temp" / demo.failed_instant


def use_direct_markers(demo: DemoTable, rename: dict[str, str] | None = None) -> list[str]:
    """Turn the generator's timeline-server markers into DIRECT ones (one empty file per marker, as
    Flink writes them); `rename` swaps marker names. Returns the marker names."""
    folder = marker_folder(demo)
    names = [n for n in (folder / "MARKERS0").read_text().splitlines() if n]
    names = [(rename or {}).get(n, n) for n in names]
    for name in ("MARKERS.type", "MARKERS0"):
        (folder / name).unlink()
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).touch()
    return names


def make_failed_table(root: Path, table_type: str, layout: str, seed: int = 3) -> DemoTable:
    demo = generate_table(Storage(str(root)), table_type, seed=seed, **SMALL)
    if layout == "direct":
        use_direct_markers(demo)
    elif layout == "none":
        for path in sorted(marker_folder(demo).rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        marker_folder(demo).rmdir()
    return demo


def _reference(name: str, named: dict) -> dict:
    path = shared_path("reference", "avro", f"{name}.avsc")
    schema = json.loads(re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.DOTALL))
    return fastavro.parse_schema(schema, named)


def rollback_schemas() -> dict[str, dict]:
    """Hudi's HoodieRollbackPlan and HoodieRollbackMetadata .avsc, parsed by fastavro (or skip)."""
    named: dict = {}
    _reference("HoodieInstantInfo", named)
    return {name: _reference(name, named) for name in ("HoodieRollbackPlan", "HoodieRollbackMetadata")}


def decode_with(path: Path, schema: dict) -> dict:
    """The single record of an Avro container file, read with a reference schema."""
    with path.open("rb") as fh:
        records = list(fastavro.reader(fh, reader_schema=schema))
    assert len(records) == 1
    return records[0]


def clean_schemas() -> dict[str, dict]:
    """Hudi's HoodieCleanerPlan and HoodieCleanMetadata .avsc, parsed by fastavro (or skip)."""
    named: dict = {}
    _reference("HoodieCleanPartitionMetadata", named)
    return {name: _reference(name, named) for name in ("HoodieCleanerPlan", "HoodieCleanMetadata")}

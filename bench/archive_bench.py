"""Archive benchmark: archiving 10,000 instants; reading 100,000 archived entries vs bare fastavro.

Run: .venv/bin/python bench/archive_bench.py
"""

from __future__ import annotations

import io
import json
import tempfile
import time
from pathlib import Path

import fastavro

from hudi_assets.archive import ArchiveConfig, HoodieTimelineArchiver
from hudi_assets.avro import java_schema_json
from hudi_assets.logformat.archived import archive_file_name, encode_archive_file
from hudi_assets.logformat.reader import read_blocks
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config
from hudi_assets.timeline.archived import ArchivedTimeline

SCHEMA = java_schema_json("HoodieArchivedMetaEntry")
STAT = {"fileId": "f", "path": "p/f.parquet", "prevCommit": "null", "numWrites": 10, "numDeletes": 0,
        "numUpdateWrites": 1, "numInserts": 9, "totalWriteBytes": 100, "totalWriteErrors": 0,
        "partitionPath": "p", "totalLogRecords": 0, "fileSizeInBytes": 100}


def _table(root: Path, commits: int) -> HoodieTable:
    storage = Storage(str(root))
    write_table_config(storage, {"hoodie.table.name": "b", "hoodie.table.type": "COPY_ON_WRITE",
                                 "hoodie.table.version": "6"})
    body = json.dumps({"partitionToWriteStats": {"p": [STAT] * 4}, "compacted": False,
                       "extraMetadata": {}, "operationType": "UPSERT"}).encode()
    hoodie = root / ".hoodie"
    for i in range(commits):
        t = f"2024010{1 + i // 86_400_000}{i % 86_400_000:09d}"
        (hoodie / f"{t}.commit.requested").write_bytes(b"")
        (hoodie / f"{t}.inflight").write_bytes(body)
        (hoodie / f"{t}.commit").write_bytes(body)
    return HoodieTable(storage)


def bench_archive(root: Path, n: int = 10_000) -> None:
    table = _table(root, n + 20)
    start = time.perf_counter()
    result = HoodieTimelineArchiver(table, ArchiveConfig()).archive_if_required()
    took = time.perf_counter() - start
    archived = len(result.selection.instants)
    print(f"archive {archived} instants ({result.records_written} entries): {took:.2f}s, "
          f"{took / archived * 1e3:.3f} ms/instant")


def bench_read(root: Path, n: int = 100_000) -> None:
    storage = Storage(str(root))
    write_table_config(storage, {"hoodie.table.name": "r", "hoodie.table.type": "COPY_ON_WRITE",
                                 "hoodie.table.version": "6"})
    payload = {"partitionToWriteStats": {"p": [{**STAT, "totalLogFiles": None}]},
               "extraMetadata": {"ROLLING_STAT": ""}, "version": None, "operationType": "UPSERT"}
    records = [{"commitTime": f"{i:017d}", "actionType": "commit", "actionState": "COMPLETED",
                "version": None,
                "stateTransitionTime": f"{i:017d}", "hoodieCommitMetadata": payload} for i in range(n)]
    for k in range(10):
        part = records[k * n // 10:(k + 1) * n // 10]
        storage.write(f".hoodie/archived/{archive_file_name(k + 1)}", encode_archive_file(part, SCHEMA, 10))
    table = HoodieTable(storage)
    start = time.perf_counter()
    count = sum(1 for _ in ArchivedTimeline.load(table).entries())
    ours = time.perf_counter() - start
    writer = fastavro.parse_schema(json.loads(SCHEMA))
    start = time.perf_counter()
    bare = 0
    for f in sorted((root / ".hoodie/archived").iterdir()):
        for block in read_blocks(f.read_bytes()):
            content = io.BytesIO(block.content)
            content.read(4)
            for _ in range(int.from_bytes(content.read(4), "big")):
                size = int.from_bytes(content.read(4), "big")
                fastavro.schemaless_reader(io.BytesIO(content.read(size)), writer)
                bare += 1
    floor = time.perf_counter() - start
    print(f"read {count} archived entries: {count / ours:,.0f} entries/s ({ours:.2f}s); "
          f"bare fastavro {bare / floor:,.0f} entries/s ({floor:.2f}s); ratio {ours / floor:.2f}x")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        bench_archive(Path(a))
        bench_read(Path(b))

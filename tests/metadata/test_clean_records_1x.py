"""What a clean records in the metadata table of a Hudi 1.x table (issue 24), per index: column_stats
stubs for every deleted file over the column_stats definition's source fields, `expr_index_*`
records per definition in `.hoodie/.index_defs/index.json`, nothing for partition_stats, record_index
and the secondary indexes; a partition hudi-assets cannot keep in step is refused before any delete."""

from __future__ import annotations

import json

import pytest
from support.refdata import params_or_skip, table_zips, unzip_table

from hudi_assets.exceptions import UnsupportedTableError
from hudi_assets.metadata.clean_records import clean_records, refuse_unknown_partitions
from hudi_assets.metadata.payloads import NULL_VALUE_TYPE
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import load_table_config, write_table_config

V9_COW = [n for n in table_zips(9) if n.endswith("cow__v9_txns_simple_meta")]
BASE = "c7bbe63e-fa43-40ba-94a9-03158165edc6-0_0-52-126_20260307162440672.parquet"
LOG = ".c7bbe63e-fa43-40ba-94a9-03158165edc6-0_20260307162441000.log.1_0-1-1"


def _with_indexes(base, definitions: dict, partitions: list[str]) -> HoodieTable:
    storage = Storage(str(base))
    index = json.loads(storage.read(".hoodie/.index_defs/index.json"))
    index["indexDefinitions"].update(definitions)
    storage.write(".hoodie/.index_defs/index.json", json.dumps(index).encode())
    props = dict(load_table_config(storage).props)
    props["hoodie.table.metadata.partitions"] += "," + ",".join(partitions)
    write_table_config(storage, props)
    return HoodieTable(storage)


def _clean(partition: str, names: list[str]) -> dict:
    return {"partitionMetadata": {partition: {"partitionPath": partition, "deletePathPatterns": names,
                                              "isPartitionDeleted": False}}}


@pytest.mark.parametrize("name", params_or_skip(V9_COW, "the v9 table with a metadata table"))
def test_clean_records_of_a_v9_table_per_index(name, tmp_path):
    base = unzip_table(name, tmp_path)
    table = _with_indexes(base, {
        "expr_index_day": {"indexName": "expr_index_day", "indexType": "column_stats",
                                 "indexFunction": "from_unixtime", "sourceFields": ["txn_ts"]},
        "expr_index_acc": {"indexName": "expr_index_acc", "indexType": "bloom_filters",
                                 "indexFunction": "lower", "sourceFields": ["account_id"]},
    }, ["expr_index_day", "expr_index_acc"])
    refuse_unknown_partitions(table)  # every partition is kept in step or left alone as Hudi does
    records = clean_records(table, _clean("region=us", [BASE, LOG]), "20260307170000000")
    by_partition: dict[str, list] = {}
    for record in records:
        by_partition.setdefault(record.partition, []).append(record)
    assert set(by_partition) == {"files", "column_stats", "expr_index_day", "expr_index_acc"}
    source_fields = json.loads((base / ".hoodie/.index_defs/index.json").read_text())[
        "indexDefinitions"]["column_stats"]["sourceFields"]
    stats = [r.fields["ColumnStatsMetadata"] for r in by_partition["column_stats"]]
    assert sorted((s["fileName"], s["columnName"]) for s in stats) == sorted(
        (f, c) for f in (BASE, LOG) for c in source_fields)  # log files too, unlike 0.15
    assert all(s["isDeleted"] and s["valueType"] == NULL_VALUE_TYPE for s in stats)
    day = [r.fields["ColumnStatsMetadata"] for r in by_partition["expr_index_day"]]
    assert sorted((s["fileName"], s["columnName"]) for s in day) == [(LOG, "txn_ts"), (BASE, "txn_ts")]
    [bloom] = by_partition["expr_index_acc"]  # base files only
    assert bloom.fields["BloomFilterMetadata"]["isDeleted"]


@pytest.mark.parametrize("name", params_or_skip(V9_COW, "the v9 table with a metadata table"))
def test_an_index_a_clean_cannot_keep_in_step_is_refused(name, tmp_path):
    base = unzip_table(name, tmp_path)
    table = _with_indexes(base, {"expr_index_x": {"indexName": "expr_index_x",
                                                        "indexType": "vector", "sourceFields": ["a"]}},
                          ["expr_index_x", "vector_index_y"])
    with pytest.raises(UnsupportedTableError, match="expr_index_x, vector_index_y"):
        refuse_unknown_partitions(table)


@pytest.mark.parametrize("name", params_or_skip(V9_COW, "the v9 table with a metadata table"))
def test_a_clean_reads_the_index_definitions_once(name, tmp_path, monkeypatch):
    """The refusal and the clean's records judge by one read of the index definitions (as Hudi's meta
    client holds its index metadata)."""
    table = HoodieTable(str(unzip_table(name, tmp_path)))
    read = []
    reading = table.storage.read

    def recording(rel, *args, **kwargs):
        read.append(rel)
        return reading(rel, *args, **kwargs)

    monkeypatch.setattr(table.storage, "read", recording)
    refuse_unknown_partitions(table)
    assert clean_records(table, _clean("region=us", [BASE, LOG]), "20260307170000000")
    assert read.count(".hoodie/.index_defs/index.json") == 1

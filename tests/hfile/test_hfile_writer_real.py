"""write_hfile against HFiles written by Java: HBase's reference files and a real metadata table.

Every comparison is of whole files, byte for byte: GZ blocks included, since our deflate settings
produce exactly the bytes of Java's `Deflater` behind HBase's gzip codec.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hudi import HudiTable
from support.hfile_layout import block_kinds
from support.hfile_references import DEEP_INDEX_CHUNK_SIZE, DEEP_INDEX_MIN_ENTRIES, named, reference_params
from support.refdata import unzip_table

from hudi_assets.hfile import HUDI_COMPARATOR, HFileReader
from hudi_assets.hfile.format import RESERVED_FILE_INFO_PREFIX
from hudi_assets.hfile.writer import write_hfile
from hudi_assets.logformat import BlockType, read_blocks

pytestmark = pytest.mark.shared

V8_TABLE = "quickstart_trips_table__mor__avro__v8_trips_8i3u1d"
HBASE_KEYS = {b"KEY_VALUE_VERSION", b"MAX_MEMSTORE_TS_KEY"}


def _user_file_info(reader: HFileReader) -> dict[bytes, bytes]:
    """The file-info entries a writer's caller supplies (HBase adds the rest itself)."""
    return {k: v for k, v in reader.file_info.items()
            if not k.startswith(RESERVED_FILE_INFO_PREFIX) and k not in HBASE_KEYS}


def _meta_blocks(reader: HFileReader) -> dict[bytes, bytes]:
    return {name: reader.meta_block(name) or b"" for name in reader.meta_block_names}


@pytest.mark.parametrize("ref", reference_params())
def test_writing_the_readme_content_reproduces_each_reference_file(ref):
    """Entries generated from the README, file info and bloom meta block copied: the same bytes."""
    real = ref.path.read_bytes()
    reader = HFileReader(real)
    deep = ref.variant == "large_keys_deep_index"
    ours = write_hfile(
        ref.expected_entries(),
        block_size=ref.block_size or 1024 * 1024,
        compression=ref.compression or "GZ",
        file_info=_user_file_info(reader),
        meta_blocks=_meta_blocks(reader),
        comparator_class_name=reader.trailer.comparator_class_name,
        **({"max_index_chunk_size": DEEP_INDEX_CHUNK_SIZE, "min_index_num_entries": DEEP_INDEX_MIN_ENTRIES}
           if deep else {}),
    )
    assert block_kinds(ours) == block_kinds(real)
    assert HFileReader(ours).trailer == reader.trailer
    assert ours == real


def test_structure_matches_the_16kb_gz_reference_under_hudis_comparator():
    real = named("hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile")
    reader = HFileReader(real.path.read_bytes())
    ours = HFileReader(write_hfile(real.expected_entries(), block_size=16 * 1024,
                                   file_info=_user_file_info(reader), meta_blocks=_meta_blocks(reader)))
    assert set(ours.file_info) == set(reader.file_info)
    assert ours.file_info == reader.file_info
    assert ours.trailer.comparator_class_name == HUDI_COMPARATOR
    assert [(e.key, e.offset, e.size) for e in ours.data_block_index()] == [
        (e.key, e.offset, e.size) for e in reader.data_block_index()]


@pytest.fixture(scope="module")
def v8_table(tmp_path_factory) -> Path:
    return unzip_table(V8_TABLE, tmp_path_factory.mktemp("v8"))


def _mdt_hfiles(table: Path) -> list[Path]:
    return sorted((table / ".hoodie" / "metadata").glob("*/*.hfile"))


def test_metadata_table_base_files_are_reproduced(v8_table):
    """Base files Hudi wrote through HBase 2.4.9 (1 MiB blocks, GZ, its comparator, bloom filter)."""
    paths = _mdt_hfiles(v8_table)
    assert len(paths) > 20
    for path in paths:
        real = path.read_bytes()
        reader = HFileReader(real, name=str(path))
        assert reader.trailer.comparator_class_name == HUDI_COMPARATOR
        ours = write_hfile(reader.entries(), file_info=_user_file_info(reader),
                           meta_blocks=_meta_blocks(reader))
        assert ours == real, path.name


def test_metadata_table_log_hfile_data_blocks_are_reproduced(v8_table):
    """HFILE_DATA log blocks: an HFile with only the schema in its file info and no meta block."""
    contents = [block.content
                for path in sorted((v8_table / ".hoodie" / "metadata").glob("*/.*.log.*"))
                for block in read_blocks(path.read_bytes(), str(path))
                if block.block_type == BlockType.HFILE_DATA]
    assert len(contents) > 20
    for content in contents:
        reader = HFileReader(content)
        assert set(_user_file_info(reader)) == {b"schema"}
        assert write_hfile(reader.entries(), file_info=_user_file_info(reader)) == content


def _file_slices(table: Path) -> list[tuple[str, str]]:
    return sorted((s.partition_path, s.base_file_name) for s in HudiTable(str(table)).get_file_slices())


def test_hudi_rs_reads_a_files_partition_base_file_we_laid_out_differently(tmp_path):
    """hudi-rs lists file slices from the metadata table's `files` partition: rewritten uncompressed
    with tiny blocks and a two-level index, it lists the same slices; drop a record and it does not."""
    table = unzip_table(V8_TABLE, tmp_path)
    expected = _file_slices(table)
    latest = max((table / ".hoodie" / "metadata" / "files").glob("files-*.hfile"),
                 key=lambda path: path.stem.rsplit("_", 1)[1])  # by the writing instant
    reader = HFileReader(latest.read_bytes())
    cells = list(reader.entries())
    assert len({key for key, _ in cells}) > 2

    def rewrite(entries):
        data = write_hfile(entries, block_size=64, compression="NONE", file_info=_user_file_info(reader),
                           meta_blocks=_meta_blocks(reader), max_index_chunk_size=64, min_index_num_entries=2)
        assert HFileReader(data).index_levels == 2
        latest.write_bytes(data)

    rewrite(cells)
    assert _file_slices(table) == expected
    rewrite([cell for cell in cells if cell[0] != b"city=chennai"])
    assert [p for p, _ in _file_slices(table)] == [p for p, _ in expected if p != "city=chennai"]

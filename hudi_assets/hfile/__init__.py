"""HBase HFile format version 3, as Apache Hudi 0.14/0.15 writes it through HBase 2.4.9.

Hudi's metadata table stores its base files as HFiles and its log files carry HFILE_DATA blocks
whose content is an HFile too. The reader and writer follow HBase's `HFileReaderImpl`,
`HFileWriterImpl`, `HFileBlock`, `HFileBlockIndex`, `FixedFileTrailer` and `HFileInfo`, and Hudi's
`HoodieAvroHFileWriter` / `HoodieHFileDataBlock` for what Hudi puts in them: one cell per record,
the record key as row, empty family and qualifier, no tags, memstore timestamp 0.
"""

from hudi_assets.hfile.format import HUDI_COMPARATOR, Compression
from hudi_assets.hfile.index import IndexEntry
from hudi_assets.hfile.reader import HFileReader
from hudi_assets.hfile.trailer import Trailer
from hudi_assets.hfile.writer import HFileWriter, write_hfile

__all__ = [
    "HUDI_COMPARATOR",
    "Compression",
    "HFileReader",
    "HFileWriter",
    "IndexEntry",
    "Trailer",
    "write_hfile",
]

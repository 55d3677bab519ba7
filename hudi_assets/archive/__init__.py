"""Archival of the active timeline (Hudi 0.15's HoodieTimelineArchiver, timeline layout v1).

`selection` decides which instants leave `.hoodie/` and why each fence stands where it does;
`conversion` turns a state file into a `HoodieArchivedMetaEntry`; `archiver` writes archive files
and deletes archived instants; `merge` merges small archive files and recovers a half-done merge.
"""

from hudi_assets.archive.archiver import ArchiveResult, HoodieTimelineArchiver
from hudi_assets.archive.config import ArchiveConfig, KeepRange
from hudi_assets.archive.selection import ArchiveSelection, Fence, select_instants_to_archive

__all__ = ["ArchiveConfig", "ArchiveResult", "ArchiveSelection", "Fence", "HoodieTimelineArchiver",
           "KeepRange", "select_instants_to_archive"]

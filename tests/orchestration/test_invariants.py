"""The settings shown by the Dagster face come from the registry; pandera validates real frames."""

from __future__ import annotations

import pandas as pd

from hudi_assets.config import WriteConfig
from hudi_assets.orchestration.checks import settings_in_force
from hudi_assets.orchestration.invariants import TIMELINE_SCHEMA, describe, violations


def test_settings_show_aliases_raw_text_defaults_and_inferred_policy():
    config = WriteConfig.load(overrides={"hoodie.archive.min.commits": "40",
                                         "hoodie.clean.fileversions.retained": " 2"})
    assert settings_in_force(config) == {
        "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
        "hoodie.cleaner.commits.retained": "10",
        "hoodie.cleaner.hours.retained": "24",
        "hoodie.cleaner.fileversions.retained": " 2",
        "hoodie.keep.min.commits": "40",
        "hoodie.keep.max.commits": "30",
    }


def test_timeline_rows_name_the_offending_instants():
    frame = pd.DataFrame({"instant": ["20240101000000000", "2024", "20240101000000000"],
                          "action": ["commit"] * 3, "state": ["COMPLETED", "DONE", "INFLIGHT"],
                          "timeline": ["active"] * 3})
    sentences = describe(violations(TIMELINE_SCHEMA, frame), frame)
    assert any(s.startswith("1 instant(s) where instant fails: str_matches") and "(2024)" in s
               for s in sentences)
    assert any(s.startswith("1 instant(s) where state fails: isin") for s in sentences)

"""The retention check reads keys, aliases, defaults, inference and rules from the settings registry."""

from __future__ import annotations

import pytest

from hudi_assets.config import WriteConfig
from hudi_assets.orchestration.invariants import CONFIG_SCHEMA, config_frame, describe, violations


def _sentences(**conf: str) -> list[str]:
    frame = config_frame(WriteConfig.load({"hoodie.table.name": "t"}, overrides=conf))
    failures = violations(CONFIG_SCHEMA, frame)
    return describe(failures, frame) if len(failures) else []


def test_frame_shows_aliases_raw_text_defaults_and_inferred_policy():
    frame = config_frame(WriteConfig.load(overrides={"hoodie.archive.min.commits": "40",
                                                     "hoodie.clean.fileversions.retained": " 2"}))
    assert frame.iloc[0].to_dict() == {
        "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
        "hoodie.cleaner.commits.retained": "10",
        "hoodie.cleaner.hours.retained": "24",
        "hoodie.cleaner.fileversions.retained": " 2",
        "hoodie.keep.min.commits": "40",
        "hoodie.keep.max.commits": "30",
    }


def test_defaults_pass():
    assert _sentences() == []


@pytest.mark.parametrize(("conf", "sentence"), [
    ({"hoodie.cleaner.fileversions.retained": "0"},
     "hoodie.cleaner.fileversions.retained='0' must be an integer >= 1"),
    ({"hoodie.clean.policy": "KEEP_SOME"},
     "hoodie.cleaner.policy='KEEP_SOME' must be one of KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, "
     "KEEP_LATEST_BY_HOURS"),
    ({"hoodie.keep.min.commits": "25", "hoodie.keep.max.commits": "22"},
     "hoodie.keep.min.commits must be < hoodie.keep.max.commits "
     "(hoodie.keep.min.commits=25, hoodie.keep.max.commits=22)"),
    ({"hoodie.cleaner.commits.retained": "25", "hoodie.archive.min.commits": "20"},
     "hoodie.cleaner.commits.retained must be < hoodie.keep.min.commits "
     "(hoodie.cleaner.commits.retained=25, hoodie.keep.min.commits=20)"),
])
def test_violations_name_the_keys_and_values(conf, sentence):
    assert sentence in _sentences(**conf)

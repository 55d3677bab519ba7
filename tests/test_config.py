"""Write config: precedence of the three sources, alternative keys, one clear error per bad value."""

from __future__ import annotations

import pytest

from hudi_assets import config_options as opt
from hudi_assets.config import WriteConfig, parse_overrides
from hudi_assets.exceptions import InvalidConfigError


def test_precedence_table_then_props_file_then_overrides(tmp_path):
    props = tmp_path / "clean.properties"
    props.write_text("# ours\nhoodie.cleaner.commits.retained=5\nhoodie.keep.min.commits = 7\n")
    config = WriteConfig.load({"hoodie.cleaner.commits.retained": "2", "hoodie.keep.max.commits": "9"},
                              str(props), ["hoodie.keep.min.commits=8"])
    assert config.get(opt.CLEANER_COMMITS_RETAINED) == 5
    assert config.get(opt.KEEP_MIN_COMMITS) == 8
    assert config.get(opt.KEEP_MAX_COMMITS) == 9
    assert config.get(opt.COMMITS_ARCHIVAL_BATCH) == 10
    assert config.describe(opt.KEEP_MIN_COMMITS) == "hoodie.keep.min.commits=8 (from --hoodie-conf)"
    assert config.describe(opt.CLEANER_COMMITS_RETAINED) == (
        f"hoodie.cleaner.commits.retained=5 (from --props {props})")
    assert config.describe(opt.COMMITS_ARCHIVAL_BATCH) == "hoodie.commits.archival.batch=10 (default)"


def test_alternative_keys_and_typed_values():
    config = WriteConfig.load(overrides=["hoodie.clean.commits.retained=3",
                                         "hoodie.clean.policy=keep_latest_commits",
                                         "hoodie.archive.merge.enable=TRUE"])
    assert config.get(opt.CLEANER_COMMITS_RETAINED) == 3
    assert config.get(opt.CLEANER_POLICY) == "KEEP_LATEST_COMMITS"
    assert config.get(opt.ARCHIVE_MERGE_ENABLE) is True
    assert config.text(opt.CLEANER_POLICY) == "keep_latest_commits"  # raw, as written
    assert config.describe(opt.CLEANER_COMMITS_RETAINED) == (
        "hoodie.clean.commits.retained=3 (from --hoodie-conf)")


def test_unset_values_are_inferred_before_the_default():
    config = WriteConfig.load(overrides=["hoodie.cleaner.hours.retained=5"])
    assert config.get(opt.CLEANER_POLICY) == "KEEP_LATEST_BY_HOURS"
    assert config.describe(opt.CLEANER_POLICY) == "hoodie.cleaner.policy=KEEP_LATEST_BY_HOURS (inferred)"
    assert config.text(opt.FAIL_ON_TIMELINE_ARCHIVING) == "true"


@pytest.mark.parametrize(("pairs", "option", "message"), [
    (["hoodie.keep.min.commits=ten"], opt.KEEP_MIN_COMMITS,
     r"hoodie\.keep\.min\.commits='ten' \(from --hoodie-conf\): expected an integer >= 1"),
    (["hoodie.archive.min.commits=0"], opt.KEEP_MIN_COMMITS,
     r"hoodie\.archive\.min\.commits='0' \(from --hoodie-conf\): expected an integer >= 1"),
    (["hoodie.clean.max.commits=1_0"], opt.CLEAN_MAX_COMMITS, "expected an integer$"),
    (["hoodie.archive.merge.enable=yes"], opt.ARCHIVE_MERGE_ENABLE, "expected true or false"),
    (["hoodie.cleaner.policy=KEEP_SOME"], opt.CLEANER_POLICY,
     "expected one of KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS"),
])
def test_bad_values_name_key_value_and_source(pairs, option, message):
    with pytest.raises(InvalidConfigError, match=message):
        WriteConfig.load(overrides=pairs).get(option)


def test_bad_overrides_and_missing_props_file(tmp_path):
    with pytest.raises(InvalidConfigError, match="expected key=value"):
        parse_overrides(["novalue"])
    with pytest.raises(InvalidConfigError, match=r"--props .*absent\.properties: cannot be read"):
        WriteConfig.load(props_file=str(tmp_path / "absent.properties"))

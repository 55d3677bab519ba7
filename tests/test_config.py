"""Write config: precedence of the three sources, alternative keys, one clear error per bad value."""

from __future__ import annotations

import pytest

from hudi_assets.config import WriteConfig, parse_overrides
from hudi_assets.exceptions import InvalidConfigError


def test_precedence_table_then_props_file_then_overrides(tmp_path):
    props = tmp_path / "clean.properties"
    props.write_text("# ours\nhoodie.cleaner.commits.retained=5\nhoodie.keep.min.commits = 7\n")
    config = WriteConfig.load({"hoodie.cleaner.commits.retained": "2", "hoodie.keep.max.commits": "9"},
                              str(props), ["hoodie.keep.min.commits=8"])
    assert config.get_int("hoodie.cleaner.commits.retained", 10) == 5
    assert config.get_int("hoodie.keep.min.commits", 20) == 8
    assert config.get_int("hoodie.keep.max.commits", 30) == 9
    assert config.get_int("hoodie.commits.archival.batch", 10) == 10
    assert config.sources["hoodie.keep.min.commits"] == "--hoodie-conf"


def test_alternative_keys_and_typed_values():
    config = WriteConfig.load(overrides=["hoodie.clean.commits.retained=3",
                                         "hoodie.clean.policy=keep_latest_commits",
                                         "hoodie.archive.merge.enable=TRUE"])
    assert config.get_int("hoodie.cleaner.commits.retained", 10, ["hoodie.clean.commits.retained"]) == 3
    assert config.get_enum("hoodie.cleaner.policy", "KEEP_LATEST_COMMITS", ["KEEP_LATEST_COMMITS"],
                           ["hoodie.clean.policy"]) == "KEEP_LATEST_COMMITS"
    assert config.get_bool("hoodie.archive.merge.enable", False) is True


@pytest.mark.parametrize(("pairs", "call", "message"), [
    (["hoodie.keep.min.commits=ten"], lambda c: c.get_int("hoodie.keep.min.commits", 20),
     r"hoodie\.keep\.min\.commits='ten' \(from --hoodie-conf\): expected an integer"),
    (["hoodie.keep.min.commits=-1"], lambda c: c.get_int("hoodie.keep.min.commits", 20, minimum=1),
     "expected an integer >= 1"),
    (["hoodie.archive.merge.enable=yes"], lambda c: c.get_bool("hoodie.archive.merge.enable", False),
     "expected true or false"),
    (["hoodie.cleaner.policy=KEEP_SOME"], lambda c: c.get_enum("hoodie.cleaner.policy", "A", ["A", "B"]),
     "expected one of A, B"),
])
def test_bad_values_name_key_value_and_source(pairs, call, message):
    with pytest.raises(InvalidConfigError, match=message):
        call(WriteConfig.load(overrides=pairs))


def test_bad_overrides_and_missing_props_file(tmp_path):
    with pytest.raises(InvalidConfigError, match="expected key=value"):
        parse_overrides(["novalue"])
    with pytest.raises(InvalidConfigError, match=r"--props .*absent\.properties: cannot be read"):
        WriteConfig.load(props_file=str(tmp_path / "absent.properties"))

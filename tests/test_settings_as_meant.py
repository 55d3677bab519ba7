"""Settings read as the user meant them, from the command line (in-process) and the Python API: a
props file's byte order mark, keys with invisible characters, two names of one setting in one source,
a later source over every name, and Python values in `hoodie_conf`."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from hudi_assets import config_options as opt
from hudi_assets.cli import main
from hudi_assets.demo import demo_table_specs, generate_table
from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable


@pytest.fixture(scope="module")
def demo_cow(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("meant") / "demo_cow"
    generate_table(Storage(str(path)), **demo_table_specs()["demo_cow"])
    return path


@pytest.fixture
def table(demo_cow, tmp_path) -> Path:
    return shutil.copytree(demo_cow, tmp_path / "demo_cow")


def _archive_dry_run(table: Path, *args: str) -> int:
    return main(["archive", "--dry-run", str(table), *args])


def _conf(*pairs: str) -> list[str]:
    return [arg for pair in pairs for arg in ("--hoodie-conf", pair)]


def test_a_byte_order_mark_is_dropped_with_a_warning(table, tmp_path, capsys, caplog):
    props = tmp_path / "bom.properties"
    props.write_bytes(b"\xef\xbb\xbfhoodie.keep.min.commits=25\nhoodie.keep.max.commits=40\n")
    with caplog.at_level(logging.WARNING, logger="hudi_assets.config"):
        assert _archive_dry_run(table, "--props", str(props)) == 0
    assert "(configured 25/40" in capsys.readouterr().out
    assert [r.getMessage() for r in caplog.records] == [
        f"--props {props}: starts with a UTF-8 byte order mark; ignored"]
    assert HoodieTable(str(table), props_file=str(props)).write_config.get(opt.KEEP_MIN_COMMITS) == 25


@pytest.mark.parametrize(("key", "shown"), [
    ("hoodie.cleaner.commits.retained\u200b", "U+200B ZERO WIDTH SPACE"),
    ("\ufeffhoodie.keep.min.commits", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
    ("hoodie.keep.max.\u00a0commits", "U+00A0 NO-BREAK SPACE"),
])
def test_a_key_with_invisible_characters_is_refused_naming_it(table, capsys, key, shown):
    assert _archive_dry_run(table, *_conf(f"{key}=1")) == 2
    err = capsys.readouterr().err
    visible = "".join(c for c in key if c.isascii())
    assert (f"--hoodie-conf: key {key!r} is not a setting: it is {visible} with invisible characters "
            f"({shown})") in err
    with pytest.raises(InvalidConfigError, match=rf"^hoodie_conf: key .* is not a setting: it is {visible}"):
        HoodieTable(str(table), hoodie_conf={key: 1})


def test_a_props_file_key_with_a_non_breaking_space_is_refused(table, tmp_path, capsys):
    props = tmp_path / "nbsp.properties"
    props.write_text("hoodie.keep.min.commits\u00a0=25\n", encoding="utf-8")
    assert _archive_dry_run(table, "--props", str(props)) == 2
    err = capsys.readouterr().err
    assert "is hoodie.keep.min.commits with invisible characters (U+00A0 NO-BREAK SPACE)" in err
    with pytest.raises(InvalidConfigError, match=rf"^props_file {props}: key"):
        HoodieTable(str(table), props_file=str(props))


def test_a_props_file_that_is_not_utf8_is_refused_naming_it(table, tmp_path, capsys):
    props = tmp_path / "latin1.properties"
    props.write_bytes(b"hoodie.table.name=caf\xe9\n")
    assert _archive_dry_run(table, "--props", str(props)) == 2
    assert f"--props {props}: not UTF-8 text (byte 21)" in capsys.readouterr().err


def test_two_names_of_one_setting_with_different_values_in_one_source_are_refused(table, tmp_path, capsys):
    both = ("hoodie.cleaner.commits.retained=5", "hoodie.clean.commits.retained=3")
    message = ("hoodie.cleaner.commits.retained=5 and hoodie.clean.commits.retained=3 set one setting to "
               "different values; keep one of them")
    assert _archive_dry_run(table, *_conf(*both)) == 2
    assert f"--hoodie-conf: {message}" in capsys.readouterr().err
    props = tmp_path / "both.properties"
    props.write_text("\n".join(both) + "\n")
    assert _archive_dry_run(table, "--props", str(props)) == 2
    assert f"--props {props}: {message}" in capsys.readouterr().err
    with pytest.raises(InvalidConfigError, match=f"^hoodie_conf: {message}"):
        HoodieTable(str(table), hoodie_conf=dict(p.split("=") for p in both))
    # The same value under both names is one intent.
    same = HoodieTable(str(table), hoodie_conf={"hoodie.keep.min.commits": "25",
                                                "hoodie.archive.min.commits": 25})
    assert same.write_config.get(opt.KEEP_MIN_COMMITS) == 25


def test_a_later_source_sets_every_name_of_a_setting(table, tmp_path, capsys):
    props = tmp_path / "min.properties"
    props.write_text("hoodie.keep.min.commits=25\nhoodie.keep.max.commits=40\n")
    assert _archive_dry_run(table, "--props", str(props), *_conf("hoodie.archive.min.commits=30")) == 0
    assert "(configured 30/40" in capsys.readouterr().out
    config = HoodieTable(str(table), props_file=str(props),
                         hoodie_conf={"hoodie.archive.min.commits": 30}).write_config
    assert config.describe(opt.KEEP_MIN_COMMITS) == "hoodie.archive.min.commits=30 (from hoodie_conf)"


def test_api_values_may_be_numbers_and_booleans(table):
    config = HoodieTable(str(table), hoodie_conf={"hoodie.cleaner.commits.retained": 3,
                                                  "hoodie.archive.merge.enable": True,
                                                  "hoodie.keep.min.commits": 25.0}).write_config
    assert config.get(opt.CLEANER_COMMITS_RETAINED) == 3
    assert config.get(opt.ARCHIVE_MERGE_ENABLE) is True and config.text(opt.ARCHIVE_MERGE_ENABLE) == "true"
    # A float is taken as written; an integer setting then says what it expects, naming the API's source.
    with pytest.raises(InvalidConfigError, match=r"^hoodie\.keep\.min\.commits='25\.0' \(from hoodie_conf\): "
                                                 r"expected an integer >= 1$"):
        config.get(opt.KEEP_MIN_COMMITS)
    assert HoodieTable(str(table), hoodie_conf={"hoodie.cleaner.commits.retained": 3}).maintenance.archive(
        dry_run=True).selection.keep.configured_min == 20


@pytest.mark.parametrize("value", [None, [3], object()])
def test_api_refuses_other_values_naming_hoodie_conf(table, value):
    with pytest.raises(InvalidConfigError, match=r"^hoodie_conf\['hoodie\.cleaner\.commits\.retained'\]=.*: "
                                                 "expected text, a number or true/false$"):
        HoodieTable(str(table), hoodie_conf={"hoodie.cleaner.commits.retained": value})


def test_properties_split_keys_and_lines_as_java_does():
    from hudi_assets.properties import parse_properties

    # Java separates on = : space tab formfeed and ends lines on \n \r only: U+00A0 and U+2028 stay.
    assert parse_properties("a\u00a0b=1\u20282\u0085\nc d") == {"a\u00a0b": "1\u20282\u0085", "c": "d"}

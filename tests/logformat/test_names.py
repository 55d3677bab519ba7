"""Log file names: parsing and formatting per Hudi's `LOG_FILE_PATTERN`."""

from __future__ import annotations

import pytest

from hudi_assets.logformat import LogFileName


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.3_0-13-9",
            LogFileName("0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0", "20250126040823628", "log", 3, "0-13-9"),
        ),
        (
            ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1",
            LogFileName("0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0", "20250126040823628", "log", 2, "1-0-1"),
        ),
        (".commits_.archive.3_1-0-1", LogFileName("commits", "", "archive", 3, "1-0-1")),
        (".commits_.archive.12", LogFileName("commits", "", "archive", 12, None)),
        (
            ".f1-0_20240101000000000.log.1_0-1-2.cdc",
            LogFileName("f1-0", "20240101000000000", "log", 1, "0-1-2", is_cdc=True),
        ),
    ],
)
def test_parse_and_format_round_trip(name: str, expected: LogFileName) -> None:
    assert LogFileName.parse(name) == expected
    assert expected.format() == name


def test_the_older_cdc_suffix_parses_and_formats_as_the_current_one() -> None:
    parsed = LogFileName.parse(".f1-0_001.log.1_0-1-2-cdc")
    assert parsed is not None and parsed.is_cdc
    assert parsed.format() == ".f1-0_001.log.1_0-1-2.cdc"


def test_text_after_the_pattern_is_ignored_as_in_hudi() -> None:
    assert LogFileName.parse(".f1-0_001.log.1_0-1-2.crc") == LogFileName("f1-0", "001", "log", 1, "0-1-2")


@pytest.mark.parametrize(
    "name",
    [
        "a079bdb3-731c-4894-b855-abfcd6921007-0_0-203-274_20240418173551906.parquet",
        "hoodie.properties",
        "f1-0_001.log.1_0-1-2",
        ".f1-0_001.log",
        ".f1-0_001.log.x_0-1-2",
        ".f1-0-001.log.1_0-1-2",
        ".commits_.archive",
        "mergeArchivePlan",
        "",
    ],
)
def test_other_names_do_not_parse(name: str) -> None:
    assert LogFileName.parse(name) is None


def test_names_that_could_not_be_parsed_back_are_refused() -> None:
    with pytest.raises(ValueError, match="extension"):
        LogFileName("f", "001", "parquet", 1, "0-1-2")
    with pytest.raises(ValueError, match="write token"):
        LogFileName("f", "001", "log", 1, None, is_cdc=True)

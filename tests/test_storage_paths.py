"""Paths inside one table are matched against its base as strings; every spelling that is not
already plain still goes through the full parse, with the same answers and refusals."""

from __future__ import annotations

import pytest

from hudi_assets.exceptions import PathOutsideTableError
from hudi_assets.java_collections import java_string_hash
from hudi_assets.storage import Storage


@pytest.fixture
def storage(tmp_path):
    return Storage(str(tmp_path / "base"))


@pytest.mark.parametrize(("spelling", "expected"), [
    ("p/f", "p/f"), ("p/./f", "p/f"), ("p//f", "p/f"), ("./p/f", "p/f"), ("p/f/", "p/f"),
    ("p/q/../f", "p/f"), (".hoodie/x.commit", ".hoodie/x.commit"),
    ("p/.f_1.log.1_0-1-0", "p/.f_1.log.1_0-1-0"),
    ("p/f#1", "p/f#1"), ("", ""), (".", ""), ("a:b/f", "a:b/f"),
])
def test_relative_spellings(storage, spelling, expected):
    assert storage.relativize(spelling) == expected


@pytest.mark.parametrize("template", ["{base}/{rest}", "file:{base}/{rest}", "file://{base}/{rest}"])
@pytest.mark.parametrize(("rest", "expected"), [
    ("p/f", "p/f"), ("p/./f", "p/f"), ("p//f", "p/f"), ("p/q/../f", "p/f"), ("p/f/", "p/f"),
])
def test_absolute_spellings(storage, template, rest, expected):
    assert storage.relativize(template.format(base=storage.root, rest=rest)) == expected


@pytest.mark.parametrize("template", ["{base}/../x", "file:{base}/../x", "{base}/p/../../x", "p/../../x",
                                      "{base}x/p/f", "s3://{base}/p/f", "ab:c/f"])
def test_outside_is_refused_whatever_the_spelling(storage, template):
    with pytest.raises(PathOutsideTableError):
        storage.relativize(template.format(base=storage.root))


def test_uri_of_plain_and_unplain_paths(storage):
    assert storage.uri("p/f") == storage.uri("p/./f") == f"file:{storage.root}/p/f"
    assert storage.uri("") == f"file:{storage.root}"


def test_s3_spellings_share_the_bucket():
    s3 = Storage("s3://bucket/table")
    for scheme in ("s3", "s3a", "s3n"):
        assert s3.relativize(f"{scheme}://bucket/table/p/f") == "p/f"
    assert s3.uri("p/f") == "s3://bucket/table/p/f"
    with pytest.raises(PathOutsideTableError):
        s3.relativize("s3://other/table/p/f")


@pytest.mark.parametrize(("text", "java"), [
    ("", 0), ("hello", 99162322), ("Aa", 2112), ("BB", 2112), ("déjà vu", 1036280708),
    ("\U0001F600", 1772899), ("2024/01/01", -556081408),
])
def test_java_string_hash_matches_java(text, java):
    assert java_string_hash(text) == java

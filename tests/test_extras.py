"""A feature of a missing extra refuses in one line naming the extra (deltalake's ImportError style)."""

from __future__ import annotations

import sys

import pytest

from hudi_assets.exceptions import HudiInputError, MissingExtraError
from hudi_assets.extras import installed, require


def test_require_names_the_extra_and_is_both_an_import_error_and_bad_input():
    with pytest.raises(MissingExtraError) as raised:
        require("hudi_assets_no_such_module", "zookeeper", "the ZooKeeper lock provider")
    assert str(raised.value) == ("the ZooKeeper lock provider needs hudi_assets_no_such_module, which is not "
                                 "installed: pip install 'hudi-assets[zookeeper]'")
    assert isinstance(raised.value, ImportError) and isinstance(raised.value, HudiInputError)


def test_require_passes_an_installed_module_without_importing_it():
    assert installed("pyarrow") and not installed("hudi_assets_no_such_module")
    assert "tabnanny" not in sys.modules
    require("tabnanny", "core", "anything")  # a standard module nothing here imports
    assert "tabnanny" not in sys.modules

"""`pip install hudi-assets` without extras: the core works (demo tables, a clean's dry run from the
API and the CLI, on the local engine by default) and each feature of an extra says which to install.

Installs the project into a fresh virtualenv with `uv pip install` (uv's cache keeps a rerun to
seconds); skipped when uv is not at hand or PyPI cannot be reached.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[1]
EXTRAS_MODULES = ("pyspark", "dagster", "dagster_pyspark", "pandera", "pandas", "kazoo", "boto3")
ZOOKEEPER = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"
DYNAMODB = "org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider"


def _uv() -> str:
    found = shutil.which("uv") or str(ROOT / ".tools" / "uv" / "bin" / "uv")
    if not os.access(found, os.X_OK):
        pytest.skip("uv is not installed (scripts/bootstrap.sh installs it)")
    return found


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory) -> Path:
    """A virtualenv holding `hudi-assets` installed from this checkout with no extra."""
    uv = _uv()
    venv = tmp_path_factory.mktemp("core") / "venv"
    subprocess.run(["python3.11", "-m", "venv", "--without-pip", str(venv)], check=True)
    # --reinstall-package: build this checkout afresh, never a cached build of it (asserted below).
    install = subprocess.run([uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
                              "--reinstall-package", "hudi-assets", str(ROOT)], cwd=venv,
                             capture_output=True, text=True,
                             env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"})
    if install.returncode != 0:
        if not _pypi_reachable():
            pytest.skip("PyPI is not reachable: cannot install the core into a fresh virtualenv")
        pytest.fail(f"uv pip install failed:\n{install.stderr}")
    return venv


def _run(venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv / "bin" / args[0]), *args[1:]], capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")})


def _files(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.fixture(scope="module")
def demo_table(core_venv, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    written = _run(core_venv, "hudi-assets", "demo", str(out))
    assert written.returncode == 0, written.stderr
    return out / "demo_cow"


def test_the_core_installs_this_checkout_with_only_pyarrow_fastavro_numpy_and_msgspec(core_venv):
    installed = next((core_venv / "lib").glob("python3.11/site-packages/hudi_assets"))
    assert {p.relative_to(installed): p.read_bytes() for p in installed.rglob("*.py")} == {
        p.relative_to(ROOT / "hudi_assets"): p.read_bytes() for p in (ROOT / "hudi_assets").rglob("*.py")}
    code = ("import importlib.util as u; "
            f"print([m for m in {EXTRAS_MODULES!r} if u.find_spec(m)]); "
            "print([m for m in ('pyarrow', 'fastavro', 'numpy', 'msgspec') if not u.find_spec(m)])")
    probe = _run(core_venv, "python", "-c", code)
    assert probe.stdout.split() == ["[]", "[]"], probe.stderr


def test_the_core_cleans_on_the_local_engine_by_default(core_venv, demo_table):
    before = _files(demo_table)
    code = ("import hudi_assets.engine as e; from hudi_assets import HoodieTable, CleanerPlan; "
            f"plan = HoodieTable({str(demo_table)!r}).maintenance.clean(dry_run=True).plan; "
            "assert isinstance(plan, CleanerPlan), plan; "
            "print(type(e.create_engine()).__name__, plan.total_files)")
    api = _run(core_venv, "python", "-c", code)
    assert api.returncode == 0, api.stderr
    engine, planned = api.stdout.split()
    assert engine == "LocalEngine" and int(planned) > 0

    cli = _run(core_venv, "hudi-assets", "clean", "--dry-run", str(demo_table))
    assert cli.returncode == 0, cli.stderr
    assert "KEEP_LATEST_COMMITS" in cli.stdout
    assert _files(demo_table) == before


def test_the_dagster_face_without_its_extra_says_which_to_install(core_venv):
    probe = _run(core_venv, "python", "-c",
                 "from hudi_assets.orchestration.definitions import build_definitions")
    assert probe.returncode == 1
    assert probe.stderr.strip().splitlines()[-1] == (
        "hudi_assets.exceptions.MissingExtraError: hudi_assets.orchestration needs dagster, which is not "
        "installed: pip install 'hudi-assets[dagster]'")


@pytest.mark.parametrize(("args", "extra"), [
    (["--engine", "spark"], "spark"),
    (["--hoodie-conf", f"hoodie.write.lock.provider={ZOOKEEPER}"], "zookeeper"),
    (["--hoodie-conf", f"hoodie.write.lock.provider={DYNAMODB}"], "dynamodb"),
])
def test_a_cli_feature_without_its_extra_exits_2_naming_it(core_venv, demo_table, args, extra):
    before = _files(demo_table)
    cli = _run(core_venv, "hudi-assets", "clean", str(demo_table), *args)
    assert cli.returncode == 2, cli.stderr
    assert cli.stderr.startswith("hudi-assets: error: ")
    assert cli.stderr.strip().endswith(f"pip install 'hudi-assets[{extra}]'")
    assert _files(demo_table) == before  # refused before anything was written


def test_s3_deletes_without_boto3_go_one_by_one_with_a_warning_naming_the_extra(core_venv):
    code = ("import logging; logging.basicConfig(); from hudi_assets.storage_options import s3_batch_client; "
            "print(s3_batch_client({'region': 'us-east-1'}))")
    probe = _run(core_venv, "python", "-c", code)
    assert probe.stdout.strip() == "None", probe.stderr
    assert probe.stderr.strip() == (
        "WARNING:hudi_assets.storage_options:S3 deletes in batches of 1,000 keys needs boto3, which is not "
        "installed: pip install 'hudi-assets[s3]'; deleting one object per request")

"""One config, one set of findings, one wording: the CLI, the Python API and the Dagster check render
the core's findings (`config_options.check`) and differ only by their documented policies: `--strict`
and `strict=True` refuse on a warning; the Dagster face blocks on `retained_below_keep_min`."""

from __future__ import annotations

import dagster as dg
import pytest
from support.builders import demo_table

from hudi_assets import config_options as opt
from hudi_assets.cli import main
from hudi_assets.findings import Finding, SettingsRefusedError, Severity
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.table import HoodieTable

pytestmark = pytest.mark.dagster

WARNED = {"hoodie.cleaner.commits.retained": "25", "hoodie.keep.min.commits": "20"}
REFUSED = {"hoodie.keep.min.commits": "25", "hoodie.keep.max.commits": "22",
           "hoodie.cleaner.commits.retained": "3"}
CHECK = dg.AssetCheckKey(dg.AssetKey(["hudi", "default", "cow", "timeline_snapshot"]),
                         "retention_settings_are_safe")


# A table whose hoodie.properties holds the settings under test: one source, named alike in every face.
DEMO = {"name": "cow", "partitions": 2, "commits": 6, "seed": 3}


def _dagster(path: str) -> dg.AssetCheckEvaluation:
    with dg.instance_for_test() as instance:  # definitions resolve against a live instance
        defs = build_definitions(HudiTableRegistry(base_paths=[path], engine="local"))
        job = defs.resolve_implicit_global_asset_job_def().get_subset(asset_selection=set(),
                                                                      asset_check_selection={CHECK})
        result = job.execute_in_process(instance=instance, raise_on_error=False)
    return next(e.asset_check_evaluation_data for e in result.all_events
                if e.event_type_value == "ASSET_CHECK_EVALUATION")


def _findings_rows(evaluation: dg.AssetCheckEvaluation) -> list[tuple[str, str, str, str]]:
    records = evaluation.metadata["findings_table"].records
    return [(r.data["rule"], r.data["severity"], r.data["keys"], r.data["message"]) for r in records]


def test_a_warning_reads_alike_in_every_face_and_only_the_policies_differ(tmp_path, capsys):
    path = str(demo_table(tmp_path / "cow", "COPY_ON_WRITE", WARNED, **DEMO))
    message = ("hoodie.cleaner.commits.retained must be < hoodie.keep.min.commits: "
               "hoodie.cleaner.commits.retained=25 (from hoodie.properties), "
               "hoodie.keep.min.commits=20 (from hoodie.properties); the archiver raises its minimum to keep "
               "what the cleaner retains")
    finding = Finding("retained_below_keep_min", Severity.WARN, message,
                      ("hoodie.cleaner.commits.retained", "hoodie.keep.min.commits"))
    # The core.
    assert opt.check(HoodieTable(path).write_config) == [finding]
    # CLI: printed, exit 0; --strict refuses, exit 2, nothing but the settings read.
    assert main(["archive", "--dry-run", path]) == 0
    assert f"hudi-assets: warning: {message}\n" in capsys.readouterr().err
    assert main(["clean", "--engine", "local", "--dry-run", "--strict", path]) == 2
    assert capsys.readouterr().err == f"hudi-assets: error: {message} (a warning, refused by --strict)\n"
    # API: returned by check(), logged by the operations; strict=True raises.
    maintenance = HoodieTable(path).maintenance
    assert maintenance.check() == [finding]
    assert maintenance.archive(dry_run=True).selection.keep.configured_min == 20
    with pytest.raises(SettingsRefusedError, match=r"refused by strict=True\)$") as raised:
        maintenance.clean(dry_run=True, strict=True)
    assert raised.value.findings == [finding]
    # Dagster: the same finding, blocking by the face's policy.
    evaluation = _dagster(path)
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
    assert evaluation.description == message
    keys = "hoodie.cleaner.commits.retained, hoodie.keep.min.commits"
    assert _findings_rows(evaluation) == [("retained_below_keep_min", "WARN", keys, message)]


def test_an_error_reads_alike_in_every_face(tmp_path, capsys):
    path = str(demo_table(tmp_path / "cow", "COPY_ON_WRITE", REFUSED, **DEMO))
    message = ("Increase hoodie.keep.max.commits=22 (from hoodie.properties) to be greater than "
               "hoodie.keep.min.commits=25 (from hoodie.properties)")
    assert [f.message for f in opt.check(HoodieTable(path).write_config)] == [message]
    assert main(["archive", "--dry-run", path]) == 2
    assert capsys.readouterr().err == f"hudi-assets: error: {message}\n"
    with pytest.raises(SettingsRefusedError) as raised:
        HoodieTable(path).maintenance.clean(dry_run=True)
    assert str(raised.value) == message
    evaluation = _dagster(path)
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
    assert evaluation.description == message
    assert [row[:2] for row in _findings_rows(evaluation)] == [("keep_min_below_keep_max", "ERROR")]

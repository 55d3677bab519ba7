"""Operations from Dagster: discarding a refused pending clean and rolling back a failed write through
the core's own functions, behind dry_run and the settings guard; failed runs posted to a webhook."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar

import dagster as dg
import pytest

from hudi_assets.clean.cleaner import Cleaner
from hudi_assets.clean.config import CleanConfig
from hudi_assets.config import WriteConfig
from hudi_assets.demo import generate_table
from hudi_assets.orchestration.alerts import ALERT_SENSOR
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.operations import DISCARD_JOB, ROLLBACK_JOB
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable

pytestmark = pytest.mark.dagster

RETENTION = {"hoodie.cleaner.commits.retained": "3", "hoodie.keep.min.commits": "5",
             "hoodie.keep.max.commits": "7"}
UNSAFE = {"hoodie.cleaner.commits.retained": "25", "hoodie.keep.min.commits": "20"}


@pytest.fixture
def base(tmp_path):
    generate_table(Storage(str(tmp_path / "t")), "COPY_ON_WRITE", name="t", partitions=2, commits=8, seed=4)
    return tmp_path / "t"


def _files(base) -> set[str]:
    return {str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()}


def _run(defs: dg.Definitions, instance, job: str, op: str, **config) -> dg.ExecuteInProcessResult:
    return defs.resolve_job_def(job).execute_in_process({"ops": {op: {"config": config}}}, instance=instance,
                                                        raise_on_error=False)


def _pending_clean(base) -> str:
    table = HoodieTable(str(base))
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, overrides=RETENTION))
    cleaner = Cleaner(table, config)
    return cleaner.request(cleaner.plan())


def test_discard_job_removes_a_pending_clean_only_when_not_a_dry_run(base):
    instant = _pending_clean(base)
    with dg.instance_for_test() as instance:
        dry = build_definitions(HudiTableRegistry(base_paths=[str(base)], engine="local"))
        result = _run(dry, instance, DISCARD_JOB, "discard_pending_clean", table="t", instant=instant)
        assert result.success and len(Cleaner.for_table(HoodieTable(str(base))).pending()) == 1
        assert instance.get_run_by_id(result.run_id).tags["hudi/dry_run"] == "true"
        real = build_definitions(HudiTableRegistry(base_paths=[str(base)], engine="local", dry_run=False))
        result = _run(real, instance, DISCARD_JOB, "discard_pending_clean", table="t", instant=instant)
        assert result.success and Cleaner.for_table(HoodieTable(str(base))).pending() == []
        tags = instance.get_run_by_id(result.run_id).tags
    assert tags["hudi/table"] == "t" and tags["hudi/dry_run"] == "false"


def test_rollback_job_rolls_back_a_failed_write_behind_the_settings_guard(base):
    pending = HoodieTable(str(base)).active_timeline.write_timeline().filter_pending().first()
    assert pending is not None
    with dg.instance_for_test() as instance:
        unsafe = build_definitions(HudiTableRegistry(base_paths=[str(base)], engine="local", dry_run=False,
                                                     hoodie_conf=UNSAFE))
        before = _files(base)
        refused = _run(unsafe, instance, ROLLBACK_JOB, "rollback_failed_write", table="t",
                       instant=pending.timestamp)
        assert not refused.success and _files(base) == before
        failure = next(e for e in refused.all_events if e.event_type_value == "STEP_FAILURE")
        assert f"t ({base}): " in failure.step_failure_data.user_failure_data.description
        defs = build_definitions(HudiTableRegistry(base_paths=[str(base)], engine="local", dry_run=False))
        result = _run(defs, instance, ROLLBACK_JOB, "rollback_failed_write", table="t",
                      instant=pending.timestamp)
    assert result.success
    assert HoodieTable(str(base)).active_timeline.write_timeline().filter_pending().first() is None


class _Webhook(BaseHTTPRequestHandler):
    received: ClassVar[list[dict]] = []

    def do_POST(self):
        length = int(self.headers["Content-Length"])
        _Webhook.received.append({"type": self.headers["Content-Type"],
                                  "body": json.loads(self.rfile.read(length))})
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_failed_run_is_posted_to_the_alert_url(base):
    server = HTTPServer(("127.0.0.1", 0), _Webhook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        with dg.instance_for_test() as instance:
            defs = build_definitions(HudiTableRegistry(base_paths=[str(base)], engine="local", dry_run=False),
                                     alert_url=url)
            failed = _run(defs, instance, ROLLBACK_JOB, "rollback_failed_write", table="t",
                          instant="20240101000000001")  # not a pending write: the core refuses
            assert not failed.success
            context = dg.build_run_status_sensor_context(
                sensor_name=ALERT_SENSOR, dagster_instance=instance,
                dagster_event=failed.get_run_failure_event(),
                dagster_run=instance.get_run_by_id(failed.run_id)).for_run_failure()
            defs.resolve_sensor_def(ALERT_SENSOR)(context)
    finally:
        server.shutdown()
    (alert,) = _Webhook.received
    assert alert["type"] == "application/json"
    assert f"run {failed.run_id} of {ROLLBACK_JOB} failed (table t, dry_run false)" in alert["body"]["text"]

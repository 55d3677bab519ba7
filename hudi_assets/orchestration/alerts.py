"""The run-failure hook: every failed run of the code location, however it was launched, is posted to
a Slack-compatible webhook (`{"text": ...}` as JSON) or, without a URL, logged by the sensor.

A run-failure sensor rather than an op hook: op hooks attach to jobs, and runs launched from the UI's
Materialize (the implicit asset job) would carry none. A refusal is not a failure (see `checks`): it
shows as the failed check of its table.
"""

from __future__ import annotations

import json
import urllib.request

import dagster as dg

from hudi_assets.orchestration.tables import DRY_RUN_TAG, TABLE_TAG

ALERT_SENSOR = "hudi_run_failure_alert"


def alert_text(run: dg.DagsterRun, error: str | None) -> str:
    table = run.tags.get(TABLE_TAG, "no table tag")
    return (f"hudi-assets: run {run.run_id} of {run.job_name} failed (table {table}, dry_run "
            f"{run.tags.get(DRY_RUN_TAG, 'unknown')}): {error or 'no error message'}")


def post_alert(url: str, text: str, timeout: float = 10) -> None:
    """POSTs `{"text": text}` as JSON, the body Slack's incoming webhooks (and many others) accept."""
    request = urllib.request.Request(url, data=json.dumps({"text": text}).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        response.read()


def build_failure_alert(url: str | None) -> dg.SensorDefinition:
    @dg.run_failure_sensor(name=ALERT_SENSOR, default_status=dg.DefaultSensorStatus.RUNNING,
                           description="Posts every failed run to the alert URL (Slack-compatible JSON), "
                                       "or logs it when none is set.")
    def hudi_run_failure_alert(context: dg.RunFailureSensorContext) -> None:
        text = alert_text(context.dagster_run, context.failure_event.message)
        if url:
            post_alert(url, text)
            context.log.info(f"alert sent: {text}")
        else:
            context.log.error(text)

    return hudi_run_failure_alert

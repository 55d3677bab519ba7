"""Metrics in Hudi's names (`HoodieMetrics.getMetricsName`: `<prefix>.<action>.<metric>`), exported as
Hudi's Prometheus reporters export them (DropwizardExports: dots become `_`): into a node_exporter
textfile that `prometheus_client`'s parser reads, and pushed to a push gateway (a real HTTP server on
127.0.0.1 stands in for it). Each service reports through the listener it already has."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path
from typing import ClassVar

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.builders import TableBuilder, base_file, ts

from hudi_assets.archive.archiver import HoodieTimelineArchiver
from hudi_assets.clean import Cleaner
from hudi_assets.demo import generate_table
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.initializer import initialize_from_filesystem
from hudi_assets.metadata.rollback_records import MetadataTableSink
from hudi_assets.metadata_services.services import MetadataServices
from hudi_assets.metrics import exported_name, metrics_name
from hudi_assets.metrics.prometheus import PrometheusReporter, help_text
from hudi_assets.rollback import Rollbacker
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import State

VERSIONS = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}


def _table(root: Path) -> TableBuilder:
    """Table `t`: two file groups rewritten by four commits, so a clean keeping one version deletes six."""
    b = TableBuilder(root)
    for n in range(4):
        b.commit(ts(n), {"p1": [base_file("a", ts(n)), base_file("b", ts(n))]})
    return b


def _gauges(text: str) -> dict[str, float]:
    return {s.name: s.value for family in text_string_to_metric_families(text) for s in family.samples}


def _clean(root: Path, **conf: str):
    table = HoodieTable(str(root), hoodie_conf={**VERSIONS, "hoodie.metrics.on": "true", **conf})
    result = Cleaner.for_table(table).clean()
    completed = table.reload_timeline().clean_timeline().filter_completed().last()
    return result, metadata.completed_metadata(table.active_timeline, completed)


def test_a_clean_writes_a_textfile_whose_files_deleted_is_the_clean_metadatas(tmp_path):
    b = _table(tmp_path / "t")
    prom = tmp_path / "hudi.prom"
    prom.write_text("# HELP other_metric another job's\n# TYPE other_metric gauge\nother_metric 7.0\n")
    _, clean = _clean(b.root, **{"hoodie.assets.metrics.prometheus.textfile": str(prom)})
    assert clean["totalFilesDeleted"] == 6
    families = {f.name: f for f in text_string_to_metric_families(prom.read_text())}
    deleted = families[exported_name("t.clean.numFilesDeleted")]
    assert deleted.name == "t_clean_numFilesDeleted" and deleted.type == "gauge"
    assert deleted.documentation == help_text("t.clean.numFilesDeleted")
    assert [s.value for s in deleted.samples] == [clean["totalFilesDeleted"]]
    assert families["t_clean_duration"].samples[0].value >= 0
    assert _gauges(prom.read_text())["other_metric"] == 7  # what the file held stays


def test_metrics_are_off_by_default(tmp_path):
    b = _table(tmp_path / "t")
    prom = tmp_path / "hudi.prom"
    table = HoodieTable(str(b.root), hoodie_conf={**VERSIONS,
                                                  "hoodie.assets.metrics.prometheus.textfile": str(prom)})
    assert Cleaner.for_table(table).clean().files_deleted == 6
    assert not prom.exists()


class _PushGateway(http.server.BaseHTTPRequestHandler):
    received: ClassVar[list[tuple[str, str, str, bytes]]] = []

    def _receive(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.received.append((self.command, self.path, self.headers.get("Content-Type"), body))
        self.send_response(200)
        self.end_headers()

    do_POST = do_PUT = _receive

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def push_gateway():
    _PushGateway.received = []
    server = http.server.HTTPServer(("127.0.0.1", 0), _PushGateway)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], _PushGateway.received
    server.shutdown()
    server.server_close()


def test_a_clean_pushes_to_the_push_gateway_under_the_job_and_labels(tmp_path, push_gateway):
    port, received = push_gateway
    b = _table(tmp_path / "t")
    _, clean = _clean(b.root, **{
        "hoodie.metrics.reporter.type": "PROMETHEUS_PUSHGATEWAY",
        "hoodie.metrics.pushgateway.host": "127.0.0.1",
        "hoodie.metrics.pushgateway.port": str(port), "hoodie.metrics.pushgateway.job.name": "maintenance",
        "hoodie.metrics.pushgateway.random.job.name.suffix": "false",
        "hoodie.metrics.pushgateway.report.labels": "env:test,team:lake",
        "hoodie.metrics.reporter.metricsname.prefix": "lake.orders"})
    assert len(received) == 1
    method, path, content_type, body = received[0]
    assert method == "POST"  # pushAdd: the job's other metrics stay
    assert path == "/metrics/job/maintenance/env/test/team/lake"
    assert content_type.startswith("text/plain; version=0.0.4")
    gauges = _gauges(body.decode())
    assert gauges["lake_orders_clean_numFilesDeleted"] == clean["totalFilesDeleted"] == 6
    assert "lake_orders_clean_duration" in gauges


def test_an_unreachable_push_gateway_leaves_the_clean_done(tmp_path, caplog):
    b = _table(tmp_path / "t")
    result, _ = _clean(b.root, **{"hoodie.metrics.reporter.type": "PROMETHEUS_PUSHGATEWAY",
                                  "hoodie.metrics.pushgateway.host": "127.0.0.1",
                                  "hoodie.metrics.pushgateway.port": "1"})
    assert result.files_deleted == 6
    assert "could not push metrics to the push gateway 127.0.0.1:1" in caplog.text


def test_the_job_name_gets_hudis_random_suffix_by_default(tmp_path):
    b = _table(tmp_path / "t")
    table = HoodieTable(str(b.root), hoodie_conf={
        "hoodie.metrics.on": "true", "hoodie.metrics.reporter.type": "PROMETHEUS_PUSHGATEWAY",
        "hoodie.metrics.pushgateway.job.name": "hudi"})
    reporter = PrometheusReporter.from_write_config(table.write_config)
    assert reporter.gateway == "localhost:9091"
    assert reporter.job.startswith("hudi") and int(reporter.job[4:]) is not None


def test_names_follow_get_metrics_name_and_dropwizard_exports():
    assert metrics_name("t", "clean", "numFilesDeleted") == "t.clean.numFilesDeleted"
    assert metrics_name("", "archive", "duration") == "archive.duration"
    assert exported_name("t_metadata.deltacommit.totalRecordsWritten") == \
        "t_metadata_deltacommit_totalRecordsWritten"
    assert exported_name("1st-table.clean.duration") == "_st_table_clean_duration"


def test_archive_rollback_and_the_metadata_tables_deltacommits_report_too(tmp_path):
    """An archive's instants (table `t`), a rollback's files and the metadata table's deltacommit that
    records it (table `m`, the latter under `m_metadata`), all into one textfile."""
    prom = tmp_path / "hudi.prom"
    conf = {"hoodie.metrics.on": "true", "hoodie.assets.metrics.prometheus.textfile": str(prom),
            "hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "5",
            "hoodie.cleaner.commits.retained": "2"}
    archived_table = TableBuilder(tmp_path / "t")
    written = TableBuilder(tmp_path / "m", props={"hoodie.table.name": "m"})
    for n in range(12):
        archived_table.commit(ts(n), {"p1": [base_file("a", ts(n))]})
    written.commit(ts(0), {"p1": [base_file("a", ts(0))]})
    written.commit(ts(1), {"p1": [base_file("c", ts(1))]}, state=State.INFLIGHT)
    initialize_from_filesystem(written.table())

    archiver = HoodieTimelineArchiver.for_table(HoodieTable(str(archived_table.root), hoodie_conf=conf))
    archived = archiver.archive()
    table = HoodieTable(str(written.root), hoodie_conf=conf)
    rolled = Rollbacker(table, metadata=MetadataTableSink(table)).rollback(ts(1), force=True)
    gauges = _gauges(prom.read_text())
    assert gauges["t_archive_numInstantsArchived"] == len(archived.selection.instants) == 9
    assert gauges["m_rollback_numFilesDeleted"] == rolled.executed[0].files_deleted == 1
    assert gauges["m_metadata_deltacommit_totalPartitionsWritten"] >= 1
    assert gauges["m_metadata_deltacommit_commitTime"] > 0


def test_the_metadata_tables_clean_and_compaction_report_under_the_metadata_prefix(tmp_path):
    base = generate_table(Storage(str(tmp_path / "t")), "MERGE_ON_READ", commits=30, bloom_entries=100,
                          seed=3, metadata_table=True, pending_compaction=False, failed_write=False).base_path
    prom = tmp_path / "hudi.prom"
    data = HoodieTable(base, hoodie_conf={"hoodie.metrics.on": "true",
                                          "hoodie.metadata.compact.max.delta.commits": 3,
                                          "hoodie.assets.metrics.prometheus.textfile": str(prom)})
    cleaned = MetadataServices(data).run(("clean",), no_active_writer=True)
    outcome = MetadataServices(data).run(("compaction",), no_active_writer=True)
    assert cleaned.files_cleaned > 0 and len(outcome.compacted) == 1
    mdt = MetadataTable(base)
    compaction = metadata.commit_metadata(mdt.timeline, mdt.timeline.get(outcome.compacted[0], "commit"))
    gauges = _gauges(prom.read_text())
    assert gauges["demo_metadata_compaction_totalLogFilesCompacted"] == \
        sum(s.fields["totalLogFilesCompacted"] for s in compaction.write_stats) > 0
    assert gauges["demo_metadata_compaction_totalFilesUpdate"] + \
        gauges["demo_metadata_compaction_totalFilesInsert"] == len(compaction.write_stats)
    assert "demo_metadata_compaction_duration" in gauges
    assert gauges["demo_metadata_clean_numFilesDeleted"] == cleaned.files_cleaned


def test_a_1x_clean_reports_its_metadata_tables_deltacommit(tmp_path):
    """Table version 9: the metadata table's deltacommit (new log files, as 1.x writes them) reports
    under `<prefix>_metadata` as on version 6."""
    from hudi_assets.demo.metadata import max_commits_without_compaction

    prom = tmp_path / "hudi.prom"
    demo = generate_table(Storage(str(tmp_path / "v9")), "COPY_ON_WRITE", name="n", table_version=9,
                          metadata_table=True, commits=max_commits_without_compaction(), seed=3,
                          bloom_entries=100, failed_write=False, savepoint=False)
    conf = {**VERSIONS, "hoodie.metrics.on": "true", "hoodie.assets.metrics.prometheus.textfile": str(prom)}
    result = Cleaner.for_table(HoodieTable(demo.base_path, hoodie_conf=conf)).clean()
    assert result.files_deleted > 0
    gauges = _gauges(prom.read_text())
    assert gauges["n_clean_numFilesDeleted"] == result.files_deleted
    assert gauges["n_metadata_deltacommit_commitTime"] > 0


def test_a_clean_archive_and_rollback_report_hoodie_metrics_timers(tmp_path):
    """HoodieMetrics' `<prefix>.timer.clean`, `.timer.archive` and `.timer.rollback` (getCleanCtx,
    getArchiveCtx, getRollbackCtx), exported as DropwizardExports exports a Timer: a summary whose
    quantiles are the run's duration in seconds and whose count is the one run."""
    prom = tmp_path / "hudi.prom"
    b = _table(tmp_path / "t")
    b.commit(ts(9), {"p1": [base_file("c", ts(9))]}, state=State.INFLIGHT)
    conf = {"hoodie.assets.metrics.prometheus.textfile": str(prom), "hoodie.keep.min.commits": "2",
            "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
    _clean(b.root, **conf)
    table = HoodieTable(str(b.root), hoodie_conf={"hoodie.metrics.on": "true", **conf})
    Rollbacker(table).rollback(ts(9), force=True)
    HoodieTimelineArchiver.for_table(HoodieTable(str(b.root), hoodie_conf={"hoodie.metrics.on": "true",
                                                                          **conf})).archive()
    families = {f.name: f for f in text_string_to_metric_families(prom.read_text())}
    gauges = _gauges(prom.read_text())
    for action in ("clean", "rollback", "archive"):
        timer = families[f"t_timer_{action}"]
        assert timer.type == "summary"
        assert timer.documentation == help_text(f"t.timer.{action}", "com.codahale.metrics.Timer")
        quantiles = {s.labels["quantile"]: s.value for s in timer.samples if "quantile" in s.labels}
        assert sorted(quantiles) == ["0.5", "0.75", "0.95", "0.98", "0.99", "0.999"]
        assert set(quantiles.values()) == {gauges[f"t_{action}_duration"] / 1000}
        assert gauges[f"t_timer_{action}_count"] == 1

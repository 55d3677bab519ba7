"""`MetricsListener`: the `Listener` that turns every `finished` run into HoodieMetrics' gauges, reports
them (`PrometheusReporter`) and keeps them for a face (Dagster metadata), passing every other call on to
the listener it wraps. `with_metrics` puts one around a service's listener when `hoodie.metrics.on`."""

from __future__ import annotations

from hudi_assets.listener import QUIET, Listener, ServiceRun, Step
from hudi_assets.metrics.names import metrics_prefix, service_metrics, service_timers
from hudi_assets.metrics.prometheus import PrometheusReporter
from hudi_assets.table import HoodieTable


class MetricsListener(Listener):
    """One data table's metrics, its metadata table's included (`<prefix>_metadata`)."""

    def __init__(self, table: HoodieTable, inner: Listener = QUIET,
                 reporter: PrometheusReporter | None = None):
        self.inner = inner
        self.reporter = reporter
        self.prefix = metrics_prefix(table.write_config)
        self.timezone = table.config.timeline_timezone
        self.gauges: dict[str, int] = {}  # every metric reported so far, by its Dropwizard name

    @classmethod
    def for_table(cls, table: HoodieTable, inner: Listener = QUIET) -> MetricsListener:
        """A listener that keeps the metrics for a face to show (Dagster metadata) whether or not the
        table's settings report them too."""
        return cls(table, inner, PrometheusReporter.from_write_config(table.write_config))

    def reached(self, step: Step, count: int = 0) -> None:
        self.inner.reached(step, count)

    def progress(self, done: int, total: int) -> None:
        self.inner.progress(done, total)

    def finished(self, run: ServiceRun) -> None:
        self.inner.finished(run)
        gauges = service_metrics(self.prefix, run, self.timezone)
        self.gauges.update(gauges)
        if self.reporter is not None:
            self.reporter.report(gauges, service_timers(self.prefix, run))


def with_metrics(table: HoodieTable, listener: Listener) -> Listener:
    """`listener`, wrapped to report metrics when the table's settings turn them on (and not already)."""
    if isinstance(listener, MetricsListener):
        return listener
    reporter = PrometheusReporter.from_write_config(table.write_config)
    return listener if reporter is None else MetricsListener(table, listener, reporter)

"""Metrics out the way Hudi's Prometheus reporters export them (`PushGatewayReporter`, Hudi 0.15): each
Dropwizard gauge through simpleclient's `DropwizardExports`, as a gauge named by `exported_name` with its
help text, each timer as DropwizardExports' summary (quantiles in seconds and `_count`), pushed with
`pushAdd` to the job and grouping labels configured; or into a textfile for node_exporter's textfile
collector (no Hudi counterpart: a run of hudi-assets is a short process).

Needs the `metrics` extra (`prometheus_client`). A push or write that fails is logged and the service's
result stands, as Hudi's reporter logs "Can't push monitoring information to pushGateway".
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from hudi_assets import config_options as opt
from hudi_assets.config import WriteConfig
from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.extras import require
from hudi_assets.metrics.names import exported_name

log = logging.getLogger(__name__)

GAUGE_CLASS = "org.apache.hudi.metrics.HoodieGauge"  # what Hudi registers each metric as
TIMER_CLASS = "com.codahale.metrics.Timer"
QUANTILES = ("0.5", "0.75", "0.95", "0.98", "0.99", "0.999")  # DropwizardExports.fromSnapshotAndCount


def help_text(name: str, kind: str = GAUGE_CLASS) -> str:
    """DropwizardExports' help of a metric."""
    return f"Generated from Dropwizard metric import (metric={name}, type={kind})"


class _DropwizardExports:
    """The collector of a run's Dropwizard-named gauges (name -> value) and timers (name -> the one
    run's seconds), exported as simpleclient's DropwizardExports does; `kept`: metric families to
    export too (a textfile's earlier content)."""

    def __init__(self, gauges: Mapping[str, float], timers: Mapping[str, float] | None = None,
                 kept: tuple = ()):
        self.gauges = dict(gauges)
        self.timers = dict(timers or {})
        self.kept = kept

    def collect(self) -> Iterator:
        from prometheus_client.core import GaugeMetricFamily, Metric

        yield from self.kept
        for name, value in self.gauges.items():
            yield GaugeMetricFamily(exported_name(name), help_text(name), value=float(value))
        for name, seconds in self.timers.items():
            exported = exported_name(name)
            summary = Metric(exported, help_text(name, TIMER_CLASS), "summary")
            for quantile in QUANTILES:
                summary.add_sample(exported, {"quantile": quantile}, float(seconds))
            summary.add_sample(f"{exported}_count", {}, 1.0)
            yield summary


def _registry(gauges: Mapping[str, float], timers: Mapping[str, float] | None = None, kept: tuple = ()):
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_DropwizardExports(gauges, timers, kept))
    return registry


def parse_labels(text: str) -> dict[str, str]:
    """`key:value,key:value` (MetricUtils.getLabelsAsMap); a pair without `:` is refused."""
    labels = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = pair.partition(":")
        if not sep or not key.strip():
            raise InvalidConfigError(f"{opt.PUSHGATEWAY_LABELS.key}={text!r}: expected key:value pairs "
                                     "separated by commas")
        labels[key.strip()] = value.strip()
    return labels


@dataclass(frozen=True)
class PrometheusReporter:
    """Where one run's metrics go: a push gateway (`gateway`, None: none) and/or a textfile."""

    gateway: str | None
    job: str
    labels: Mapping[str, str]
    textfile: str | None

    @classmethod
    def from_write_config(cls, config: WriteConfig) -> PrometheusReporter | None:
        """The reporter `hoodie.metrics.*` ask for; None when metrics are off or no destination this
        process can serve is set (the JVM reporters are the writer's: logged)."""
        if not config.get(opt.METRICS_ON):
            return None
        kind = config.get(opt.METRICS_REPORTER_TYPE)
        textfile = config.get(opt.METRICS_TEXTFILE) or None
        gateway = None
        if kind == "PROMETHEUS_PUSHGATEWAY":
            host, port = config.get(opt.PUSHGATEWAY_HOST), config.get(opt.PUSHGATEWAY_PORT)
            gateway = f"https://{host}:{port}" if port == 443 else f"{host}:{port}"  # as PushGatewayReporter
        elif textfile is None:
            log.warning("%s: hudi-assets reports to PROMETHEUS_PUSHGATEWAY or to %s only; no metrics are "
                        "reported", config.describe(opt.METRICS_REPORTER_TYPE), opt.METRICS_TEXTFILE.key)
            return None
        require("prometheus_client", "metrics", "reporting metrics")
        job = config.get(opt.PUSHGATEWAY_JOB_NAME)
        if config.get(opt.PUSHGATEWAY_RANDOM_JOB_NAME_SUFFIX):
            job += str(random.randint(-(2**63), 2**63 - 1))  # Java's Random.nextLong
        return cls(gateway, job, parse_labels(config.get(opt.PUSHGATEWAY_LABELS)), textfile)

    def report(self, gauges: Mapping[str, float], timers: Mapping[str, float] | None = None) -> None:
        """Push `gauges` and `timers` (pushAdd: other metrics of the job stay) and/or write them into the
        textfile."""
        if self.gateway is not None:
            from prometheus_client import pushadd_to_gateway

            try:
                pushadd_to_gateway(self.gateway, self.job, _registry(gauges, timers),
                                   grouping_key=dict(self.labels))
            except OSError as exc:
                log.warning("could not push metrics to the push gateway %s: %s", self.gateway, exc)
        if self.textfile is not None:
            try:
                write_textfile(self.textfile, gauges, timers)
            except OSError as exc:
                log.warning("could not write the metrics textfile %s: %s", self.textfile, exc)


def write_textfile(path: str, gauges: Mapping[str, float], timers: Mapping[str, float] | None = None) -> None:
    """Rewrite `path` atomically (a temporary file renamed over it) with `gauges`, keeping the other
    metric families it holds, so runs of several services and tables add up in one file."""
    from prometheus_client import write_to_textfile
    from prometheus_client.parser import text_string_to_metric_families

    names = {exported_name(name) for name in (*gauges, *(timers or {}))}
    file = Path(path)
    kept = tuple(family for family in text_string_to_metric_families(file.read_text()) if
                 family.name not in names) if file.exists() else ()
    write_to_textfile(path, _registry(gauges, timers, kept))

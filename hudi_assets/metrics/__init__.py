"""Hudi's table-service metrics (`HoodieMetrics`' names) from hudi-assets' services, exported as Hudi's
Prometheus reporters export them; see `names` for what each service reports."""

from hudi_assets.metrics.names import exported_name, metrics_name, service_metrics
from hudi_assets.metrics.reporter import MetricsListener, with_metrics

__all__ = ["MetricsListener", "exported_name", "metrics_name", "service_metrics", "with_metrics"]

"""Writer heartbeats: `.hoodie/.heartbeat/<instant>`, whose modification time a live writer renews.

Under the LAZY failed-writes policy (multi-writer tables) a writer renews its instant's heartbeat file
every `hoodie.client.heartbeat.interval_in_ms`; a pending write whose heartbeat is older than
interval x `hoodie.client.heartbeat.tolerable.misses`, or that has none, is a failed write that a
later client rolls back (Hudi's HoodieHeartbeatClient.isHeartbeatExpired / getLastHeartbeatTime).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from hudi_assets import config_options as opt
from hudi_assets.config import WriteConfig
from hudi_assets.storage import Storage
from hudi_assets.timeline.timeline import METAFOLDER

HEARTBEAT_FOLDER = f"{METAFOLDER}/.heartbeat"


def heartbeat_path(instant_time: str) -> str:
    return f"{HEARTBEAT_FOLDER}/{instant_time}"


@dataclass(frozen=True, slots=True)
class HeartbeatConfig:
    interval_ms: int = 60_000
    tolerable_misses: int = 2

    @classmethod
    def from_write_config(cls, config: WriteConfig) -> HeartbeatConfig:
        return cls(config.get(opt.HEARTBEAT_INTERVAL_MS), config.get(opt.HEARTBEAT_TOLERABLE_MISSES))

    @property
    def max_allowed_ms(self) -> int:
        """How old a heartbeat may be before its writer counts as dead."""
        return self.interval_ms * self.tolerable_misses


def last_heartbeat_ms(storage: Storage, instant_time: str) -> int:
    """The heartbeat file's modification time in epoch milliseconds; 0 when there is none (a write
    started before the writer used LAZY cleaning, or one that died before its first beat)."""
    status = storage.status(heartbeat_path(instant_time))
    return 0 if status is None else status.mtime_ms


def is_heartbeat_expired(storage: Storage, instant_time: str, config: HeartbeatConfig,
                         now_ms: int | None = None) -> bool:
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    return now_ms - last_heartbeat_ms(storage, instant_time) > config.max_allowed_ms


def delete_heartbeat(storage: Storage, instant_time: str) -> None:
    """Drop a rolled-back write's heartbeat (Hudi's HeartbeatUtils.deleteHeartbeatFile)."""
    storage.delete_checked([heartbeat_path(instant_time)])

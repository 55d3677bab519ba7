"""Filesystem options given as text (`--storage-option key=value`, a resource's settings) turned into
the typed keyword arguments of pyarrow's S3 and GCS filesystems; anything else is refused by name.

Why not pass the text through: pyarrow takes any non-empty string as true, so `anonymous=false`
would connect anonymously; a number given as text and an unknown key raise a bare TypeError.

Batch deletes: pyarrow's S3 filesystem deletes one object per request, so S3 deletes go through
boto3's DeleteObjects (`s3_batch_client`) with a client built from the same options, where boto3 is
installed (the `s3` extra; without it deletes stay pyarrow's, with a warning naming the extra).

Time limits: pyarrow's S3 client gives up on an unreachable endpoint after its 3 attempts (measured
with pyarrow 26: refused connection ~4 s, silent server or dropped packets ~12 s), so it keeps its
defaults. Its GCS client retries for 15 minutes, so GCS gets `GCS_RETRY_LIMIT_S` unless
`retry_time_limit` is set.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.extras import installed, missing_extra

if TYPE_CHECKING:
    import pyarrow.fs as pafs

log = logging.getLogger(__name__)

GCS_RETRY_LIMIT_S = 15.0


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError("expected true or false")
    return lowered == "true"


def _s3_retry(text: str) -> pafs.S3RetryStrategy:
    """`standard` or `default` (the AWS SDK's strategies), optionally `:N` maximum attempts."""
    import pyarrow.fs as pafs

    kind, _, attempts = text.partition(":")
    strategies = {"standard": pafs.AwsStandardS3RetryStrategy, "default": pafs.AwsDefaultS3RetryStrategy}
    if kind not in strategies:
        raise ValueError("expected standard or default, optionally :N attempts")
    return strategies[kind](int(attempts) if attempts else 3)


def _seconds(text: str) -> timedelta:
    return timedelta(seconds=float(text))


Converter = Callable[[str], Any] | None

_COMMON: dict[str, Converter] = {
    "anonymous": _bool, "scheme": str, "endpoint_override": str,
}
_S3: dict[str, Converter] = {
    **_COMMON, "access_key": str, "secret_key": str, "session_token": str, "region": str,
    "request_timeout": float, "connect_timeout": float, "background_writes": _bool, "role_arn": str,
    "session_name": str, "external_id": str, "load_frequency": int, "proxy_options": str,
    "allow_delayed_open": _bool, "allow_bucket_creation": _bool, "allow_bucket_deletion": _bool,
    "check_directory_existence_before_creation": _bool, "retry_strategy": _s3_retry,
    "force_virtual_addressing": _bool, "tls_ca_file_path": str, "default_metadata": None,
}
_GCS: dict[str, Converter] = {
    **_COMMON, "access_token": str, "target_service_account": str,
    "credential_token_expiration": datetime.fromisoformat, "default_bucket_location": str,
    "retry_time_limit": _seconds, "project_id": str, "default_metadata": None,
}


def _typed(kind: str, keys: Mapping[str, Converter], options: Mapping[str, Any]) -> dict:
    """Options converted by key; values that are not text (from Python callers) are kept as given.
    A `None` converter marks a key that takes an object, never text."""
    typed: dict[str, Any] = {}
    for key, value in options.items():
        if key not in keys:
            raise InvalidConfigError(f"storage option {key!r}: not an option of pyarrow's {kind} "
                                     f"(known: {', '.join(sorted(keys))})")
        convert = keys[key]
        if not isinstance(value, str):
            typed[key] = value
            continue
        if convert is None:
            raise InvalidConfigError(f"storage option {key!r}: cannot be given as text")
        try:
            typed[key] = convert(value)
        except ValueError as exc:
            raise InvalidConfigError(f"storage option {key}={value!r}: {exc}") from None
    return typed


def s3_options(options: Mapping[str, Any]) -> dict[str, Any]:
    return _typed("S3FileSystem", _S3, options)


def gcs_options(options: Mapping[str, Any]) -> dict[str, Any]:
    typed = _typed("GcsFileSystem", _GCS, options)
    typed.setdefault("retry_time_limit", timedelta(seconds=GCS_RETRY_LIMIT_S))
    return typed


# Assuming a role (and refreshing it every `load_frequency`) is pyarrow's to do: no boto3 client.
_ROLE = {"role_arn", "session_name", "external_id", "load_frequency"}


def s3_batch_client(options: Mapping[str, Any]) -> Any | None:
    """A boto3 S3 client that reaches the store `s3_options(options)` reaches, with the same
    credentials, endpoint, time limits, retries, TLS and proxy; None with a role to assume, where
    deletes stay pyarrow's, as they do without boto3. Without options both fall back on the AWS default
    chain alike."""
    typed = s3_options(options)
    if _ROLE.intersection(typed):
        return None
    if not installed("boto3"):
        log.warning("%s; deleting one object per request",
                    missing_extra("boto3", "s3", "S3 deletes in batches of 1,000 keys"))
        return None
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config

    config: dict[str, Any] = {}
    client: dict[str, Any] = {}
    endpoint = typed.get("endpoint_override")
    if endpoint:
        client["endpoint_url"] = endpoint if "://" in endpoint else f"{typed.get('scheme', 'https')}://{endpoint}"
    for ours, theirs in (("access_key", "aws_access_key_id"), ("secret_key", "aws_secret_access_key"),
                         ("session_token", "aws_session_token"), ("region", "region_name"),
                         ("tls_ca_file_path", "verify")):
        if typed.get(ours):
            client[theirs] = typed[ours]
    if typed.get("anonymous"):
        config["signature_version"] = UNSIGNED
    for ours, theirs in (("request_timeout", "read_timeout"), ("connect_timeout", "connect_timeout")):
        if ours in typed:
            config[theirs] = typed[ours]
    strategy = typed.get("retry_strategy")
    if strategy is not None:
        import pyarrow.fs as pafs

        mode = "standard" if isinstance(strategy, pafs.AwsStandardS3RetryStrategy) else "legacy"
        config["retries"] = {"mode": mode, "total_max_attempts": strategy.max_attempts}  # first one included
    if typed.get("force_virtual_addressing"):
        config["s3"] = {"addressing_style": "virtual"}
    if typed.get("proxy_options"):
        config["proxies"] = {"http": typed["proxy_options"], "https": typed["proxy_options"]}
    return boto3.session.Session().client("s3", config=Config(**config), **client)

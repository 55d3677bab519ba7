"""A moto S3 server on 127.0.0.1 for tests that prove the store-independent paths really are."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow.fs as pafs
from moto.server import ThreadedMotoServer

CREDENTIALS = {"access_key": "test", "secret_key": "test", "region": "us-east-1", "scheme": "http"}


@contextmanager
def moto_s3() -> Iterator[dict[str, str]]:
    """Start a server on a free loopback port; yields pyarrow S3FileSystem options for it."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield {**CREDENTIALS, "endpoint_override": f"{host}:{port}"}
    finally:
        server.stop()


def upload_tree(options: dict[str, str], local: Path, bucket: str, prefix: str) -> str:
    """Create the bucket and copy a local directory tree under `prefix`; returns the s3:// URI."""
    fs = pafs.S3FileSystem(**options, allow_bucket_creation=True)
    fs.create_dir(bucket)
    for path in sorted(local.rglob("*")):
        if path.is_file():
            with fs.open_output_stream(f"{bucket}/{prefix}/{path.relative_to(local).as_posix()}") as out:
                out.write(path.read_bytes())
    return f"s3://{bucket}/{prefix}"

"""A moto S3 server on 127.0.0.1 for tests that prove the store-independent paths really are, and
that can count the HTTP requests it answers."""

from __future__ import annotations

import io
import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs

import pyarrow.fs as pafs
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server

CREDENTIALS = {"access_key": "test", "secret_key": "test", "region": "us-east-1", "scheme": "http"}


def request_kind(environ: dict) -> str:
    """LIST (ListObjects), DELETE_OBJECTS (a batch), DELETE (one object), or the method for any
    other request (path-style addressing: `/bucket` or `/bucket/key`); " .hoodie" is appended for a
    request on a table's metafolder."""
    method = environ["REQUEST_METHOD"]
    query = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    path = environ.get("PATH_INFO", "")
    has_key = bool(path.strip("/").partition("/")[2])
    if method == "GET" and not has_key and {"list-type", "prefix", "delimiter"} & query.keys():
        kind = "LIST"
    elif method == "POST" and "delete" in query:
        kind = "DELETE_OBJECTS"
    else:
        kind = "DELETE" if method == "DELETE" and has_key else method
    target = f"/{path}/{''.join(query.get('prefix', []))}/"
    return f"{kind} .hoodie" if "/.hoodie/" in target or "/.hoodie" in path else kind


class _Counting:
    """WSGI middleware: counts each request by `request_kind` before moto answers it, and has a
    DeleteObjects refuse the keys in `refused` the way S3 does (kept, with an `<Error>` each)."""

    def __init__(self, app, counts: Counter[str], refused: set[str]):
        self.app, self.counts, self.refused, self.lock = app, counts, refused, threading.Lock()

    def __call__(self, environ, start_response):
        kind = request_kind(environ)
        with self.lock:
            self.counts[kind] += 1
        if kind != "DELETE_OBJECTS" or not self.refused:
            return self.app(environ, start_response)
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        keys = re.findall(r"<Key>([^<]*)</Key>", body.decode())
        refused = [key for key in keys if key in self.refused]
        for key in refused:
            body = body.replace(f"<Object><Key>{key}</Key></Object>".encode(), b"")
        for header in [h for h in environ if h.startswith("HTTP_X_AMZ_CHECKSUM") or h == "HTTP_CONTENT_MD5"]:
            del environ[header]  # the body changed
        environ.update({"wsgi.input": io.BytesIO(body), "CONTENT_LENGTH": str(len(body))})
        errors = "".join(f"<Error><Key>{key}</Key><Code>AccessDenied</Code><Message>Access Denied</Message>"
                         "</Error>" for key in refused).encode()
        answered = []
        answer = b"".join(self.app(environ, lambda status, headers, *_: answered.append((status, headers))))
        answer = answer.replace(b"</DeleteResult>", errors + b"</DeleteResult>")
        status, headers = answered[0]
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        start_response(status, [*headers, ("Content-Length", str(len(answer)))])
        return [answer]


@contextmanager
def moto_s3(requests: Counter[str] | None = None, refused: set[str] | None = None
            ) -> Iterator[dict[str, str]]:
    """Start a server on a free loopback port; yields pyarrow S3FileSystem options for it. With
    `requests`, every request the server answers is counted there by `request_kind`; keys added to
    `refused` (bucket-relative) are refused by DeleteObjects from then on."""
    app = DomainDispatcherApplication(create_backend_app)
    app = _Counting(app, Counter() if requests is None else requests, set() if refused is None else refused)
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield {**CREDENTIALS, "endpoint_override": f"{host}:{port}"}
    finally:
        server.shutdown()
        thread.join()


def upload_tree(options: dict[str, str], local: Path, bucket: str, prefix: str) -> str:
    """Create the bucket and copy a local directory tree under `prefix`; returns the s3:// URI."""
    fs = pafs.S3FileSystem(**options, allow_bucket_creation=True)
    fs.create_dir(bucket)
    for path in sorted(local.rglob("*")):
        if path.is_file():
            with fs.open_output_stream(f"{bucket}/{prefix}/{path.relative_to(local).as_posix()}") as out:
                out.write(path.read_bytes())
    return f"s3://{bucket}/{prefix}"

"""One interface to a table's files on any store, confined to the table's base path.

Backed by `pyarrow.fs` (local, s3, gs, hdfs, abfs; fsspec-only schemes through pyarrow's fsspec
handler). Every path handed in is resolved against the base path first and refused if it lands
outside it, so no operation can touch another table, bucket or directory. A `Storage` pickles as
its URI and options only: a Spark executor that unpickles it opens its own filesystem handle.
"""

from __future__ import annotations

import os
import posixpath
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from hudi_assets.exceptions import HudiAssetsError, PathOutsideTableError

_PYARROW_SCHEMES = {"s3", "gs", "gcs", "hdfs", "viewfs", "abfs", "abfss"}


@dataclass(frozen=True, slots=True)
class FileStatus:
    """A listed entry; `path` is relative to the base path, '/'-separated."""

    path: str
    size: int
    mtime_ms: int
    is_dir: bool

    @property
    def name(self) -> str:
        return self.path.rpartition("/")[2]


@dataclass(slots=True)
class DeleteResult:
    """Outcome of `delete_many`: what was removed, what was already gone, what failed and why."""

    deleted: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


def _split_base(base_uri: str) -> tuple[str, str]:
    """Return (scheme, root path in the filesystem's own terms) for a base path or URI."""
    parts = urlsplit(base_uri)
    scheme = parts.scheme.lower()
    if scheme in ("", "file") or len(scheme) == 1:  # len 1: a Windows drive letter
        local = parts.path if scheme == "file" else base_uri
        return "file", os.path.abspath(local).replace(os.sep, "/")
    root = (parts.netloc + parts.path).rstrip("/")
    if not parts.netloc:
        raise PathOutsideTableError(f"{base_uri}: a {scheme}:// base path needs a bucket or host")
    return scheme, root


class Storage:
    """The files of one table, addressed by paths relative to its base path."""

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None):
        self.scheme, self.root = _split_base(str(base_uri))
        self.base_uri = self.root if self.scheme == "file" else f"{self.scheme}://{self.root}"
        self.options = dict(options or {})
        self._fs: pafs.FileSystem | None = None

    def __getstate__(self) -> dict:
        return {"base_uri": self.base_uri, "options": self.options}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["base_uri"], state["options"])

    def __repr__(self) -> str:
        return f"Storage({self.base_uri!r})"

    @property
    def is_local(self) -> bool:
        return self.scheme == "file"

    @property
    def fs(self) -> pafs.FileSystem:
        if self._fs is None:
            self._fs = self._open_filesystem()
        return self._fs

    def _open_filesystem(self) -> pafs.FileSystem:
        if self.scheme == "file":
            return pafs.LocalFileSystem()
        if self.scheme == "s3":
            return pafs.S3FileSystem(**self.options)
        if self.scheme in ("gs", "gcs"):
            return pafs.GcsFileSystem(**self.options)
        if self.scheme in _PYARROW_SCHEMES:
            fs, _ = pafs.FileSystem.from_uri(self.base_uri)
            return fs
        try:
            import fsspec
        except ImportError as exc:
            raise HudiAssetsError(
                f"{self.base_uri}: scheme {self.scheme!r} needs fsspec and its {self.scheme} driver"
            ) from exc
        return pafs.PyFileSystem(pafs.FSSpecHandler(fsspec.filesystem(self.scheme, **self.options)))

    # ----------------------------------------------------------------- paths
    def relativize(self, path: str) -> str:
        """Map a relative path, an absolute path or a full URI to a path relative to the base.

        Raises `PathOutsideTableError` for anything that does not land inside the base path.
        """
        raw = str(path)
        parts = urlsplit(raw)
        scheme = parts.scheme.lower()
        if scheme and len(scheme) > 1:
            same_store = scheme == self.scheme or (self.scheme == "file" and scheme == "file")
            if self.scheme == "s3" and scheme in ("s3a", "s3n"):
                same_store = True
            inner = parts.path if scheme == "file" else parts.netloc + parts.path
            if not same_store:
                raise PathOutsideTableError(f"{raw}: not on this table's store ({self.base_uri})")
            return self._relative_to_root(inner, raw)
        if raw.startswith("/"):
            return self._relative_to_root(raw if self.scheme == "file" else raw.lstrip("/"), raw)
        normal = posixpath.normpath(raw) if raw else "."
        if normal == ".." or normal.startswith("../"):
            raise PathOutsideTableError(f"{raw}: resolves outside the table base path {self.base_uri}")
        return "" if normal == "." else normal

    def _relative_to_root(self, inner: str, raw: str) -> str:
        normal = posixpath.normpath(inner)
        root = self.root if self.scheme != "file" else posixpath.normpath(self.root)
        if normal == root:
            return ""
        if normal.startswith(root.rstrip("/") + "/"):
            return normal[len(root.rstrip("/")) + 1 :]
        raise PathOutsideTableError(f"{raw}: resolves outside the table base path {self.base_uri}")

    def _abs(self, rel: str) -> str:
        rel = self.relativize(rel)
        return f"{self.root}/{rel}" if rel else self.root

    def uri(self, rel: str) -> str:
        """The full path Hudi records for a file (`file:/...` locally, `scheme://bucket/...` else)."""
        rel = self.relativize(rel)
        base = f"file:{self.root}" if self.scheme == "file" else self.base_uri
        return f"{base}/{rel}" if rel else base

    # ------------------------------------------------------------ operations
    def list(self, rel: str = "", recursive: bool = False) -> list[FileStatus]:
        """Entries of a directory (empty when it does not exist), with sizes and mtimes."""
        root = self._abs(rel)
        infos = self.fs.get_file_info(pafs.FileSelector(root, allow_not_found=True, recursive=recursive))
        cut = len(self.root) + 1
        directory = pafs.FileType.Directory
        return [
            FileStatus(info.path[cut:], info.size or 0, (info.mtime_ns or 0) // 1_000_000,
                       info.type == directory)
            for info in infos
        ]

    def list_names(self, rel: str = "") -> tuple[list[str], list[str]]:
        """(file names, subdirectory names) of a directory: the cheapest listing, no sizes.

        Locally this is one `os.scandir` without a stat per file, the floor of any listing; building
        the file-system view of a large table needs nothing more.
        """
        root = self._abs(rel)
        if not self.is_local:
            entries = self.list(rel)
            return [e.name for e in entries if not e.is_dir], [e.name for e in entries if e.is_dir]
        files: list[str] = []
        dirs: list[str] = []
        try:
            with os.scandir(root) as it:
                for entry in it:
                    (dirs if entry.is_dir(follow_symlinks=False) else files).append(entry.name)
        except (FileNotFoundError, NotADirectoryError):
            pass
        return files, dirs

    def status(self, rel: str) -> FileStatus | None:
        info = self.fs.get_file_info(self._abs(rel))
        if info.type == pafs.FileType.NotFound:
            return None
        return FileStatus(self.relativize(rel), info.size or 0, (info.mtime_ns or 0) // 1_000_000,
                          info.type == pafs.FileType.Directory)

    def exists(self, rel: str) -> bool:
        return self.fs.get_file_info(self._abs(rel)).type != pafs.FileType.NotFound

    def read(self, rel: str) -> bytes:
        path = self._abs(rel)
        if self.is_local:
            with open(path, "rb") as fh:
                return fh.read()
        with self.fs.open_input_stream(path) as stream:
            return stream.readall()

    @staticmethod
    def _write_aside(path: str, data: bytes) -> str:
        """Write `data` to a new hidden file beside `path` (umask permissions); returns its path."""
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        tmp = os.path.join(directory, f".tmp-{uuid.uuid4().hex}")
        with open(tmp, "xb") as fh:
            fh.write(data)
        return tmp

    def write(self, rel: str, data: bytes) -> None:
        """Replace a file's content; readers see the old or the new content, never a mix."""
        path = self._abs(rel)
        if self.is_local:
            tmp = self._write_aside(path, data)
            try:
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
            return
        with self.fs.open_output_stream(path) as stream:
            stream.write(data)

    def create_if_absent(self, rel: str, data: bytes) -> bool:
        """Write a new file whole, only if no file is there (instant files are write-once).

        Returns False, writing nothing, when the file exists. Locally the file appears atomically
        and complete (written aside, then hard-linked); object stores only expose complete objects,
        but their check-then-put leaves a window that Hudi itself leaves too.
        """
        path = self._abs(rel)
        if self.is_local:
            tmp = self._write_aside(path, data)
            try:
                os.link(tmp, path)
            except FileExistsError:
                return False
            finally:
                os.unlink(tmp)
            return True
        if self.exists(rel):
            return False
        with self.fs.open_output_stream(path) as stream:
            stream.write(data)
        return True

    def mkdirs(self, rel: str) -> None:
        self.fs.create_dir(self._abs(rel), recursive=True)

    def delete_many(self, rels: Iterable[str]) -> DeleteResult:
        """Delete files; all paths are checked against the base path before the first delete."""
        paths = [(rel, self._abs(rel)) for rel in rels]
        result = DeleteResult()
        for rel, path in paths:
            try:
                self.fs.delete_file(path)
            except FileNotFoundError:
                result.missing.append(rel)
            except OSError as exc:
                if self.exists(rel):
                    result.failed[rel] = str(exc)
                else:
                    result.missing.append(rel)
            else:
                result.deleted.append(rel)
        return result

    def delete_dir(self, rel: str) -> bool:
        """Remove a directory and its content; False when it was not there. Never the base itself."""
        if not self.relativize(rel):
            raise PathOutsideTableError(f"{self.base_uri}: refusing to delete the table base path")
        try:
            self.fs.delete_dir(self._abs(rel))
        except FileNotFoundError:
            return False
        return True

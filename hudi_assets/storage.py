"""One interface to a table's files on any store, confined to the table's base path.

Backed by `pyarrow.fs` (local, s3, gs, hdfs, abfs; fsspec-only schemes through pyarrow's fsspec
handler). Every path handed in is resolved against the base path first and refused if it lands
outside it, so no operation can touch another table, bucket or directory. A `Storage` pickles as
its URI and options only: a Spark executor that unpickles it opens its own filesystem handle.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import operator
import os
import posixpath
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_assets.exceptions import CorruptFileError, InvalidConfigError, PathOutsideTableError, StorageError
from hudi_assets.storage_options import gcs_options, s3_batch_client, s3_options

if TYPE_CHECKING:
    import pyarrow.fs as pafs

_ENTRY_NAME = operator.attrgetter("name")
_ENTRY_IS_DIR = operator.methodcaller("is_dir", follow_symlinks=False)
_ST_SIZE = operator.attrgetter("st_size")
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_PYARROW_SCHEMES = {"s3", "gs", "gcs", "hdfs", "viewfs", "abfs", "abfss"}
S3_DELETE_BATCH = 1000  # the most keys one S3 DeleteObjects request takes
# `scheme:` as Hadoop's Path reads it; one letter is a Windows drive, not a scheme.
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):")


def _pafs():
    """`pyarrow.fs`, imported when first needed: local files are listed, read and deleted through
    `os`, and importing pyarrow (numpy with it) costs every command a tenth of a second."""
    import pyarrow.fs

    return pyarrow.fs


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


@dataclass(frozen=True, slots=True)
class DirectoryListing:
    """One directory's file and subdirectory names; `sizes` (by file name) where the listing itself
    carries them (object stores), None where sizes cost a `stat` each (local)."""

    files: list[str]
    dirs: list[str]
    sizes: dict[str, int] | None = None


@dataclass(slots=True)
class DeleteResult:
    """Outcome of `delete_many`: what was removed, what was already gone, what failed and why.
    S3's batch delete does not tell a removed key from one already gone: both are `deleted`."""

    deleted: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


NOT_UTF8 = "name is not valid UTF-8, which every name Hudi writes is: rename or remove it"


def _escaped(path: str | bytes) -> str:
    """A path for a message, with the bytes that are not UTF-8 shown as backslash escapes."""
    raw = path if isinstance(path, bytes) else os.fsencode(path)
    return raw.decode("utf-8", "backslashreplace")


def _is_utf8(name: str) -> bool:
    """False for a local name that is not UTF-8 (`os.scandir` and argv hand those over as surrogate
    escapes); `isascii` is a flag check, so the common case costs nothing."""
    if name.isascii():
        return True
    try:
        name.encode()
    except UnicodeEncodeError:
        return False
    return True


def _utf8_names(directory: str, names: list[str], skip: bool) -> list[str]:
    """The names that are UTF-8; any other is refused naming its path, or left out with `skip`."""
    kept = []
    for name in names:
        if _is_utf8(name):
            kept.append(name)
        elif not skip:
            raise CorruptFileError(_escaped(f"{directory}/{name}"), NOT_UTF8)
    return kept


def _require_utf8(path: str) -> None:
    if not _is_utf8(path):
        raise CorruptFileError(_escaped(path), NOT_UTF8)


@contextlib.contextmanager
def _written_aside(path: str, data: bytes) -> Iterator[str]:
    """A new hidden file beside `path` holding `data` (umask permissions), removed on exit whatever
    happened: after a failed write (disk full, permission) no partial file stays in `.hoodie`."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.join(os.path.dirname(path), f".tmp-{uuid.uuid4().hex}")
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
        yield tmp
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _read_local(path: str) -> bytes:
    """A local file's bytes by `os.read` on a descriptor: half the time of a buffered `open(...).read()`
    for the small state files a timeline holds (archiving reads tens of thousands)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        want = os.fstat(fd).st_size + 1  # the whole file in one read, and its end in the next
        chunks = []
        while chunk := os.read(fd, want):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)  # one chunk is returned as it is, not copied


def split_uri(path: str) -> tuple[str, str]:
    """(scheme lower-cased or "", the rest after `scheme://` or `scheme:`): a URI split as a file
    system reads it. Hudi writes partition values without URL encoding, so `#`, `?` and `%` are
    characters of a name: no query, no fragment, no percent-decoding."""
    found = _SCHEME.match(path)
    if found is None:
        return "", path
    scheme, rest = found.group(1).lower(), path[found.end():]
    if not rest.startswith("//"):
        return scheme, rest
    rest = rest[2:]
    if scheme == "file" and not rest.startswith("/"):  # file://host/path: the host is no part of the path
        rest = "/" + rest.partition("/")[2]
    return scheme, rest


def _split_base(base_uri: str) -> tuple[str, str]:
    """Return (scheme, root path in the filesystem's own terms) for a base path or URI."""
    scheme, rest = split_uri(base_uri)
    if scheme in ("", "file"):
        local = rest if scheme == "file" else base_uri
        return "file", os.path.abspath(local).replace(os.sep, "/")
    root = rest.rstrip("/")
    if not root or root.startswith("/"):
        raise PathOutsideTableError(f"{base_uri}: a {scheme}:// base path needs a bucket or host")
    return scheme, root


def _is_plain(rel: str) -> bool:
    """True for a non-empty relative path that `posixpath.normpath` leaves as it is (no empty, `.` or
    `..` segment): the common case, decided by three substring scans instead of a parse."""
    padded = f"/{rel}/"
    return "//" not in padded and "/./" not in padded and "/../" not in padded


def _under(normal: str, root: str) -> str | None:
    """`normal` relative to `root` ("" for the root itself), None when it is not inside it."""
    if normal == root:
        return ""
    prefix = root.rstrip("/") + "/"
    return normal[len(prefix):] if normal.startswith(prefix) else None


class Storage:
    """The files of one table, addressed by paths relative to its base path.

    Names that are not UTF-8 are refused wherever a listing meets them (`CorruptFileError` naming
    the path with backslash escapes) rather than skipped: Hudi only writes UTF-8 names and Java reads
    such a name as a different one (U+FFFD), so what Hudi would make of it cannot be known; the user
    is shown which file to remove instead of a table that silently is not what Hudi sees.
    """

    def __init__(self, base_uri: str, options: Mapping[str, Any] | None = None):
        _require_utf8(str(base_uri))
        self.scheme, self.root = _split_base(str(base_uri))
        self.base_uri = self.root if self.scheme == "file" else f"{self.scheme}://{self.root}"
        self.options = dict(options or {})
        self._fs_options = self._typed_options()
        self._fs: pafs.FileSystem | None = None
        self._batch_client: Any = None  # boto3's S3 client for batch deletes; False: none
        # A table reached through a symlink: paths recorded through either spelling are its own.
        self._real_root = os.path.realpath(self.root) if self.is_local else self.root
        self._resolved_dirs: dict[str, str] = {}
        # Every path inside one table starts with one of a few spellings of its base: those are
        # matched as plain string prefixes, so the per-file cost is a string comparison, not a parse.
        self._uri_base = f"file:{self.root}" if self.is_local else self.base_uri
        self._prefixes = self._base_prefixes()

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

    def _typed_options(self) -> dict[str, Any]:
        """The options as the filesystem takes them, checked before any I/O (bad ones: exit 2)."""
        if self.scheme == "s3":
            return s3_options(self.options)
        if self.scheme in ("gs", "gcs"):
            return gcs_options(self.options)
        if self.options and (self.scheme == "file" or self.scheme in _PYARROW_SCHEMES):
            raise InvalidConfigError(f"{self.base_uri}: storage options {', '.join(sorted(self.options))} "
                                     f"do not apply to {self.scheme} paths")
        return self.options

    def _open_filesystem(self) -> pafs.FileSystem:
        pafs = _pafs()
        if self.scheme == "file":
            return pafs.LocalFileSystem()
        if self.scheme == "s3":
            return pafs.S3FileSystem(**self._fs_options)
        if self.scheme in ("gs", "gcs"):
            return pafs.GcsFileSystem(**self._fs_options)
        if self.scheme in _PYARROW_SCHEMES:
            fs, _ = pafs.FileSystem.from_uri(self.base_uri)
            return fs
        return pafs.PyFileSystem(pafs.FSSpecHandler(self._fsspec_filesystem()))

    def _fsspec_filesystem(self) -> Any:
        """Any other scheme through fsspec; an unknown scheme, a missing driver or options the driver
        does not take are bad input."""
        try:
            import fsspec

            driver = fsspec.get_filesystem_class(self.scheme)
        except ImportError as exc:
            raise InvalidConfigError(f"{self.base_uri}: scheme {self.scheme!r} needs fsspec and its "
                                     f"{self.scheme} driver ({exc})") from None
        except ValueError:
            raise InvalidConfigError(f"{self.base_uri}: unknown scheme {self.scheme!r} (local paths, "
                                     "file, s3, gs, hdfs, abfs, or an installed fsspec driver)") from None
        try:
            return driver(**self.options)
        except TypeError as exc:
            raise InvalidConfigError(f"{self.base_uri}: storage options {', '.join(sorted(self.options))} "
                                     f"refused by the {self.scheme} driver: {exc}") from None

    # ----------------------------------------------------------------- paths
    def _base_prefixes(self) -> tuple[str, ...]:
        """The spellings of `<base>/` that `relativize` accepts for a path inside the table."""
        if self.is_local:
            roots = dict.fromkeys((self.root, self._real_root))
            return tuple(f"{spelling}{root.rstrip('/')}/" for root in roots
                         for spelling in ("", "file:", "file://"))
        schemes = ("s3", "s3a", "s3n") if self.scheme == "s3" else (self.scheme,)
        return tuple(f"{scheme}://{self.root}/" for scheme in schemes)

    def relativize(self, path: str) -> str:
        """Map a relative path, an absolute path or a full URI to a path relative to the base.

        Raises `PathOutsideTableError` for anything that does not land inside the base path.
        """
        raw = str(path)
        if ":" not in raw and not raw.startswith("/"):
            if _is_plain(raw):
                return raw
        else:
            for prefix in self._prefixes:
                if raw.startswith(prefix):
                    rel = raw[len(prefix):]
                    if _is_plain(rel):
                        return rel
                    break
        return self._relativize_parsed(raw)

    def _relativize_parsed(self, raw: str) -> str:
        scheme, inner = split_uri(raw)
        if scheme:
            same_store = scheme == self.scheme or (self.scheme == "s3" and scheme in ("s3a", "s3n"))
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
        """Inside the base path as given or, locally, as resolved; a local path under neither (a
        plan recorded through a symlink to the table) is judged by its resolved directory, resolved
        once per directory, so the per-file cost stays a string comparison."""
        normal = posixpath.normpath(inner)
        for root in (self.root, self._real_root):
            rel = _under(normal, root)
            if rel is not None:
                return rel
        if self.is_local:
            directory, _, name = normal.rpartition("/")
            resolved = self._resolved_dirs.get(directory)
            if resolved is None:
                resolved = self._resolved_dirs[directory] = os.path.realpath(directory or "/")
            rel = _under(posixpath.join(resolved, name), self._real_root)
            if rel is not None:
                return rel
        raise PathOutsideTableError(f"{raw}: resolves outside the table base path {self.base_uri}")

    def _abs(self, rel: str) -> str:
        rel = self.relativize(rel)
        return f"{self.root}/{rel}" if rel else self.root

    def uri(self, rel: str) -> str:
        """The full path Hudi records for a file (`file:/...` locally, `scheme://bucket/...` else)."""
        rel = self.relativize(rel)
        return f"{self._uri_base}/{rel}" if rel else self._uri_base

    # ------------------------------------------------------------ operations
    def list(self, rel: str = "", recursive: bool = False) -> list[FileStatus]:
        """Entries of a directory (empty when it does not exist), with sizes and mtimes."""
        root = self._abs(rel)
        if self.is_local and not recursive:
            return self._list_local(root)
        infos = self.fs.get_file_info(_pafs().FileSelector(root, allow_not_found=True, recursive=recursive))
        cut = len(self.root) + 1
        directory = _pafs().FileType.Directory
        try:
            return [
                FileStatus(info.path[cut:], info.size or 0, (info.mtime_ns or 0) // 1_000_000,
                           info.type == directory)
                for info in infos
            ]
        except UnicodeDecodeError as exc:  # pyarrow decodes a local name only when asked for it
            raise CorruptFileError(_escaped(exc.object), NOT_UTF8) from None

    def _list_local(self, root: str) -> list[FileStatus]:
        """`list` of one local directory by `os.scandir` (what pyarrow reports: symbolic links
        followed, directories without a size), without pyarrow's per-entry objects."""
        try:
            with os.scandir(root) as it:
                entries = list(it)
        except (FileNotFoundError, NotADirectoryError):
            return []
        names = list(map(_ENTRY_NAME, entries))
        if not "".join(names).isascii():
            _utf8_names(root, names, skip=False)  # raises naming the first name that is not UTF-8
        prefix = root[len(self.root) + 1:] + "/" if root != self.root else ""
        found = []
        for entry in entries:
            try:
                stat = entry.stat()
            except FileNotFoundError:  # gone since the listing, or a dangling link
                continue
            is_dir = entry.is_dir()
            found.append(FileStatus(prefix + entry.name, 0 if is_dir else stat.st_size,
                                    stat.st_mtime_ns // 1_000_000, is_dir))
        return found

    def list_names(self, rel: str = "", skip_undecodable: bool = False) -> tuple[list[str], list[str]]:
        """(file names, subdirectory names) of a directory (see `list_directory`)."""
        listing = self.list_directory(rel, skip_undecodable)
        return listing.files, listing.dirs

    def list_directory(self, rel: str = "", skip_undecodable: bool = False) -> DirectoryListing:
        """A directory's file and subdirectory names: the cheapest listing (empty when it is gone).

        Locally this is one `os.scandir` without a stat per file, the floor of any listing; object
        stores return sizes with the names, and those are kept. A name that is not UTF-8 is refused,
        or left out with `skip_undecodable` (for walks over folders that are not a table's).
        """
        root = self._abs(rel)
        if not self.is_local:
            entries = self.list(rel)
            return DirectoryListing([e.name for e in entries if not e.is_dir],
                                    [e.name for e in entries if e.is_dir],
                                    {e.name: e.size for e in entries if not e.is_dir})
        try:
            directory = os.open(root, os.O_RDONLY | _O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError):
            return DirectoryListing([], [])
        # Loops in C (map, compress) over the entries: this runs once per file of the table. Scanned
        # by descriptor, an entry's path is its name (no string joined per file), and `is_dir()`
        # without a keyword is the cheaper call; it follows symlinks, so where one is listed the
        # entries are asked again without following (a symlink lists as a file, as `lstat` sees it).
        try:
            with os.scandir(directory) as it:
                entries = list(it)
            names = list(map(_ENTRY_NAME, entries))
            is_dir = list(map(os.DirEntry.is_dir, entries))
            if any(is_dir) and any(map(os.DirEntry.is_symlink, entries)):
                is_dir = list(map(_ENTRY_IS_DIR, entries))
        finally:
            os.close(directory)
        if any(is_dir):
            files = list(itertools.compress(names, map(operator.not_, is_dir)))
            dirs = list(itertools.compress(names, is_dir))
        else:
            files, dirs = names, []
        if "".join(files).isascii() and "".join(dirs).isascii():  # one C pass, not one call per name
            return DirectoryListing(files, dirs)
        return DirectoryListing(_utf8_names(root, files, skip_undecodable),
                                _utf8_names(root, dirs, skip_undecodable))

    def file_sizes(self, rel: str, names: Iterable[str], listing: DirectoryListing | None = None
                   ) -> list[int]:
        """Sizes of some files of one directory, in the order of `names`; 0 for a file that is gone.

        From `listing` when it carries sizes (no request at all), else locally one `stat` per named
        file relative to the open directory, else one listing with sizes.
        """
        names = list(names)
        if listing is not None and listing.sizes is not None:
            return [listing.sizes.get(name, 0) for name in names]
        if not self.is_local:
            return self.file_sizes(rel, names, self.list_directory(rel))
        try:
            directory = os.open(self._abs(rel), os.O_RDONLY | _O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError):
            return [0] * len(names)
        stat = functools.partial(os.stat, dir_fd=directory, follow_symlinks=False)
        try:
            try:  # one C loop over the names; a file gone meanwhile sends us the slow way
                return list(map(_ST_SIZE, map(stat, names)))
            except FileNotFoundError:
                return [self._size_or_zero(stat, name) for name in names]
        finally:
            os.close(directory)

    @staticmethod
    def _size_or_zero(stat: Any, name: str) -> int:
        try:
            return stat(name).st_size
        except FileNotFoundError:
            return 0

    def status(self, rel: str) -> FileStatus | None:
        info = self.fs.get_file_info(self._abs(rel))
        if info.type == _pafs().FileType.NotFound:
            return None
        return FileStatus(self.relativize(rel), info.size or 0, (info.mtime_ns or 0) // 1_000_000,
                          info.type == _pafs().FileType.Directory)

    def exists(self, rel: str) -> bool:
        if self.is_local:  # what pyarrow's local get_file_info does, without importing pyarrow
            try:
                os.stat(self._abs(rel))
            except (FileNotFoundError, NotADirectoryError):
                return False
            return True
        return self.fs.get_file_info(self._abs(rel)).type != _pafs().FileType.NotFound

    def read(self, rel: str) -> bytes:
        path = self._abs(rel)
        if self.is_local:
            return _read_local(path)
        with self.fs.open_input_stream(path) as stream:
            return stream.readall()

    def _write_failed(self, rel: str, exc: OSError) -> StorageError:
        reason = exc.strerror or str(exc)
        return StorageError(f"{self.uri(rel)}: could not be written ({reason}); no partial file was left")

    def write(self, rel: str, data: bytes) -> None:
        """Replace a file's content; readers see the old or the new content, never a mix."""
        path = self._abs(rel)
        try:
            if self.is_local:
                with _written_aside(path, data) as tmp:
                    os.replace(tmp, path)
                return
            with self.fs.open_output_stream(path) as stream:
                stream.write(data)
        except OSError as exc:
            raise self._write_failed(rel, exc) from exc

    def create_if_absent(self, rel: str, data: bytes) -> bool:
        """Write a new file whole, only if no file is there (instant files are write-once).

        Returns False, writing nothing, when the file exists. Locally the file appears atomically
        and complete (written aside, then hard-linked); object stores only expose complete objects,
        but their check-then-put leaves a window that Hudi itself leaves too.
        """
        path = self._abs(rel)
        try:
            if self.is_local:
                with _written_aside(path, data) as tmp:
                    try:
                        os.link(tmp, path)
                    except FileExistsError:
                        return False
                return True
            if self.exists(rel):
                return False
            with self.fs.open_output_stream(path) as stream:
                stream.write(data)
            return True
        except OSError as exc:
            raise self._write_failed(rel, exc) from exc

    def mkdirs(self, rel: str) -> None:
        self.fs.create_dir(self._abs(rel), recursive=True)

    def delete_many(self, rels: Iterable[str]) -> DeleteResult:
        """Delete files; all paths are checked against the base path before the first delete.

        On S3, more than one file goes in DeleteObjects requests of up to `S3_DELETE_BATCH` keys
        (pyarrow deletes one object per request); a single file keeps pyarrow's delete, which tells
        a file already gone from a removed one (a rollback records the difference).
        """
        paths = [(rel, self._abs(rel)) for rel in rels]
        if len(paths) > 1 and self.scheme == "s3" and self._s3_batch_client() is not None:
            return self._delete_s3_batches(paths)
        result = DeleteResult()
        delete = os.unlink if self.is_local else self.fs.delete_file  # locally one syscall, no checks
        for rel, path in paths:
            try:
                delete(path)
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

    def delete_checked(self, rels: Iterable[str]) -> DeleteResult:
        """`delete_many` of files the table's state depends on (timeline state files, plans,
        heartbeats): one that could not be deleted raises `StorageError` naming it, so no run reports
        done what it left undone. A file already gone counts as deleted."""
        result = self.delete_many(rels)
        if result.failed:
            rel, why = next(iter(result.failed.items()))
            raise StorageError(f"{self.uri(rel)}: could not be deleted ({why})")
        return result

    def delete_in(self, directory: str, names: Sequence[str]) -> DeleteResult:
        """`delete_many` of plain file names directly inside one directory (results as relative
        paths). Locally the directory is opened once and each unlink is relative to it: the kernel
        resolves the directory's path once, not once per file."""
        prefix = f"{directory}/" if directory else ""
        if any("/" in name or name in ("", ".", "..") for name in names):
            raise PathOutsideTableError(f"{self.base_uri}: not a plain file name in {directory!r}")
        if not self.is_local:
            return self.delete_many(prefix + name for name in names)
        try:
            fd = os.open(self._abs(directory), os.O_RDONLY | _O_DIRECTORY)
        except OSError:  # gone, or not a directory: each file takes `delete_many`'s own course
            return self.delete_many(prefix + name for name in names)
        result = DeleteResult()
        try:
            for name in names:
                try:
                    os.unlink(name, dir_fd=fd)
                except FileNotFoundError:
                    result.missing.append(prefix + name)
                except OSError as exc:
                    if self.exists(prefix + name):
                        result.failed[prefix + name] = str(exc)
                    else:
                        result.missing.append(prefix + name)
                else:
                    result.deleted.append(prefix + name)
        finally:
            os.close(fd)
        return result

    def _s3_batch_client(self) -> Any:
        if self._batch_client is None:
            self._batch_client = s3_batch_client(self.options) or False
        return self._batch_client or None

    def _delete_s3_batches(self, paths: list[tuple[str, str]]) -> DeleteResult:
        """DeleteObjects in batches; a key the store refuses is `failed` with the store's reason. A
        request refused whole (credentials, network) raises: no key of it can be known gone."""
        from botocore.exceptions import BotoCoreError, ClientError

        client = self._s3_batch_client()
        bucket = self.root.partition("/")[0]
        result = DeleteResult()
        for start in range(0, len(paths), S3_DELETE_BATCH):
            keys = {path.partition("/")[2]: rel for rel, path in paths[start:start + S3_DELETE_BATCH]}
            try:
                answer = client.delete_objects(
                    Bucket=bucket, Delete={"Objects": [{"Key": key} for key in keys], "Quiet": True})
            except (BotoCoreError, ClientError) as exc:
                raise StorageError(f"{self.base_uri}: deleting {len(keys)} objects failed ({exc}); "
                                   f"{len(result.deleted)} were deleted before") from exc
            refused = {error["Key"]: f"{error.get('Code')}: {error.get('Message')}"
                       for error in answer.get("Errors", [])}
            for key, rel in keys.items():
                if key in refused:
                    result.failed[rel] = refused[key]
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

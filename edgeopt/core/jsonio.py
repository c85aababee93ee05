"""Canonical JSON: hashing, byte-identical output, all-or-nothing writes and bounded reads.

A path ending in ``.gz`` is written and read gzip-compressed (e.g. ``result.json.gz``).

Reading (`read_json`) is bounded: only a regular file is read (a FIFO, a device such as
``/dev/zero``, a directory or ``-`` is refused before it is opened, so nothing blocks), and a
file above the input cap (`DEFAULT_MAX_INPUT_BYTES`, 64 MiB, after gzip decompression; the CLI's
``--max-input-bytes``) is refused before it is parsed. JSON with a duplicate key is refused,
naming the key's path (Python's decoder would silently keep the last value).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import math
import os
import re
import stat
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from edgeopt.core.errors import InputError


def _default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _clean(obj: Any) -> Any:
    """Replace non-finite floats by None so that the output is strict JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _is_plain(obj: Any) -> bool:
    """Whether ``obj`` is JSON data already: str-keyed dicts, lists, str, int, bool, None, finite floats.

    Such data dumps to the canonical bytes directly; anything else (numpy
    values, tuples, int keys, NaN) takes the converting path of `dumps`.
    """
    stack = [obj]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is dict:
            for k in x:
                if type(k) is not str:
                    return False
            stack.extend(x.values())
        elif t is list:
            stack.extend(x)
        elif t is float:
            if not math.isfinite(x):
                return False
        elif not (t is str or t is int or t is bool or x is None):
            return False
    return True


def dumps(obj: Any, *, indent: int | None = 2) -> str:
    """Deterministic JSON text (sorted keys), the same bytes for the same data."""
    if not _is_plain(obj):  # convert numpy values, int keys, tuples and NaN first (slower)
        obj = _clean(json.loads(json.dumps(obj, default=_default)))
    return json.dumps(obj, sort_keys=True, indent=indent, allow_nan=False) + "\n"


def to_json_text(obj: Any) -> str:
    """Compact JSON text of ``obj`` as it stands (numpy values converted; NaN and Infinity kept, for the
    validator to name), for pydantic's strict JSON validation (`edgeopt.core.family.parse_model`)."""
    return json.dumps(obj, default=_default, separators=(",", ":"))


def sha256_of(obj: Any) -> str:
    """SHA-256 of the canonical compact JSON of ``obj``."""
    return hashlib.sha256(dumps(obj, indent=None).encode()).hexdigest()


def umask_mode(path: str | os.PathLike[str]) -> None:
    """Give a file made by `tempfile.mkstemp` (mode 0600) the mode a plain ``open()`` would: 0666 less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def check_output_path(path: str | os.PathLike[str] | None, *, what: str = "output") -> None:
    """Refuse, before any work is done, an output path that cannot be written (InputError naming ``what``).

    Refused: an empty path (``-o ""``, which a `pathlib.Path` reads as ``.``), a path that exists and is
    not a regular file (a directory, a device such as ``/dev/full``, a FIFO, a socket: the atomic rename
    of `atomic_file` would replace the node itself, so such a path is never written), a path whose
    nearest existing ancestor is not a writable directory (``/proc/x.json``, a file used as a folder).
    A symbolic link is judged by what it points to. Nothing is created here; a write that still fails
    is refused by `write_json`.
    """
    if path is None:
        return
    text = os.fspath(path)
    if text in ("", "."):
        raise InputError(what, "empty path: give a file name")
    p = Path(text)
    refuse_non_regular(p, what=what)
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(what, f"cannot write {p}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK) or _is_pseudo_fs(parent):
        raise InputError(what, f"cannot write {p}: {parent} is not writable")


def refuse_non_regular(path: str | os.PathLike[str], *, what: str = "output") -> None:
    """Raise `InputError` if ``path`` exists and is not a regular file (directory, device, FIFO, socket).

    ``os.stat`` never opens the path, so a FIFO cannot block here. A dangling symbolic link or a
    missing path passes: writing creates a new regular file.
    """
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise InputError(what, f"cannot write {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise InputError(what, f"{path} is a directory: give a file name")
    kind = _not_regular(mode)
    if kind is not None:
        raise InputError(what, f"{path} exists and is {kind}, not a regular file: refusing to replace it")


def _is_pseudo_fs(path: Path) -> bool:
    """Whether ``path`` lies in /proc or /sys, where root has write access yet no file can be created."""
    resolved = path.resolve()
    return any(resolved == Path(r) or Path(r) in resolved.parents for r in ("/proc", "/sys"))


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], *, what: str = "output") -> Iterator[str]:
    """A temporary file next to ``path`` to write to; renamed onto ``path`` when the block ends well.

    The file at ``path`` is then whole or absent (a failure or Ctrl-C removes the temporary file),
    it gets the user's umask (not mkstemp's 0600), and a path that cannot be written is an
    `InputError` naming ``what`` (exit 2), checked by `check_output_path` before anything is created.
    """
    check_output_path(path, what=what)
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        os.close(fd)
    except OSError as exc:
        raise InputError(what, f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        yield tmp
        umask_mode(tmp)
        refuse_non_regular(target, what=what)  # again: a node may have appeared while we worked
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(what, f"cannot write {target}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2, what: str = "output") -> None:
    """Write ``obj`` as canonical JSON atomically (`atomic_file`): the file is whole or absent.

    ``indent=None`` writes compact JSON (results: no whitespace); a path ending
    in ``.gz`` is gzip-compressed (with a fixed mtime, so equal data give equal bytes). A path
    that cannot be written is an `InputError` naming ``what``, and nothing is left behind.
    """
    text = dumps(obj, indent=indent)
    with atomic_file(path, what=what) as tmp:
        if Path(path).suffix == ".gz":
            with open(tmp, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as fh:
                fh.write(text.encode())
        else:
            with open(tmp, "w") as fh:
                fh.write(text)


#: Default cap on the bytes of one input file (after gzip decompression): 64 MiB. The largest
#: file the toolkit writes (a paper-size instance or result) is a few MB; a 200 MB file took
#: more than 30 s and 1.6 GB to parse. The CLI's ``--max-input-bytes`` changes it.
DEFAULT_MAX_INPUT_BYTES = 64 * 2**20

_max_input_bytes = DEFAULT_MAX_INPUT_BYTES


def max_input_bytes() -> int:
    """The cap `read_json` applies now."""
    return _max_input_bytes


def set_max_input_bytes(limit: int | None) -> int:
    """Set the cap `read_json` applies (None: back to the default); returns the previous cap."""
    global _max_input_bytes
    previous = _max_input_bytes
    if limit is None:
        limit = DEFAULT_MAX_INPUT_BYTES
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InputError("max_input_bytes", f"must be an integer >= 1, got {limit!r}")
    _max_input_bytes = limit
    return previous


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_regular(mode: int) -> str | None:
    """What a non-regular file is (``a FIFO``...), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _too_big(what: str, p: Path, size: str, cap: int) -> InputError:
    return InputError(what, f"{p} {size} the input cap of {cap:,} bytes "
                               "(raise it with --max-input-bytes)")


def read_bytes(path: str | os.PathLike[str], *, what: str = "file", max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file, at most ``max_bytes`` (default: the input cap) after gzip decompression.

    Anything but a regular file (a FIFO, ``/dev/zero``, ``/dev/urandom``, a directory, ``-``) is refused
    after an ``os.stat``, which never blocks; the file is opened non-blocking and checked again (it may
    have been swapped), and read in bounded chunks, so neither a growing file nor a gzip bomb can
    take more than the cap. Every failure is an `InputError` naming ``what`` and the file (exit 2).
    """
    cap = _max_input_bytes if max_bytes is None else max_bytes
    text = os.fspath(path)
    if text in ("", "-"):
        raise InputError(what, "reading standard input ('-') or an empty path is not supported: give a file")
    p = Path(text)
    try:
        st = os.stat(p)  # never blocks, unlike opening a FIFO
        kind = _not_regular(st.st_mode)
        if kind is not None:
            raise InputError(what, f"{p} is {kind}, not a regular file")
        if st.st_size > cap:
            raise _too_big(what, p, f"is {st.st_size:,} bytes, above", cap)
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            kind = _not_regular(os.fstat(fd).st_mode)
            if kind is not None:
                raise InputError(what, f"{p} is {kind}, not a regular file")
            chunks, size = [], 0
            while size <= cap:
                chunk = os.read(fd, min(1 << 20, cap + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        finally:
            os.close(fd)
    except FileNotFoundError:
        raise InputError(what, f"file not found: {p}") from None
    except OSError as exc:
        raise InputError(what, f"cannot read {p}: {exc.strerror or exc.__class__.__name__}") from None
    if size > cap:
        raise _too_big(what, p, "is larger than", cap)
    data = b"".join(chunks)
    if p.suffix == ".gz":
        data = _gunzip(data, cap, p, what)
    return data


def _gunzip(data: bytes, cap: int, p: Path, what: str) -> bytes:
    """Decompress every gzip member of ``data``, refusing more than ``cap`` bytes of output."""
    out: list[bytes] = []
    size = 0
    try:
        while data:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            chunk = d.decompress(data, cap + 1 - size)
            size += len(chunk)
            if size > cap or d.unconsumed_tail:
                raise _too_big(what, p, "decompresses to more than", cap)
            if not d.eof:
                raise InputError(what, f"cannot read {p}: truncated gzip data")
            out.append(chunk)
            data = d.unused_data.lstrip(b"\0")
    except zlib.error as exc:
        raise InputError(what, f"cannot read {p}: not gzip data ({exc})") from None
    return b"".join(out)


def read_json(path: str | os.PathLike[str], *, what: str = "file", max_bytes: int | None = None) -> Any:
    """Read a JSON file through `read_bytes` (bounded, regular files only); any failure is an `InputError`."""
    p = Path(path)
    data = read_bytes(p, what=what, max_bytes=max_bytes)
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise InputError(what, f"cannot read {p}: not UTF-8 text") from None
    return loads(text, what=what, name=str(p))


#: Deepest nesting of arrays/objects a file may have: every family's data is a few levels deep,
#: and Python's JSON decoder and pydantic recurse once per level (a RecursionError past ~1000).
MAX_DEPTH = 64


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


#: Characters `_depth_ok` looks at per step: its arrays stay a few MB whatever the file's size (a 55 MB
#: result once took 800 MB in one pass over int64 arrays).
_DEPTH_CHUNK = 1 << 22


def _depth_ok(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether no array/object in ``text`` nests deeper than ``limit`` (brackets inside strings ignored).

    The text is scanned in chunks of `_DEPTH_CHUNK` characters, the depth carried from one to the next,
    so the memory is bounded by the chunk, not by the file.
    """
    raw = _STRING.sub("", text).encode()
    depth = 0
    for start in range(0, len(raw), _DEPTH_CHUNK):
        chunk = np.frombuffer(raw, dtype=np.uint8, count=min(_DEPTH_CHUNK, len(raw) - start), offset=start)
        step = np.zeros(chunk.size, dtype=np.int32)
        step[(chunk == ord("[")) | (chunk == ord("{"))] = 1
        step[(chunk == ord("]")) | (chunk == ord("}"))] = -1
        running = np.cumsum(step, dtype=np.int32)
        if depth + int(running.max()) > limit:
            return False
        depth += int(running[-1])
    return True


def loads(text: str, *, what: str = "file", name: str = "input") -> Any:
    """Parse JSON text; malformed or too deeply nested text becomes an `InputError` named ``what``."""
    if text.count("[") + text.count("{") > MAX_DEPTH and not _depth_ok(text):
        raise InputError(what, f"{name} nests arrays/objects deeper than {MAX_DEPTH} levels")
    dups: dict[int, tuple[dict, str]] = {}

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict:
        d = dict(pairs)
        if len(d) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    dups[id(d)] = (d, key)  # the dict is kept alive, so its id stays unique
                    break
                seen.add(key)
        return d

    try:
        data = json.loads(text, object_pairs_hook=pairs_hook)
    except json.JSONDecodeError as exc:
        raise InputError(what, f"{name} is not valid JSON (line {exc.lineno}, column {exc.colno})") from None
    except (RecursionError, ValueError) as exc:  # ValueError: e.g. an integer with too many digits
        raise InputError(what, f"{name} cannot be decoded: {exc.__class__.__name__}: {exc}"[:300]) from None
    if dups:
        raise InputError(what, f"{name} has a duplicate key {_duplicate_path(data, dups)} "
                               "(JSON would silently keep the last value)")
    return data


def _duplicate_path(data: Any, dups: dict[int, tuple[dict, str]]) -> str:
    """The dotted path of the first duplicate key found (depth first), e.g. ``jobs.3.epochs``."""
    for path, node in tree_paths(data):
        if isinstance(node, dict) and id(node) in dups:
            return repr(".".join(map(str, (*path, dups[id(node)][1]))))
    return repr(next(iter(dups.values()))[1])  # pragma: no cover - every recorded dict is in the tree


# -- paths into a JSON tree (tests, the CLI probe, scripts that edit an instance file) ------------

JsonPath = tuple[str | int, ...]


def tree_paths(node: Any, prefix: JsonPath = ()) -> Iterator[tuple[JsonPath, Any]]:
    """Every ``(path, value)`` of a JSON tree, depth first, the root (path ``()``) included."""
    yield prefix, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from tree_paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from tree_paths(v, (*prefix, i))


def number_paths(node: Any) -> list[JsonPath]:
    """Paths of the numbers of a JSON tree (booleans are not numbers here), depth first."""
    return [p for p, v in tree_paths(node) if isinstance(v, (int, float)) and not isinstance(v, bool)]


def get_path(node: Any, path: JsonPath) -> Any:
    """The value at ``path``."""
    for key in path:
        node = node[key]
    return node


def set_path(node: Any, path: JsonPath, value: Any) -> None:
    """Replace the value at ``path`` (not the root) in place."""
    get_path(node, path[:-1])[path[-1]] = value

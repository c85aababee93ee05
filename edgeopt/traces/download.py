"""``edgeopt download-trace``: fetch a public trace that edgeopt does not redistribute, and verify it.

The Alibaba GPU v2023 trace is for research and study use only and carries no licence that allows
redistribution, so edgeopt ships only its address and SHA-256 (of the upstream files at a pinned
commit); the ITP trace is shipped (`edgeopt.traces.shipped_itp_path`), but its upstream tarball can be
fetched the same way. A file is written under a temporary name and renamed only once its SHA-256
matches: a failed or interrupted download leaves nothing behind.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import urllib.error
import urllib.request
from pathlib import Path

from edgeopt.core import InputError

#: Most bytes one downloaded file may have (the largest known one is 0.6 MB; this leaves room).
MAX_DOWNLOAD_BYTES = 512 * 1024**2


@dataclasses.dataclass(frozen=True)
class RemoteFile:
    """One file of a trace: where it lives, its SHA-256, and the name it gets in the target folder."""

    name: str
    url: str
    sha256: str


_ALIBABA = ("https://raw.githubusercontent.com/alibaba/clusterdata/"
            "50a91c7c74abe3b658188dc78ac1dd302970d40c/cluster-trace-gpu-v2023/csv/")

#: Known traces: name -> files. Pinned to a commit, so the checksums stay valid.
SOURCES: dict[str, tuple[RemoteFile, ...]] = {
    "alibaba-gpu-v2023": (
        RemoteFile("openb_pod_list_default.csv", _ALIBABA + "openb_pod_list_default.csv",
                   "1ee7ed79c27a3b0861cda8ddba86a004c6aba904caafa329a76ae93ca63834a8"),
        RemoteFile("openb_node_list_all_node.csv", _ALIBABA + "openb_node_list_all_node.csv",
                   "5a85c2af79c66a1efff8bbcbda430400aae56d8431370d738480967e1a9c6b15"),
    ),
    "itp-elasticflow": (
        RemoteFile("raw-traces.tar.gz",
                   "https://raw.githubusercontent.com/microsoft/elasticflow-traces/"
                   "277ed24d0e908c31a1c98145819e2e3853d8ac00/data/raw-traces.tar.gz",
                   "67398e1a89245c50ae0881bf997e6cda0c95f9f47980af5bc56d67998965669f"),
    ),
}


def _fetch(remote: RemoteFile, target: Path, timeout: float) -> None:
    tmp = target.with_name(f".{target.name}.part")
    digest = hashlib.sha256()
    size = 0
    try:
        with urllib.request.urlopen(remote.url, timeout=timeout) as resp, open(tmp, "wb") as out:
            while chunk := resp.read(1 << 20):
                size += len(chunk)
                if size > MAX_DOWNLOAD_BYTES:
                    raise InputError("download", f"{remote.url} is larger than {MAX_DOWNLOAD_BYTES} bytes")
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != remote.sha256:
            raise InputError("download", f"{remote.name}: SHA-256 {digest.hexdigest()} does not match the "
                                         f"expected {remote.sha256} (file not written)")
        os.replace(tmp, target)
    except InputError:
        raise
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise InputError("download", f"cannot fetch {remote.url}: {reason}") from None
    finally:
        tmp.unlink(missing_ok=True)


def download_trace(name: str, to: str | Path, *, timeout: float = 60.0) -> list[Path]:
    """Fetch every file of trace ``name`` into folder ``to`` (created if needed); returns their paths.

    A file already there with the right SHA-256 is kept. InputError (exit 2 in the CLI) for an unknown
    name, an unreachable address, or a checksum that does not match.
    """
    if name not in SOURCES:
        raise InputError("name", f"unknown trace {name!r} (known: {', '.join(SOURCES)})")
    folder = Path(to)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError("to", f"cannot create {folder}: {exc.strerror or exc}") from None
    paths = []
    for remote in SOURCES[name]:
        target = folder / remote.name
        if not (target.is_file() and sha256_of(target) == remote.sha256):
            _fetch(remote, target, timeout)
        paths.append(target)
    return paths


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()

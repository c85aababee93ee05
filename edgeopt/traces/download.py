"""``edgeopt download-trace``: fetch a public trace that edgeopt does not redistribute, and verify it.

The Alibaba GPU v2023 trace is for research and study use only and carries no licence that allows
redistribution, so edgeopt ships only its address and SHA-256 (of the upstream files at a pinned
commit); the ITP trace is shipped (`edgeopt.traces.shipped_itp_path`), but its upstream tarball can be
fetched the same way. Every target file is checked before anything is fetched (an existing device,
FIFO, socket or directory there is refused, never replaced: `edgeopt.core.jsonio.check_output_path`),
and written through `edgeopt.core.jsonio.atomic_file`, renamed into place only once its SHA-256
matches: a failed or interrupted download leaves nothing behind. A machine without internet access
gets one line saying so, with the shipped trace's path and how to use a copy fetched elsewhere.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from edgeopt.core import InputError
from edgeopt.core.jsonio import atomic_file, check_output_path

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


#: The trace shipped with edgeopt (`edgeopt.traces.loaders.SHIPPED_ITP`; named here so that this
#: module does not import pandas).
_SHIPPED_ITP = Path(__file__).with_name("data") / "itp_elasticflow_jobs.csv.gz"


def _unreachable(remote: RemoteFile, reason: object) -> InputError:
    """The one line for an address that cannot be reached: what to do without a network."""
    host = urllib.parse.urlsplit(remote.url).hostname or remote.url
    detail = getattr(reason, "strerror", None) or str(reason) or reason.__class__.__name__
    return InputError("download", f"cannot reach {host} from this machine ({detail}); the ITP trace ships with "
                                  f"edgeopt ({_SHIPPED_ITP}), and a copy of {remote.name} downloaded elsewhere "
                                  "can be passed as a file (edgeopt trace-stats FILE, edgeopt generate FAMILY "
                                  "--trace FILE)")


@contextlib.contextmanager
def _network_errors(remote: RemoteFile) -> Iterator[None]:
    """Network failures inside the block as one-line `InputError`s."""
    try:
        yield
    except urllib.error.HTTPError as exc:  # the host answered: the file is gone or moved
        raise InputError("download", f"{remote.url} answered HTTP {exc.code} ({exc.reason})") from None
    except urllib.error.URLError as exc:
        raise _unreachable(remote, exc.reason) from None
    except (TimeoutError, ConnectionError) as exc:
        raise _unreachable(remote, exc) from None
    except ValueError as exc:  # e.g. http.client.IncompleteRead
        raise InputError("download", f"cannot fetch {remote.url}: {exc}") from None


def _fetch(remote: RemoteFile, target: Path, timeout: float) -> None:
    digest = hashlib.sha256()
    size = 0
    with _network_errors(remote):  # connected before the folder or a temporary file is created
        resp = urllib.request.urlopen(remote.url, timeout=timeout)
    with resp, atomic_file(target, what="to") as tmp:  # the temporary file is removed unless all ends well
        with _network_errors(remote), open(tmp, "wb") as out:
            while chunk := resp.read(1 << 20):
                size += len(chunk)
                if size > MAX_DOWNLOAD_BYTES:
                    raise InputError("download", f"{remote.url} is larger than {MAX_DOWNLOAD_BYTES} bytes")
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != remote.sha256:
            raise InputError("download", f"{remote.name}: SHA-256 {digest.hexdigest()} does not match the "
                                         f"expected {remote.sha256} (file not written)")


def download_trace(name: str, to: str | Path, *, timeout: float = 60.0) -> list[Path]:
    """Fetch every file of trace ``name`` into folder ``to`` (created if needed); returns their paths.

    A file already there with the right SHA-256 is kept. Every target is checked before the first byte
    is fetched: an existing path there that is not a regular file (a device, a FIFO, a directory) is
    refused, never replaced, and so is a ``to`` that is not a folder. InputError (exit 2 in the CLI)
    for an unknown name, such a target, an unreachable address, or a checksum that does not match.
    """
    if name not in SOURCES:
        raise InputError("name", f"unknown trace {name!r} (known: {', '.join(SOURCES)})")
    folder = Path(to)
    if folder.exists() and not folder.is_dir():
        raise InputError("to", f"{folder} exists and is not a folder")
    targets = [(remote, folder / remote.name) for remote in SOURCES[name]]
    for _, target in targets:
        check_output_path(target, what="to")
    paths = []
    for remote, target in targets:
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

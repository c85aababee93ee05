"""Errors the toolkit raises on purpose.

`InputError` is the one for bad user input: the CLI turns it into a one-line
message and exit code 2. It always names the offending field.
"""

from __future__ import annotations

from collections.abc import Sequence


class InputError(ValueError):
    """Bad input: an unreadable file, a schema error, an unknown name.

    Args:
        field: dotted path of the offending field (``jobs.3.epochs``), or a
            short name of the input (``instance``, ``algorithm``).
        message: what is wrong, in one line.
        details: when the input has several errors, all of them as ``field: message`` lines (the
            first one is ``field``/``message``); the CLI prints them one per line under the summary.
    """

    def __init__(self, field: str, message: str, *, details: Sequence[str] = ()) -> None:
        self.field = field
        self.message = message
        #: every error found (``field: message`` each, the first being this one), when several
        self.details = list(details)
        more = f" (and {len(self.details) - 1} more error(s))" if len(self.details) > 1 else ""
        super().__init__(f"{field}: {message}{more}")

    def __reduce__(self) -> tuple:
        # pickled whole (worker processes, Dask) so it arrives with its field, message and details
        return (_input_error, (self.field, self.message, tuple(self.details)))


def _input_error(field: str, message: str, details: tuple[str, ...]) -> InputError:
    return InputError(field, message, details=details)


class ModelError(RuntimeError):
    """A solver or algorithm produced something that contradicts the model.

    Raised, for example, when a solver reports *optimal* but the extracted
    schedule fails the validator: a defect to fix, never a result to report.
    """

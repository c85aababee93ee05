"""Errors the toolkit raises on purpose.

`InputError` is the one for bad user input: the CLI turns it into a one-line
message and exit code 2. It always names the offending field.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad input: an unreadable file, a schema error, an unknown name.

    Args:
        field: dotted path of the offending field (``jobs.3.epochs``), or a
            short name of the input (``instance``, ``algorithm``).
        message: what is wrong, in one line.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


class ModelError(RuntimeError):
    """A solver or algorithm produced something that contradicts the model.

    Raised, for example, when a solver reports *optimal* but the extracted
    schedule fails the validator: a defect to fix, never a result to report.
    """

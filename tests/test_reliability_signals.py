"""Issue 17 (Inputs): a signal gives exit 130 (SIGINT) or 143 (SIGTERM) whenever it arrives, also while
the command is exiting (it used to die by the signal there: exit -2 / -15)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The command, run as `edgeopt algorithms hetero`, with an exit handler that stalls (a stand-in for a
#: slow interpreter shutdown: solver threads, logging, temporary files) after printing a marker.
EXITING = textwrap.dedent("""
    import atexit, sys, time
    def stall():
        print("EXITING", flush=True)
        time.sleep(60)
    atexit.register(stall)
    from edgeopt.cli import main
    sys.argv = ["edgeopt", "algorithms", "hetero"]
    main()
""")


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_while_the_command_exits_gives_130_or_143(sig, code):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", EXITING], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:  # the marker: the command is done and the process is exiting
        if line.strip() == "EXITING":
            break
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - a signal that was swallowed
        proc.kill()
        raise
    assert proc.returncode == code, err
    assert "Traceback" not in err


def test_main_exits_with_the_commands_code_in_process():
    """Called with arguments (tests, scripts), `main` raises SystemExit as before."""
    from edgeopt.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["algorithms", "hetero", "--json"])
    assert exc.value.code == 0


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_the_imports_gives_130_or_143(sig, code):
    """The command imports for a second or more before `main` runs; a signal then used to kill it (-2/-15)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "edgeopt.cli", "algorithms", "hetero"],
                            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:  # the marker: typer is imported, which edgeopt.cli does after its first lines
        if line.rstrip().endswith("| typer"):
            break
    proc.send_signal(sig)
    try:
        proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover
        proc.kill()
        raise
    assert proc.returncode == code

"""The package ships (issue 21, section 6): ``python -m build`` makes an sdist and a wheel, and the wheel,
installed into a fresh virtual environment with no repository on the path, runs tapfinger's demo (an
exact solve and the learned policy, so the package data it needs, the checkpoints and configs, is inside)
and edgecloud's compiled online algorithm.

The fresh environment gets the dependencies from the running environment's site-packages through a
``.pth`` line (a plain path: the editable install's finder there is not run), so nothing is downloaded
and the wheel itself is installed with ``--no-deps``. Slow: about 45 s.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_written_in_one_place():
    import edgeopt

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert edgeopt.__version__ in (ROOT / "CHANGELOG.md").read_text()
    assert f"version: {edgeopt.__version__}" in (ROOT / "CITATION.cff").read_text()


@pytest.mark.slow
def test_wheel_installs_and_runs_outside_the_repository(tmp_path):
    dist = tmp_path / "dist"
    # --sdist --wheel: both from the source tree (the default builds the wheel again from the unpacked sdist)
    build = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir", str(dist),
                            str(ROOT)],
                           capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr[-2000:]
    assert "License classifiers are deprecated" not in build.stderr and "project.license" not in build.stderr
    wheels, sdists = list(dist.glob("*.whl")), list(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert any(n.endswith("checkpoints/tapfinger/model.safetensors") for n in names)
    assert any(n.startswith("formulations/hetero/") for n in names)

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}  # no repository on the path
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, env=env).stdout.strip()
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheels[0])], check=True,
                   env=env, cwd=tmp_path)
    # after the install: pip would otherwise take the editable edgeopt there as already installed
    (Path(site) / "shared_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    work = tmp_path / "elsewhere"
    work.mkdir()
    edgeopt = venv / "bin" / "edgeopt"

    def run(*args):
        proc = subprocess.run([str(edgeopt), *map(str, args)], cwd=work, env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout

    proc = subprocess.run([str(py), "-c", "import edgeopt, formulations; print(edgeopt.__file__, formulations.__file__)"],
                          cwd=work, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    where = proc.stdout
    assert str(ROOT) not in where and str(venv) in where
    import edgeopt as here

    assert run("--version").strip() == f"edgeopt {here.__version__}"
    # tapfinger: its learned policy loads the packaged checkpoint and config. The demo's work limit, not the
    # clock, ends the proof: the same at any load.
    demo = run("demo", "--family", "tapfinger")
    assert "optimal" in demo and "ratio to optimum" in demo and "vanilla_marl" in demo
    # edgecloud's online algorithm runs numba kernels: they compile and cache from the installed package too
    # (hetero's would as well, in 40 s of compiling instead of 15)
    run("generate", "edgecloud", "-o", "ec.json")
    run("run", "online", "ec.json", "-o", "ec_online.json")
    run("validate", "ec.json", "ec_online.json")

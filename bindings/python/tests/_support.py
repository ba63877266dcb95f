# SPDX-License-Identifier: MIT
"""Shared helpers of the binding tests: where the repository, the command and the header are.

The tests import the package from this checkout (bindings/python), whatever else is
installed, and find:

* the ``gpufit`` command: ``$GPUFIT_CLI`` or ``<repo>/build/gpufit``;
* the header: ``$GPUFIT_HEADER`` or ``<repo>/include/gpufit.h``;
* a C compiler: ``$CC`` or ``cc``.

Tests that need one of them are skipped when it is missing, so the suite also runs from an
unpacked source distribution.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

TESTS = pathlib.Path(__file__).resolve().parent
BINDING = TESTS.parent  # bindings/python
REPO = BINDING.parents[1]

if str(BINDING) not in sys.path:
    sys.path.insert(0, str(BINDING))


def cli_path():
    """The gpufit command to compare with, or None."""
    p = os.environ.get("GPUFIT_CLI") or str(REPO / "build" / "gpufit")
    return p if os.path.isfile(p) and os.access(p, os.X_OK) else None


def header_path():
    """include/gpufit.h, or None."""
    p = os.environ.get("GPUFIT_HEADER") or str(REPO / "include" / "gpufit.h")
    return p if os.path.isfile(p) else None


def compiler():
    """A C compiler command, or None."""
    cc = os.environ.get("CC") or "cc"
    return shutil.which(cc.split()[0]) and cc


def run_cli(*args):
    """Runs the gpufit command; returns (exit code, stdout, stderr)."""
    p = subprocess.run([cli_path()] + list(args), capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    """``gpufit estimate --json ARGS``: (exit code, parsed report)."""
    code, out, err = run_cli("estimate", "--json", *args)
    if code not in (0, 1, 5):  # fits, oom, marginal
        raise AssertionError("gpufit estimate --json %s exited %d: %s" % (args, code, err))
    return code, json.loads(out)


def python_env(**extra):
    """Environment for a child Python that imports this checkout's package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(BINDING) + (os.pathsep + env["PYTHONPATH"]
                                        if env.get("PYTHONPATH") else "")
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def run_python(code, env=None, cwd=None, args=()):
    """Runs ``python -c code`` (the interpreter running the tests)."""
    return subprocess.run([sys.executable, "-c", code] + list(args), capture_output=True,
                          text=True, env=env if env is not None else python_env(),
                          cwd=cwd, timeout=120)

# SPDX-License-Identifier: MIT
"""Packaging: the stdlib build backend makes a wheel that bundles the library, a source
distribution, and an editable wheel; an installed wheel imports with no GPUFIT_LIBRARY."""

import base64
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

import _support
import gpufit


def backend():
    spec = importlib.util.spec_from_file_location(
        "gpufit_build", str(_support.BINDING / "_build" / "gpufit_build.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class TestBackend(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.b = backend()
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_no_build_requirements(self):
        self.assertEqual(self.b.get_requires_for_build_wheel(), [])
        self.assertEqual(self.b.get_requires_for_build_sdist(), [])
        self.assertEqual(self.b.get_requires_for_build_editable(), [])

    def test_version_from_header(self):
        if _support.header_path() is None:
            self.skipTest("no header")
        self.assertEqual(self.b._version(), gpufit.__version__)

    def test_toml_fallback_parser(self):
        with open(_support.BINDING / "pyproject.toml") as f:
            text = f.read()
        p = self.b._parse_toml_project(text)
        self.assertEqual(p["name"], "gpufit")
        self.assertEqual(p["dynamic"], ["version"])
        self.assertIn("Programming Language :: C", p["classifiers"])
        self.assertEqual(p["scripts"], {"gpufit-py": "gpufit.cli:main_exit"})
        try:
            import tomllib
        except ImportError:
            return
        full = tomllib.loads(text)["project"]
        for k in ("name", "description", "requires-python", "readme", "classifiers"):
            self.assertEqual(p[k], full[k], k)

    def _check_record(self, zf):
        names = zf.namelist()
        record = [n for n in names if n.endswith(".dist-info/RECORD")][0]
        rows = [line.split(",") for line in zf.read(record).decode().splitlines()]
        self.assertEqual(sorted(r[0] for r in rows), sorted(names))
        for path, digest, size in rows:
            if path == record:
                continue
            data = zf.read(path)
            self.assertEqual(int(size), len(data), path)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            self.assertEqual(digest, "sha256=" + want.decode(), path)

    def test_wheel_bundles_library_and_imports(self):
        out = os.path.join(self.tmp.name, "wheel")
        name = self.b.build_wheel(out, {"bundle-library": os.path.realpath(
            gpufit.library_path)})
        self.assertRegex(name, r"^gpufit-\d+\.\d+\.\d+-py3-none-manylinux_2_\d+_\w+\.whl$")
        path = os.path.join(out, name)
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            self.assertIn("gpufit/_libs/libgpufit.so.0", names)
            self.assertIn("gpufit/__init__.py", names)
            self.assertIn("gpufit/py.typed", names)  # PEP 561
            self.assertFalse([n for n in names if "__pycache__" in n or n.startswith("tests")])
            di = [n for n in names if n.endswith(".dist-info/WHEEL")][0]
            wheel = zf.read(di).decode()
            self.assertIn("Root-Is-Purelib: false", wheel)
            self.assertIn("Tag: py3-none-manylinux_2_", wheel)
            meta = zf.read(di.replace("WHEEL", "METADATA")).decode()
            self.assertIn("Name: gpufit", meta)
            self.assertIn("Version: %s" % gpufit.__version__, meta)
            self._check_record(zf)
            mode = zf.getinfo("gpufit/_libs/libgpufit.so.0").external_attr >> 16
            self.assertTrue(mode & 0o111)
            site = os.path.join(self.tmp.name, "site")
            zf.extractall(site)
        os.chmod(os.path.join(site, "gpufit", "_libs", "libgpufit.so.0"), 0o755)
        # imported from the unpacked wheel, outside the checkout, with no GPUFIT_LIBRARY
        env = dict(os.environ, PYTHONPATH=site)
        env.pop("GPUFIT_LIBRARY", None)
        p = _support.run_python(
            "import gpufit; print(gpufit.library_path); "
            "print(gpufit.estimate(model='gpt2', gpu='t4').fits)", env=env,
            cwd=self.tmp.name)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.split()
        self.assertEqual(lines[0], os.path.join(site, "gpufit", "_libs", "libgpufit.so.0"))
        self.assertEqual(lines[1], "True")

    def test_pure_wheel_when_not_bundling(self):
        out = os.path.join(self.tmp.name, "pure")
        name = self.b.build_wheel(out, {"bundle": "0"})
        self.assertTrue(name.endswith("-py3-none-any.whl"), name)
        with zipfile.ZipFile(os.path.join(out, name)) as zf:
            self.assertNotIn("gpufit/_libs/libgpufit.so.0", zf.namelist())
            self._check_record(zf)

    def test_reproducible(self):
        a = self.b.build_wheel(os.path.join(self.tmp.name, "a"), {"bundle": "0"})
        b = self.b.build_wheel(os.path.join(self.tmp.name, "b"), {"bundle": "0"})
        with open(os.path.join(self.tmp.name, "a", a), "rb") as f1, \
                open(os.path.join(self.tmp.name, "b", b), "rb") as f2:
            self.assertEqual(f1.read(), f2.read())

    def test_sdist_and_editable(self):
        out = os.path.join(self.tmp.name, "sdist")
        name = self.b.build_sdist(out)
        with tarfile.open(os.path.join(out, name)) as tf:
            names = tf.getnames()
        base = name[:-len(".tar.gz")]
        for member in ("PKG-INFO", "pyproject.toml", "README.md", "_build/gpufit_build.py",
                       "gpufit/__init__.py", "tests/layout.c"):
            self.assertIn("%s/%s" % (base, member), names)
        ed = self.b.build_editable(os.path.join(self.tmp.name, "ed"))
        with zipfile.ZipFile(os.path.join(self.tmp.name, "ed", ed)) as zf:
            pth = [n for n in zf.namelist() if n.endswith(".pth")][0]
            self.assertEqual(zf.read(pth).decode().strip(), str(_support.BINDING))
        md = self.b.prepare_metadata_for_build_wheel(os.path.join(self.tmp.name, "md"))
        self.assertTrue(os.path.exists(os.path.join(self.tmp.name, "md", md, "METADATA")))


def _copy_sources(dest):
    """What a fresh clone has and the backend needs: lib/, include/, bindings/python (no
    build/, no bundled library, no byte code)."""
    ignore = shutil.ignore_patterns("__pycache__", "_libs", "dist", "*.pyc")
    for sub in ("lib", "include", os.path.join("bindings", "python")):
        shutil.copytree(str(_support.REPO / sub), os.path.join(dest, sub), ignore=ignore)


class TestInstall(unittest.TestCase):
    """pip install in a fresh virtual environment, offline, from a source tree where `make`
    has not run: the backend compiles the library, the wheel is tagged manylinux, and the
    installed package (imported from outside any checkout) gives the command's JSON."""

    @classmethod
    def setUpClass(cls):
        if _support.compiler() is None:
            raise unittest.SkipTest("no C compiler")
        if not (_support.REPO / "lib" / "gpufit.map").exists():
            raise unittest.SkipTest("not a repository checkout")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.addClassCleanup(cls.tmp.cleanup)
        root = cls.tmp.name
        cls.src = os.path.join(root, "clone")
        _copy_sources(cls.src)
        cls.venv = os.path.join(root, "venv")
        p = subprocess.run([sys.executable, "-m", "venv", cls.venv], capture_output=True,
                           text=True, timeout=300)
        if p.returncode != 0 or not os.path.exists(cls.py()):
            raise unittest.SkipTest("python3 -m venv failed: %s" % p.stderr[-500:])
        if subprocess.run([cls.py(), "-m", "pip", "--version"], capture_output=True).returncode:
            raise unittest.SkipTest("the virtual environment has no pip (ensurepip)")
        env = cls.env()
        env["CFLAGS"] = "-O1"  # the test's own: quicker to compile, same numbers
        dist = os.path.join(root, "dist")
        cls.wheel = subprocess.run(
            [cls.py(), "-m", "pip", "wheel", "--no-index", "--no-deps", "-w", dist,
             os.path.join(cls.src, "bindings", "python")], capture_output=True, text=True,
            env=env, cwd=root, timeout=600)
        names = os.listdir(dist) if os.path.isdir(dist) else []
        cls.wheel_name = names[0] if len(names) == 1 else None
        if cls.wheel_name:
            cls.install = subprocess.run(
                [cls.py(), "-m", "pip", "install", "--no-index",
                 os.path.join(dist, cls.wheel_name)],
                capture_output=True, text=True, env=env, cwd=root, timeout=300)

    @classmethod
    def py(cls):
        return os.path.join(cls.venv, "bin", "python")

    @classmethod
    def env(cls):
        env = dict(os.environ)
        for k in ("PYTHONPATH", "GPUFIT_LIBRARY", "GPUFIT_BUNDLE_LIBRARY", "PIP_INDEX_URL",
                  "PIP_FIND_LINKS"):
            env.pop(k, None)
        return env

    def run_installed(self, *args, code=None):
        cmd = [self.py()] + (["-c", code] if code else list(args))
        return subprocess.run(cmd, capture_output=True, text=True, env=self.env(),
                              cwd=self.tmp.name, timeout=120)

    def test_wheel_built_without_make(self):
        self.assertEqual(self.wheel.returncode, 0, self.wheel.stdout + self.wheel.stderr)
        self.assertIsNotNone(self.wheel_name)
        self.assertFalse(os.path.exists(os.path.join(self.src, "build")))
        glibc = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"
        m = __import__("re").match(
            r"^gpufit-[\d.]+-py3-none-manylinux_2_(\d+)_(\w+)\.whl$", self.wheel_name)
        self.assertIsNotNone(m, self.wheel_name)
        self.assertGreaterEqual(int(m.group(1)), 17)
        self.assertLessEqual(int(m.group(1)), int(glibc.split(".")[-1]))

    def test_installed_package_outside_the_tree(self):
        self.assertEqual(self.install.returncode, 0, self.install.stderr)
        p = self.run_installed(code="import gpufit, json; print(gpufit.__file__); "
                               "print(gpufit.library_path); print(gpufit.estimate(model="
                               "'llama-3-8b', task='inference', gpu='rtx-4090').to_json())")
        self.assertEqual(p.returncode, 0, p.stderr)
        init, lib, text = p.stdout.split("\n", 2)
        self.assertTrue(init.startswith(self.venv), init)
        self.assertTrue(lib.startswith(self.venv) and lib.endswith("_libs/libgpufit.so.0"))
        if _support.cli_path():
            code, want = _support.cli_json("--spec",
                                           "model=llama-3-8b task=inference gpu=rtx-4090")
            self.assertEqual(json.loads(text), want)

    def test_installed_command_with_model_dir(self):
        self.assertEqual(self.install.returncode, 0, self.install.stderr)
        if _support.cli_path() is None:
            self.skipTest("the gpufit command is not built")
        d = os.path.join(self.tmp.name, "model")
        os.makedirs(d, exist_ok=True)
        shutil.copy(str(_support.REPO / "tests" / "data" / "hf" / "qwen2.5-7b.json"),
                    os.path.join(d, "config.json"))
        args = ["estimate", "--model", d, "--spec", "task=inference gpu=rtx-4090", "--json"]
        p = self.run_installed("-m", "gpufit", *args)
        code, out, err = _support.run_cli(*args)
        self.assertEqual(p.returncode, code, p.stderr)
        self.assertEqual(json.loads(p.stdout), json.loads(out))

    def test_demo_uses_the_installed_package(self):
        self.assertEqual(self.install.returncode, 0, self.install.stderr)
        demo = _support.REPO / "examples" / "notebook_demo.py"
        if not demo.exists():
            self.skipTest("no demo")
        p = self.run_installed(str(demo), "--out", self.tmp.name)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("library %s" % self.venv, p.stdout)


if __name__ == "__main__":
    unittest.main()

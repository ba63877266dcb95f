# SPDX-License-Identifier: MIT
"""Loading the library: version checks, SONAME, the candidate order and the ImportError."""

import os
import shutil
import re
import tempfile
import unittest

import _support
import gpufit
from gpufit import _lib


def _header_version():
    with open(_support.header_path()) as f:
        m = re.search(r'#define\s+GPUFIT_VERSION_STRING\s+"([^"]+)"', f.read())
    return m.group(1) if m else None


class TestLoaded(unittest.TestCase):
    def test_version(self):
        self.assertRegex(gpufit.__version__, r"^\d+\.\d+\.\d+$")
        self.assertGreaterEqual(gpufit.version_number, _lib.MIN_VERSION)
        major, minor, patch = (int(x) for x in gpufit.__version__.split("."))
        self.assertEqual(gpufit.version_number, major * 10000 + minor * 100 + patch)

    def test_version_matches_header(self):
        h = _support.header_path()
        if h is None:
            self.skipTest("include/gpufit.h not found")
        with open(h) as f:
            m = re.search(r'#define\s+GPUFIT_VERSION_STRING\s+"([^"]+)"', f.read())
        self.assertIsNotNone(m)
        self.assertEqual(gpufit.__version__, m.group(1))

    def test_library_path_and_soname(self):
        self.assertTrue(os.path.exists(gpufit.library_path), gpufit.library_path)
        self.assertEqual(_lib.elf_soname(gpufit.library_path),
                         "libgpufit.so.%d" % _lib.SOVERSION)

    def test_elf_soname_of_non_elf(self):
        self.assertIsNone(_lib.elf_soname(__file__))
        self.assertIsNone(_lib.elf_soname("/no/such/file"))

    def test_every_function_bound(self):
        missing = []
        for name, argtypes, restype, since in _lib.FUNCTIONS:
            fn = getattr(_lib.lib, name)
            if getattr(fn, "missing", False):
                missing.append(name)
                continue
            self.assertEqual(fn.argtypes, argtypes, name)
            self.assertEqual(fn.restype, restype, name)
        # Every function of the table is exported by a library built from this tree.
        if _support.header_path() and gpufit.__version__ == _header_version():
            self.assertEqual(missing, [], "functions of gpufit.h not exported by %s"
                             % gpufit.library_path)

    def test_stub_for_newer_function(self):
        stub = _lib._make_stub("gpufit_future", 10203, 100, "/x/libgpufit.so.0")
        with self.assertRaises(gpufit.Unsupported) as cm:
            stub(1, 2)
        self.assertIn("gpufit_future needs libgpufit >= 1.2.3, loaded 0.1.0", str(cm.exception))
        self.assertIsInstance(cm.exception, NotImplementedError)
        stub = _lib._make_stub("gpufit_gone", 100, 100, "/x/libgpufit.so.0")
        with self.assertRaises(gpufit.Unsupported) as cm:
            stub()
        self.assertIn("gpufit_gone is missing from /x/libgpufit.so.0", str(cm.exception))

    def test_candidates_order(self):
        old = os.environ.pop("GPUFIT_LIBRARY", None)
        bundled = os.path.join(os.path.dirname(_lib.__file__), "_libs", _lib._file_name())
        tree = str(_support.REPO / "build" / _lib._file_name())
        try:
            got = _lib.candidates()
            os.environ["GPUFIT_LIBRARY"] = "/explicit/libgpufit.so.0"
            explicit = _lib.candidates()
        finally:
            if old is None:
                os.environ.pop("GPUFIT_LIBRARY", None)
            else:
                os.environ["GPUFIT_LIBRARY"] = old
        want = []
        if os.path.exists(bundled):
            want.append((bundled, "bundled copy"))
        self.assertEqual(explicit, want + [("/explicit/libgpufit.so.0", "$GPUFIT_LIBRARY")])
        if os.path.exists(tree) and "site-packages" not in _lib.__file__:
            want.append((tree, "in-tree build (make)"))
        want.append(("libgpufit.so.%d" % _lib.SOVERSION, "system dynamic loader"))
        self.assertEqual([o for _, o in got], [o for _, o in want])
        self.assertEqual(got[-1], want[-1])

    def test_import_starts_no_process(self):
        """find_library runs ldconfig/gcc/ld: the import path must not (issue 16)."""
        code = ("import subprocess, os\n"
                "def no(*a, **k): raise AssertionError('process started: %r' % (a,))\n"
                "subprocess.Popen = no; os.posix_spawn = no; os.fork = no\n"
                "import gpufit, sys\n"
                "print('ctypes.util' in sys.modules)")
        for library in (None, os.path.realpath(gpufit.library_path)):
            p = _support.run_python(code, env=_support.python_env(GPUFIT_LIBRARY=library))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.strip(), "False")

    def test_system_loader_by_soname(self):
        """With no bundled copy, no variable and no in-tree build the loader finds the
        library by its SONAME through LD_LIBRARY_PATH (as after `make install`)."""
        with tempfile.TemporaryDirectory() as d:
            os.symlink(os.path.realpath(gpufit.library_path),
                       os.path.join(d, "libgpufit.so.%d" % _lib.SOVERSION))
            # a copy of the package outside the checkout: no in-tree build next to it, so
            # that no other copy of the library is mapped before the loader's search (one
            # with the same SONAME would be reused: the ASan run has two builds)
            pkg = os.path.join(d, "site")
            shutil.copytree(os.path.dirname(os.path.realpath(gpufit.__file__)),
                            os.path.join(pkg, "gpufit"),
                            ignore=shutil.ignore_patterns("_libs", "__pycache__"))
            env = _support.python_env(GPUFIT_LIBRARY=None)
            env["PYTHONPATH"] = pkg
            env["LD_LIBRARY_PATH"] = d
            code = ("import gpufit\n"
                    "print(gpufit.library_path)")
            p = _support.run_python(code, env=env, cwd=d)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(os.path.dirname(p.stdout.strip()), d)  # found through the path
            self.assertEqual(os.path.realpath(p.stdout.strip()),  # (while the link exists)
                             os.path.realpath(gpufit.library_path))


class TestImportErrors(unittest.TestCase):
    """Each case imports gpufit in a child process with a given GPUFIT_LIBRARY."""

    def _import(self, library):
        env = _support.python_env(GPUFIT_LIBRARY=library)
        return _support.run_python("import gpufit", env=env)

    def test_missing_file(self):
        p = self._import("/no/such/dir/libgpufit.so.0")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("ImportError", p.stderr)
        self.assertIn("/no/such/dir/libgpufit.so.0 ($GPUFIT_LIBRARY): no such file", p.stderr)
        self.assertIn("GPUFIT_LIBRARY", p.stderr)

    def test_not_gpufit(self):
        libc = None
        with open("/proc/self/maps") as f:
            for line in f:
                if re.search(r"/libc[.-][^/]*\.so[.\d]*$|/libc\.so\.6$", line.strip()):
                    libc = line.split()[-1]
                    break
        if libc is None:
            self.skipTest("no libc path in /proc/self/maps")
        p = self._import(libc)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("not libgpufit", p.stderr)

    def test_wrong_soname(self):
        with open(gpufit.library_path, "rb") as f:
            data = f.read()
        want = b"libgpufit.so.%d\0" % _lib.SOVERSION
        if want not in data:
            self.skipTest("SONAME string not found in the library")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "libgpufit.so.9")
            with open(path, "wb") as f:
                f.write(data.replace(want, b"libgpufit.so.9\0"))
            self.assertEqual(_lib.elf_soname(path), "libgpufit.so.9")
            p = self._import(path)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("SONAME is libgpufit.so.9, this binding needs libgpufit.so.0", p.stderr)

    def test_in_tree_build_found_without_variable(self):
        tree = _support.REPO / "build" / ("libgpufit.so.%d" % _lib.SOVERSION)
        bundled = _support.BINDING / "gpufit" / "_libs" / tree.name
        if not tree.exists() or bundled.exists():
            self.skipTest("needs an in-tree build and no bundled copy")
        env = _support.python_env(GPUFIT_LIBRARY=None)
        p = _support.run_python("import gpufit; print(gpufit.library_path)", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(os.path.realpath(p.stdout.strip()), os.path.realpath(str(tree)))

    def test_explicit_path_through_symlink(self):
        with tempfile.TemporaryDirectory() as d:
            link = os.path.join(d, "libgpufit.so")
            os.symlink(os.path.realpath(gpufit.library_path), link)
            p = _support.run_python("import gpufit; print(gpufit.library_path)",
                                    env=_support.python_env(GPUFIT_LIBRARY=link))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), link)


if __name__ == "__main__":
    unittest.main()

"""PEP 517 build backend of the gpufit bindings, standard library only.

Why not setuptools: ``pip install --no-build-isolation ./bindings/python`` must work offline,
and setuptools older than 70.1 cannot build a wheel without the separate ``wheel`` package,
which many Python installations lack (pip would try to download it). This backend needs
nothing beyond the standard library and implements the PEP 517/660 hooks pip uses:
``build_wheel``, ``build_sdist``, ``build_editable`` and ``prepare_metadata_for_build_*``.

* Metadata comes from the ``[project]`` table of ``pyproject.toml``; the version from
  ``include/gpufit.h`` of the repository (the single source of the version), or from
  ``PKG-INFO`` in an unpacked source distribution.
* A wheel bundles ``libgpufit.so.0`` as ``gpufit/_libs/libgpufit.so.0``, first of: the
  config setting ``bundle-library=PATH`` (``pip wheel -C bundle-library=...``) or
  ``$GPUFIT_BUNDLE_LIBRARY``; an existing ``gpufit/_libs/libgpufit.so.0``; the in-tree
  ``<repository>/build/libgpufit.so.0`` (``make``); else, in a repository checkout, one
  compiled here from ``lib/`` with the C compiler (``$CC``, default ``cc``; ``$CFLAGS``,
  default ``-O3``, with gcc's ``-flto=auto`` and ``-mstringop-strategy=libcall`` as the
  Makefile's ``LTO`` and ``LIB_OPT``) and the flags of the Makefile's shared library, so that
  ``pip install ./bindings/python`` needs no prior ``make`` (set ``GPUFIT_BUILD_LIBRARY=0``
  or ``-C build-library=0`` to refuse). No compiler and no library is an error at install
  time, not at import. ``GPUFIT_BUNDLE=0`` (or ``-C bundle=0``) builds a pure
  ``py3-none-any`` wheel that loads the system's libgpufit.
* A wheel with the library is tagged ``manylinux_2_X_ARCH`` on glibc Linux (PEP 600), where
  2.X is the newest ``GLIBC_2.X`` symbol version the library needs (read from the library;
  at least 2.17, the manylinux2014 baseline). The library links only libc (and libm), so
  that is its whole requirement on the system; elsewhere the tag is the platform's own.
* Archives are reproducible: fixed timestamps (``$SOURCE_DATE_EPOCH`` when set), sorted
  entries.
"""

import base64
import hashlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # bindings/python
REPO = os.path.dirname(os.path.dirname(ROOT))
PACKAGE = "gpufit"
LIBRARY = "libgpufit.so.0"

__all__ = ["build_wheel", "build_sdist", "build_editable", "prepare_metadata_for_build_wheel",
           "prepare_metadata_for_build_editable", "get_requires_for_build_wheel",
           "get_requires_for_build_sdist", "get_requires_for_build_editable"]


# ---------------------------------------------------------------------------------------------
# Project metadata
# ---------------------------------------------------------------------------------------------
def _parse_toml_project(text):
    """The [project] and [project.scripts] tables (strings and string lists only): enough for
    this pyproject.toml when tomllib (Python >= 3.11) is missing."""
    out, section, key, buf = {}, None, None, None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip() if not raw.strip().startswith('"') else raw.strip()
        if buf is not None:
            buf += " " + line
            if "]" in line:
                out.setdefault(section, {})[key] = re.findall(r'"((?:[^"\\]|\\.)*)"', buf)
                buf = None
            continue
        if not line:
            continue
        m = re.match(r"^\[([^\]]+)\]$", line)
        if m:
            section = m.group(1).strip()
            continue
        m = re.match(r'^("?[\w.-]+"?)\s*=\s*(.*)$', line)
        if not m or section not in ("project", "project.scripts"):
            continue
        key, value = m.group(1).strip('"'), m.group(2).strip()
        if value.startswith("[") and "]" not in value:
            buf = value
            continue
        if value.startswith("["):
            out.setdefault(section, {})[key] = re.findall(r'"((?:[^"\\]|\\.)*)"', value)
        else:
            out.setdefault(section, {})[key] = value.strip('"')
    project = out.get("project", {})
    if "project.scripts" in out:
        project["scripts"] = out["project.scripts"]
    return project


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        data = f.read()
    try:
        import tomllib
        return tomllib.loads(data.decode("utf-8"))["project"]
    except ImportError:
        return _parse_toml_project(data.decode("utf-8"))


def _version():
    header = os.path.join(REPO, "include", "gpufit.h")
    if os.path.exists(header):
        with open(header, encoding="utf-8") as f:
            m = re.search(r'#\s*define\s+GPUFIT_VERSION_STRING\s+"([^"]+)"', f.read())
        if m:
            return m.group(1)
    pkg_info = os.path.join(ROOT, "PKG-INFO")
    if os.path.exists(pkg_info):
        with open(pkg_info, encoding="utf-8") as f:
            m = re.search(r"^Version:\s*(\S+)", f.read(), re.M)
        if m:
            return m.group(1)
    if os.environ.get("GPUFIT_VERSION"):
        return os.environ["GPUFIT_VERSION"]
    raise RuntimeError("gpufit_build: no version: include/gpufit.h, PKG-INFO and "
                       "$GPUFIT_VERSION are all missing")


def _metadata(version):
    p = _project()
    lines = ["Metadata-Version: 2.1", "Name: %s" % p["name"], "Version: %s" % version]
    if p.get("description"):
        lines.append("Summary: %s" % p["description"])
    if p.get("keywords"):
        lines.append("Keywords: %s" % ",".join(p["keywords"]))
    if p.get("requires-python"):
        lines.append("Requires-Python: %s" % p["requires-python"])
    for c in p.get("classifiers", []):
        lines.append("Classifier: %s" % c)
    for d in p.get("dependencies", []):
        lines.append("Requires-Dist: %s" % d)
    body = ""
    readme = p.get("readme")
    if isinstance(readme, str) and os.path.exists(os.path.join(ROOT, readme)):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = f.read()
    return ("\n".join(lines) + "\n\n" + body).encode("utf-8")


def _entry_points():
    scripts = _project().get("scripts") or {}
    if not scripts:
        return None
    return ("[console_scripts]\n" + "".join("%s = %s\n" % kv for kv in sorted(
        scripts.items()))).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------
def _package_files():
    out = []
    base = os.path.join(ROOT, PACKAGE)
    for d, dirs, files in os.walk(base):
        dirs[:] = sorted(x for x in dirs if x not in ("__pycache__", "_libs"))
        for name in sorted(files):
            if name.endswith(".py") or name == "py.typed":  # PEP 561: the hints are checked
                full = os.path.join(d, name)
                out.append((os.path.relpath(full, ROOT).replace(os.sep, "/"), full))
    return out


def _setting(config_settings, key):
    if not config_settings:
        return None
    v = config_settings.get(key)
    if isinstance(v, list):
        v = v[-1] if v else None
    return v


def _off(value):
    return str(value).lower() in ("0", "no", "false", "off")


def _library(config_settings, workdir):
    """The shared library to bundle, or None (a pure wheel). ``workdir``: where a library
    compiled here is written."""
    if _off(_setting(config_settings, "bundle") or os.environ.get("GPUFIT_BUNDLE", "1")):
        return None
    explicit = _setting(config_settings, "bundle-library") or os.environ.get(
        "GPUFIT_BUNDLE_LIBRARY")
    if explicit:
        if not os.path.exists(explicit):
            raise RuntimeError("gpufit_build: bundle-library %s does not exist" % explicit)
        return explicit
    for cand in (os.path.join(ROOT, PACKAGE, "_libs", LIBRARY),
                 os.path.join(REPO, "build", LIBRARY)):
        if os.path.exists(cand):
            return cand
    if not os.path.exists(os.path.join(REPO, "lib", "gpufit.map")):
        return None  # a source distribution of the bindings alone: the system's library
    if _off(_setting(config_settings, "build-library") or
            os.environ.get("GPUFIT_BUILD_LIBRARY", "1")):
        raise RuntimeError(
            "gpufit_build: no libgpufit.so.0 to bundle (build/ has none) and building it is "
            "turned off: run `make` at the repository root, or set GPUFIT_BUNDLE=0 for a "
            "wheel that uses the system's library")
    return compile_library(workdir)


def _c_sources():
    """lib/LAYER/*.c, every layer (the Makefile's LIB_SRCS)."""
    base = os.path.join(REPO, "lib")
    out = []
    for layer in sorted(os.listdir(base)):
        d = os.path.join(base, layer)
        if os.path.isdir(d):
            out += [os.path.join(d, n) for n in sorted(os.listdir(d)) if n.endswith(".c")]
    return out


def _gcc_flags(cc):
    """The Makefile's extra flags for gcc (not clang), each only if ``cc`` takes it:
    ``-flto=auto`` (the memory terms inlined into the evaluation across files) and, on x86-64,
    ``-mstringop-strategy=libcall`` (struct copies call memcpy instead of ``rep movsq``)."""
    try:
        p = subprocess.run(cc + ["-dM", "-E", "-x", "c", os.devnull], capture_output=True,
                           text=True)
    except OSError:
        return []
    if p.returncode != 0 or "__GNUC__" not in p.stdout or "__clang__" in p.stdout:
        return []
    wanted = ["-flto=auto"]
    if "__x86_64__" in p.stdout:
        wanted.append("-mstringop-strategy=libcall")
    taken = []
    for flag in wanted:
        q = subprocess.run(cc + [flag, "-x", "c", "-c", os.devnull, "-o", os.devnull],
                           capture_output=True, text=True)
        if q.returncode == 0:
            taken.append(flag)
    return taken


def compile_library(workdir, log=None):
    """Compiles ``libgpufit.so.0`` from the repository's ``lib/`` into ``workdir`` with the
    flags of the Makefile's shared library (hidden visibility, lib/gpufit.map, the SONAME,
    libm only if needed), one compiler process per core; returns its path."""
    cc = shlex.split(os.environ.get("CC") or "cc")
    if not shutil.which(cc[0]):
        raise RuntimeError(
            "gpufit_build: libgpufit.so.0 is not built and there is no C compiler (%s) to "
            "build it: install one (Debian: apt install gcc), run `make` at the repository "
            "root, or set GPUFIT_BUNDLE=0 for a wheel that uses the system's library"
            % cc[0])
    cflags = shlex.split(os.environ.get("CFLAGS", "-O3"))
    if "CFLAGS" not in os.environ:
        cflags += _gcc_flags(cc)  # as the Makefile's LTO and LIB_OPT
    flags = ["-std=c11", "-fPIC", "-fvisibility=hidden", "-DGPUFIT_BUILDING",
             "-I" + os.path.join(REPO, "include"), "-I" + os.path.join(REPO, "lib")] + cflags
    log = log or sys.stderr
    sources = _c_sources()
    objs = [os.path.join(workdir, "%03d.o" % i) for i in range(len(sources))]
    print("gpufit_build: compiling libgpufit.so.0 from %d files in %s/lib with %s"
          % (len(sources), REPO, " ".join(cc)), file=log)

    def one(pair):
        src, obj = pair
        p = subprocess.run(cc + flags + ["-c", src, "-o", obj], capture_output=True,
                           text=True)
        return src, p

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for src, p in pool.map(one, zip(sources, objs)):
            if p.returncode != 0:
                raise RuntimeError("gpufit_build: %s failed on %s:\n%s" % (
                    cc[0], src, p.stderr[-4000:]))
    out = os.path.join(workdir, LIBRARY)
    link = cc + ["-shared"] + cflags + [
        "-Wl,-z,defs", "-Wl,--version-script=" + os.path.join(REPO, "lib", "gpufit.map"),
        "-Wl,-soname," + LIBRARY, "-o", out] + objs + ["-Wl,--as-needed", "-lm"]
    p = subprocess.run(link, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("gpufit_build: linking libgpufit.so.0 failed:\n%s"
                           % p.stderr[-4000:])
    return out


def _platform_tag(lib=None):
    """The wheel's platform tag: manylinux_2_X_ARCH for a library on glibc Linux (X: the
    newest GLIBC_2.X symbol version it needs, at least 17), else the platform's own."""
    plat = sysconfig.get_platform()
    arch = plat.split("-", 1)[-1].replace("-", "_").replace(".", "_")
    glibc = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None
    if lib is not None and plat.startswith("linux-") and glibc:
        with open(lib, "rb") as f:
            needed = [int(m) for m in re.findall(rb"GLIBC_2\.(\d+)", f.read())]
        minor = max([17] + needed)
        return "manylinux_2_%d_%s" % (minor, arch)
    return re.sub(r"[^\w]", "_", plat)


def _date_time():
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01
    return time.gmtime(max(epoch, 315532800))[:6]


class _Wheel:
    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.records = []

    def add(self, arcname, data, mode=0o644):
        info = zipfile.ZipInfo(arcname, _date_time())
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        self.records.append("%s,sha256=%s,%d" % (arcname, digest.decode("ascii"), len(data)))

    def close(self, record_name):
        lines = self.records + ["%s,," % record_name]
        info = zipfile.ZipInfo(record_name, _date_time())
        info.external_attr = 0o100644 << 16
        self.zip.writestr(info, ("\n".join(lines) + "\n").encode("utf-8"))
        self.zip.close()


def _dist_info(version):
    return "%s-%s.dist-info" % (PACKAGE, version)


def _write_dist_info(wheel, version, tag, purelib):
    di = _dist_info(version)
    wheel.add(di + "/METADATA", _metadata(version))
    wheel.add(di + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: gpufit_build\nRoot-Is-Purelib: "
                              "%s\nTag: %s\n" % ("true" if purelib else "false", tag)).encode())
    ep = _entry_points()
    if ep:
        wheel.add(di + "/entry_points.txt", ep)
    wheel.add(di + "/top_level.txt", (PACKAGE + "\n").encode())
    return di + "/RECORD"


# ---------------------------------------------------------------------------------------------
# PEP 517 / 660 hooks
# ---------------------------------------------------------------------------------------------
def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version()
    di = _dist_info(version)
    os.makedirs(os.path.join(metadata_directory, di), exist_ok=True)
    with open(os.path.join(metadata_directory, di, "METADATA"), "wb") as f:
        f.write(_metadata(version))
    ep = _entry_points()
    if ep:
        with open(os.path.join(metadata_directory, di, "entry_points.txt"), "wb") as f:
            f.write(ep)
    return di


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel of the package, with libgpufit.so.0 bundled when one is found."""
    version = _version()
    with tempfile.TemporaryDirectory(prefix="gpufit-build-") as workdir:
        lib = _library(config_settings, workdir)
        tag = "py3-none-" + (_platform_tag(lib) if lib else "any")
        name = "%s-%s-%s.whl" % (PACKAGE, version, tag)
        os.makedirs(wheel_directory, exist_ok=True)
        wheel = _Wheel(os.path.join(wheel_directory, name))
        for arcname, full in _package_files():
            with open(full, "rb") as f:
                wheel.add(arcname, f.read())
        if lib:
            with open(lib, "rb") as f:  # follows the libgpufit.so.0 -> .so.0.1.0 symlink
                wheel.add("%s/_libs/%s" % (PACKAGE, LIBRARY), f.read(), 0o755)
        wheel.close(_write_dist_info(wheel, version, tag, purelib=lib is None))
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """An editable wheel: a .pth file that puts bindings/python on sys.path (the package
    then finds the in-tree build of the library)."""
    version = _version()
    tag = "py3-none-any"
    name = "%s-%s-%s.whl" % (PACKAGE, version, tag)
    os.makedirs(wheel_directory, exist_ok=True)
    wheel = _Wheel(os.path.join(wheel_directory, name))
    wheel.add("__editable__.%s-%s.pth" % (PACKAGE, version), (ROOT + "\n").encode("utf-8"))
    wheel.close(_write_dist_info(wheel, version, tag, purelib=True))
    return name


def build_sdist(sdist_directory, config_settings=None):
    """A source distribution of bindings/python (no shared library; PKG-INFO holds the
    version, since include/gpufit.h is not part of it)."""
    version = _version()
    base = "%s-%s" % (PACKAGE, version)
    name = base + ".tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    members = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")),
               ("README.md", os.path.join(ROOT, "README.md")),
               ("build_wheel.sh", os.path.join(ROOT, "build_wheel.sh")),
               ("_build/gpufit_build.py", os.path.abspath(__file__))]
    members += _package_files()
    for sub in ("tests", "examples"):
        for d, dirs, files in os.walk(os.path.join(ROOT, sub)):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__")
            for f in sorted(files):
                if not f.endswith((".pyc",)):
                    full = os.path.join(d, f)
                    members.append((os.path.relpath(full, ROOT).replace(os.sep, "/"), full))
    mtime = time.mktime(_date_time() + (0, 0, -1))

    def add(tar, arcname, data, mode=0o644):
        info = tarfile.TarInfo("%s/%s" % (base, arcname))
        info.size, info.mode, info.mtime = len(data), mode, mtime
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        tar.addfile(info, io.BytesIO(data))

    path = os.path.join(sdist_directory, name)
    with open(path, "wb") as raw:
        import gzip
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=int(mtime)) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                add(tar, "PKG-INFO", _metadata(version))
                for arcname, full in members:
                    if os.path.exists(full):
                        with open(full, "rb") as f:
                            add(tar, arcname, f.read(),
                                0o755 if arcname.endswith(".sh") else 0o644)
    return name

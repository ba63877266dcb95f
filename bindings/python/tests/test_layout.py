# SPDX-License-Identifier: MIT
"""Struct layouts: the ctypes mirrors of gpufit/_types.py against the C header.

tests/layout.c is compiled with the C compiler against include/gpufit.h and prints sizeof
and offsetof/sizeof of every field of every public struct; each must equal the mirror's.
The header's own struct bodies are also parsed, so a struct or field added to the header
but missing from layout.c or the mirror fails the test.
"""

import ctypes
import os
import re
import subprocess
import tempfile
import unittest

import _support
from gpufit import _types


def header_structs(text):
    """{struct name: [field names]} of the structs defined (with a body) in the header."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    out = {}
    for m in re.finditer(r"typedef\s+struct\s+(gpufit_\w+)\s*\{(.*?)\}\s*\1\s*;", text, re.S):
        fields = []
        for decl in m.group(2).split(";"):
            decl = decl.strip()
            if decl:
                fields.append(re.match(r".*?(\w+)\s*(\[[^\]]*\])?$", decl, re.S).group(1))
        out[m.group(1)] = fields
    return out


class TestLayout(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        header = _support.header_path()
        cc = _support.compiler()
        if header is None or not cc:
            raise unittest.SkipTest("needs include/gpufit.h and a C compiler")
        cls.tmp = tempfile.TemporaryDirectory()
        exe = os.path.join(cls.tmp.name, "layout")
        src = str(_support.TESTS / "layout.c")
        cmd = cc.split() + ["-std=c11", "-Wall", "-Wextra", "-I", os.path.dirname(header),
                            src, "-o", exe]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise AssertionError("cannot compile layout.c: %s\n%s" % (" ".join(cmd), p.stderr))
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
        cls.sizes, cls.fields = {}, {}
        for line in out.splitlines():
            parts = line.split()
            if parts[0] == "struct":
                cls.sizes[parts[1]] = int(parts[2])
                cls.fields[parts[1]] = []
            else:
                cls.fields[parts[1]].append((parts[2], int(parts[3]), int(parts[4])))
        with open(header) as f:
            cls.header = header_structs(f.read())

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_header_struct_is_mirrored(self):
        mirrored = {cls.c_name() for cls in _types.STRUCTS}
        self.assertEqual(sorted(self.header), sorted(mirrored))
        self.assertEqual(sorted(self.sizes), sorted(mirrored), "structs printed by layout.c")

    def test_layout_c_lists_every_header_field(self):
        for name, fields in self.header.items():
            self.assertIn(name, self.fields, "add STRUCT(%s) and its FIELDs to tests/layout.c "
                          "and a mirror to gpufit/_types.py" % name)
            self.assertEqual([f for f, _, _ in self.fields[name]], fields,
                             "%s: update tests/layout.c and gpufit/_types.py" % name)

    def test_sizes_and_offsets(self):
        for cls in _types.STRUCTS:
            name = cls.c_name()
            with self.subTest(struct=name):
                self.assertIn(name, self.sizes, "tests/layout.c does not print %s" % name)
                self.assertEqual(ctypes.sizeof(cls), self.sizes[name], "sizeof")
                py_fields = [f for f, _ in cls._fields_]
                self.assertEqual(py_fields, [f for f, _, _ in self.fields[name]], "fields")
                for field, offset, size in self.fields[name]:
                    desc = getattr(cls, field)
                    self.assertEqual(desc.offset, offset, "offsetof %s" % field)
                    self.assertEqual(desc.size, size, "sizeof %s" % field)

    def test_struct_size_set_on_creation(self):
        for cls in _types.STRUCTS:
            obj = cls()
            self.assertEqual(obj.struct_size, ctypes.sizeof(cls))
            for field, _ in cls._fields_:
                self.assertTrue(obj.has_field(field))
            obj.struct_size = 8
            self.assertFalse(obj.has_field(cls._fields_[-1][0]))
        self.assertEqual(_types.Error().offset, _types.UINT64_MAX)


if __name__ == "__main__":
    unittest.main()

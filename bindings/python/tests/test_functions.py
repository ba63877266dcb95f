# SPDX-License-Identifier: MIT
"""The function table of gpufit/_lib.py against the declarations of include/gpufit.h.

Every ``GPUFIT_API`` function must be in the table, with as many arguments as the header
declares and ctypes types that match the C types.
"""

import re
import unittest
from ctypes import (POINTER, c_char, c_char_p, c_double, c_int32, c_int64, c_size_t, c_uint32,
                    c_uint64, c_void_p)

import _support
from gpufit import _lib, _types

_SCALARS = {
    "uint32_t": c_uint32, "int32_t": c_int32, "uint64_t": c_uint64, "int64_t": c_int64,
    "double": c_double, "size_t": c_size_t,
}
_HANDLES = ("gpufit_model", "gpufit_job", "gpufit_result", "gpufit_list")
_STRUCTS = {cls.c_name(): cls for cls in _types.STRUCTS}


def ctype_of(c_type, is_return=False):
    """The ctypes type the binding must use for C type text such as 'const char *'."""
    t = re.sub(r"\bconst\b", "", c_type).replace(" ", "")
    stars = t.count("*")
    base = t.replace("*", "")
    if stars == 0:
        return None if base == "void" else _SCALARS[base]
    if base == "void" and stars == 1:
        return c_void_p
    if base == "char":
        if stars == 2:
            return POINTER(c_char_p)
        # const char * is a string; a writable char * is a buffer
        return c_char_p if ("const" in c_type or is_return) else POINTER(c_char)
    if base in _HANDLES:
        return c_void_p if stars == 1 else POINTER(c_void_p)
    if base in _STRUCTS:
        return POINTER(_STRUCTS[base])
    if base in _SCALARS and stars == 1:
        return POINTER(_SCALARS[base])
    raise AssertionError("no ctypes mapping for C type %r" % c_type)


def header_functions(text):
    """{name: (return type text, [argument type texts])} of the GPUFIT_API functions."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"^\s*#.*?(?<!\\)$", " ", text, flags=re.M | re.S)
    out = {}
    for m in re.finditer(r"GPUFIT_API\s+([^;(]*?)\b(gpufit_\w+)\s*\(([^)]*)\)\s*;", text):
        ret, name, params = m.group(1).strip(), m.group(2), m.group(3).strip()
        args = []
        if params and params != "void":
            for p in params.split(","):
                p = " ".join(p.split())
                pm = re.match(r"(.*?[\s*])(\w+)$", p)
                args.append(pm.group(1).strip())
        out[name] = (ret, args)
    return out


class TestFunctionTable(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        h = _support.header_path()
        if h is None:
            raise unittest.SkipTest("include/gpufit.h not found")
        with open(h) as f:
            cls.decls = header_functions(f.read())

    def test_header_parsed(self):
        self.assertGreater(len(self.decls), 30)
        self.assertIn("gpufit_evaluate", self.decls)

    def test_every_header_function_in_table(self):
        table = {name for name, *_ in _lib.FUNCTIONS}
        missing = sorted(set(self.decls) - table)
        extra = sorted(table - set(self.decls))
        self.assertEqual(missing, [], "declared in gpufit.h but not in _lib.FUNCTIONS of "
                         "bindings/python/gpufit/_lib.py: add a row with its ctypes types")
        self.assertEqual(extra, [], "in _lib.FUNCTIONS but not declared in gpufit.h")

    def test_types_match(self):
        for name, argtypes, restype, since in _lib.FUNCTIONS:
            with self.subTest(function=name):
                ret, args = self.decls[name]
                self.assertEqual(len(argtypes), len(args), "argument count")
                self.assertIs(restype, ctype_of(ret, is_return=True), "return type %s" % ret)
                for i, (c_type, py_type) in enumerate(zip(args, argtypes)):
                    self.assertIs(py_type, ctype_of(c_type), "argument %d (%s)" % (i, c_type))
                self.assertGreaterEqual(since, 100)
                self.assertLessEqual(since, _lib.version_number)

    def test_no_long_or_varargs(self):
        # docs/abi.md: no long, no varargs; the binding relies on both.
        for name, (ret, args) in self.decls.items():
            for t in [ret] + args:
                self.assertNotRegex(t, r"\blong\b", name)
                self.assertNotIn("...", t, name)


if __name__ == "__main__":
    unittest.main()

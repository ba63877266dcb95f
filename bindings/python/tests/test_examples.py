# SPDX-License-Identifier: MIT
"""The examples run: examples/notebook_demo.py and the notebook's code cells."""

import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

import _support

EXAMPLES = _support.REPO / "examples"


class TestExamples(unittest.TestCase):
    def test_notebook_demo_script(self):
        script = EXAMPLES / "notebook_demo.py"
        if not script.exists():
            self.skipTest("examples/notebook_demo.py not found")
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([sys.executable, str(script), "--out", d], capture_output=True,
                               text=True, env=_support.python_env(), timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("verdict: FITS", p.stdout)
            with open(os.path.join(d, "report.html"), encoding="utf-8") as f:
                html = f.read()
        self.assertIn("<svg", html)
        start = html.index(">", html.index("<body")) + 1
        ET.fromstring("<body>" + html[start:html.index("</html>")])  # well-formed

    def test_notebook(self):
        path = EXAMPLES / "gpufit_demo.ipynb"
        if not path.exists():
            self.skipTest("examples/gpufit_demo.ipynb not found")
        with open(path) as f:
            nb = json.load(f)
        self.assertEqual(nb["nbformat"], 4)
        code = []
        for cell in nb["cells"]:
            self.assertIn(cell["cell_type"], ("markdown", "code"))
            self.assertIsInstance(cell["source"], list)
            if cell["cell_type"] == "code":
                self.assertEqual(cell["outputs"], [])
                code.append("".join(cell["source"]))
        # run every code cell in one namespace, from examples/, as Jupyter would
        program = "\n".join(code)
        p = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                           env=_support.python_env(), cwd=str(EXAMPLES), timeout=120)
        if p.returncode != 0 and "Unsupported" in p.stderr:
            self.skipTest("the loaded library lacks a function the notebook uses")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_saved_example_html(self):
        path = _support.BINDING / "examples" / "report_example.html"
        if not path.exists():
            self.skipTest("no saved example")
        with open(path, encoding="utf-8") as f:
            html = f.read()
        self.assertIn("<svg", html)
        start = html.index(">", html.index("<body")) + 1
        ET.fromstring("<body>" + html[start:html.index("</html>")])


if __name__ == "__main__":
    unittest.main()

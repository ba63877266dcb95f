# SPDX-License-Identifier: MIT
"""Display: the HTML repr (table + inline SVG stacked bars) and the plain-text repr."""

import unittest
import xml.etree.ElementTree as ET

import _support  # noqa: F401  (this checkout's package first on sys.path)
import gpufit

SVG = "{http://www.w3.org/2000/svg}"


class TestHtml(unittest.TestCase):
    def test_pipeline_report(self):
        r = gpufit.estimate(model="llama-3-70b", task="pretrain", gpu="h100", tp=8, pp=4,
                            dp=2)
        h = r._repr_html_()
        root = ET.fromstring(h)  # well-formed: every tag closed, no undefined entities
        self.assertIn("<svg", h)
        svgs = root.findall(".//%ssvg" % SVG)
        self.assertEqual(len(svgs), 1)
        texts = [t.text for t in svgs[0].iter("%stext" % SVG)]
        for role in r.roles:
            self.assertIn(role.name, texts)
        # one coloured segment per non-zero component per role, each with a tooltip
        segments = [e for e in svgs[0].iter("%srect" % SVG) if e.find("%stitle" % SVG)
                    is not None]
        expected = sum(1 for ro in r.roles for b in ro.components.values() if b)
        self.assertEqual(len(segments), expected)
        self.assertTrue(any(t and t.startswith("capacity") for t in texts))
        self.assertIn("FITS", h)
        table = root.find(".//table")
        self.assertIsNotNone(table)
        self.assertIn("%.2f" % (r.roles[0].device_used_bytes / 2**30), h)

    def test_segments_scale(self):
        r = gpufit.estimate(model="llama-3-8b", task="inference", gpu="rtx-4090")
        svg = ET.fromstring(r.svg())
        rects = [e for e in svg.iter("%srect" % SVG) if e.find("%stitle" % SVG) is not None]
        widths = [float(e.get("width")) for e in rects]
        comps = [b for b in r.roles[0].components.values() if b]
        # the weights segment is the widest, as weights are the largest component
        self.assertEqual(widths.index(max(widths)), comps.index(max(comps)))

    def test_oom_and_no_gpu(self):
        r = gpufit.estimate(model="llama-3-70b", task="inference", gpu="rtx-4090")
        h = r._repr_html_()
        ET.fromstring(h)
        self.assertIn("DOES NOT FIT", h)
        r = gpufit.estimate(model="llama-3-8b")
        h = r._repr_html_()
        ET.fromstring(h)
        self.assertIn("NO GPU GIVEN", h)
        self.assertNotIn("capacity ", r.svg())

    def test_escaping(self):
        r = gpufit.estimate(model={"preset": "gpt2", "name": "<b>&x"}, gpu="t4")
        h = r._repr_html_()
        ET.fromstring(h)
        self.assertNotIn("<b>&x", h)
        self.assertIn("&lt;b&gt;&amp;x", h)

    def test_text(self):
        r = gpufit.estimate(model="llama-3-8b", task="inference", gpu="rtx-4090",
                            context_len=8192)
        t = str(r)
        self.assertTrue(t.startswith("gpufit %s: llama-3-8b, task inference\n"
                                     % gpufit.__version__))
        self.assertRegex(t, r"verdict: FITS: \d+\.\d\d-\d+\.\d\d GiB of \d+\.\d\d GiB \(headroom "
                            r"\d+\.\d\d GiB")
        self.assertIn("kv capacity", t)
        self.assertRegex(repr(r), r"^<gpufit.Report llama-3-8b, inference: FITS, peak [\d.]+ "
                                  r"GiB of [\d.]+ GiB, 1 role>$")
        self.assertIn("pp_first", str(gpufit.estimate(model="llama-3-70b", task="pretrain",
                                                      gpu="h100", tp=8, pp=4)))


if __name__ == "__main__":
    unittest.main()

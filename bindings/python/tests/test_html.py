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

    def test_band_whisker(self):
        # the band of device used: a whisker from the low to the high end, on the same scale
        # as the bars (docs/band.md); a total without width draws none
        r = gpufit.estimate(model="llama-3-8b", task="inference", gpu="rtx-4090")
        ro = r.roles[0]
        self.assertLess(ro.device_used_low_bytes, ro.device_used_high_bytes)
        svg = ET.fromstring(r.svg())
        bands = [g for g in svg.iter("%sg" % SVG) if g.get("class") == "band"]
        self.assertEqual(len(bands), 1)
        self.assertIn("band of device used (all)", bands[0].find("%stitle" % SVG).text)
        lines = list(bands[0].iter("%sline" % SVG))
        self.assertEqual(len(lines), 3)  # the span and its two end ticks
        x0, x1 = float(lines[0].get("x1")), float(lines[0].get("x2"))
        segs = [e for e in svg.iter("%srect" % SVG) if e.find("%stitle" % SVG) is not None]
        right = max(float(e.get("x")) + float(e.get("width")) for e in segs)
        left = min(float(e.get("x")) for e in segs)
        # pixels per byte from the bars, then the whisker's ends agree with the band
        scale = (right - left) / ro.device_used_bytes
        self.assertAlmostEqual(x0 - left, ro.device_used_low_bytes * scale, delta=0.5)
        self.assertAlmostEqual(x1 - left, ro.device_used_high_bytes * scale, delta=0.5)
        # every stack term given, and no allocator block rests: no band, no whisker
        r = gpufit.estimate(model="llama-3-8b", task="inference", gpu="rtx-4090",
                            cuda_context_bytes=1 << 29, fragmentation=0.2,
                            expandable_segments=True)
        svg = ET.fromstring(r.svg())
        self.assertEqual([g for g in svg.iter("%sg" % SVG) if g.get("class") == "band"], [])

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

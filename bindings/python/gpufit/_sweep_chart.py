# SPDX-License-Identifier: MIT
"""The notebook chart of :func:`gpufit.sweep` (internal): the grid as an SVG heat map.

One cell per combination of a one- or two-key grid (the first key down, the last across):
green where it surely fits, amber where the capacity lies inside the band (marginal), red
where it does not fit, grey where the library refused the combination; the shade is the peak
as a share of the capacity (no GPU: of the grid's largest peak). The capacity line is drawn
along every cell edge that separates a combination that fits (or is marginal) from one that
does not. Well-formed XML, no script, no third-party package, as the report's chart.
"""

from typing import Any, Dict, List, Optional, Sequence

from ._render import _FONT, _x, escape

_FITS, _MARGINAL, _OOM, _ERROR = (46, 125, 50), (239, 108, 0), (198, 40, 40), (158, 158, 158)
_NONE = (21, 101, 192)  # no GPU: the peak alone


def _shade(rgb: Sequence[int], t: float) -> str:
    """``rgb`` mixed with white: t = 0 pale, 1 full."""
    t = 0.25 + 0.75 * max(0.0, min(1.0, t))
    return "#%02x%02x%02x" % tuple(int(round(255 - (255 - c) * t)) for c in rgb)


def _label(v: Any) -> str:
    return "%g" % v if isinstance(v, float) else str(v)


def render_sweep_svg(cols: Dict[str, List[Any]], keys: Sequence[str],
                     width: int = 720) -> Optional[str]:
    """The heat map of a sweep's columns ``cols`` over grid ``keys``, or None when the grid
    has no key or more than two."""
    if not 1 <= len(keys) <= 2:
        return None
    ykey = keys[0] if len(keys) == 2 else None
    xkey = keys[-1]
    xs: List[Any] = list(dict.fromkeys(cols[xkey]))
    ys: List[Any] = list(dict.fromkeys(cols[ykey])) if ykey else [None]
    nx, ny = len(xs), len(ys)
    left, top, right, bottom = (90 if ykey else 20), 30, 20, 46
    cw = max(4.0, min(48.0, (width - left - right) / nx))
    ch = max(4.0, min(28.0, 380.0 / ny))
    height = int(top + ny * ch + bottom)
    width = int(left + nx * cw + right)
    peaks = [p for p in cols["peak_bytes"] if p is not None]
    pmax = float(max(peaks)) if peaks else 1.0
    cell: Dict[Any, Any] = {}
    for i in range(len(cols["verdict"])):
        cell[(cols[ykey][i] if ykey else None, cols[xkey][i])] = i
    e = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
         'role="img" font-family="%s" font-size="11" style="display:block">'
         % (width, height, width, height, escape(_FONT)),
         "<title>%s</title>" % escape("gpufit.sweep over %s" % " x ".join(keys)),
         '<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>' % (width, height)]
    fits_at: Dict[Any, Optional[bool]] = {}
    for yi, yv in enumerate(ys):
        for xi, xv in enumerate(xs):
            ci = cell.get((yv, xv))
            if ci is None:
                continue
            verdict, peak, head = (cols["verdict"][ci], cols["peak_bytes"][ci],
                                   cols["headroom_bytes"][ci])
            if verdict == "error" or peak is None:
                fill, tip, ok = _shade(_ERROR, 0.6), cols["error"][ci] or "refused", None
            else:
                cap = peak + head if head is not None and verdict is not None else 0
                share = peak / cap if cap > 0 else peak / pmax
                rgb = {"fits": _FITS, "marginal": _MARGINAL, "oom": _OOM}.get(verdict, _NONE)
                fill = _shade(rgb, share)
                tip = "%s, peak %.2f GiB%s" % (verdict or "no GPU", peak / 2**30,
                                               " (%.0f %% of capacity)" % (100 * share)
                                               if cap > 0 else "")
                ok = None if verdict is None else verdict != "oom"
            fits_at[(yi, xi)] = ok
            where = ", ".join("%s=%s" % (k, _label(v)) for k, v in ((ykey, yv), (xkey, xv))
                              if k is not None)
            e.append('<rect x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="#ffffff" '
                     'stroke-width="0.5"><title>%s</title></rect>'
                     % (_x(left + xi * cw), _x(top + yi * ch), _x(cw), _x(ch), fill,
                        escape("%s: %s" % (where, tip))))
    # the capacity line: edges between a cell that fits (or is marginal) and one that does not
    for (yi, xi), ok in fits_at.items():
        if ok is None:
            continue
        for dy, dx in ((0, 1), (1, 0)):
            other = fits_at.get((yi + dy, xi + dx))
            if other is None or other == ok:
                continue
            if dx:
                x = left + (xi + 1) * cw
                seg = (x, top + yi * ch, x, top + (yi + 1) * ch)
            else:
                y = top + (yi + 1) * ch
                seg = (left + xi * cw, y, left + (xi + 1) * cw, y)
            e.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#111111" '
                     'stroke-width="2"/>' % tuple(_x(v) for v in seg))
    # axes: every k-th value labelled
    step = max(1, int(round(nx / max(1.0, (width - left - right) / 44.0))))
    for xi in range(0, nx, step):
        e.append('<text x="%s" y="%s" text-anchor="middle" fill="#333">%s</text>'
                 % (_x(left + (xi + 0.5) * cw), _x(top + ny * ch + 14), escape(_label(xs[xi]))))
    e.append('<text x="%s" y="%s" text-anchor="middle" fill="#333" font-weight="bold">%s</text>'
             % (_x(left + nx * cw / 2), _x(top + ny * ch + 32), escape(xkey)))
    if ykey:
        ystep = max(1, int(round(ny / max(1.0, ny * ch / 14.0))))
        for yi in range(0, ny, ystep):
            e.append('<text x="%s" y="%s" text-anchor="end" fill="#333">%s</text>'
                     % (_x(left - 6), _x(top + (yi + 0.5) * ch + 4), escape(_label(ys[yi]))))
        e.append('<text x="%d" y="%d" fill="#333" font-weight="bold">%s</text>'
                 % (4, top - 10, escape(ykey)))
    e.append('<text x="%s" y="%d" text-anchor="end" fill="#555">green fits, amber marginal, '
             'red does not fit; the line is the capacity</text>' % (_x(width - right), top - 10))
    e.append("</svg>")
    return "".join(e)


class SweepColumns(Dict[str, List[Any]]):
    """What :func:`gpufit.sweep` returns without pandas (or with ``as_frame=False``): a dict
    of columns, one per grid key, then ``verdict``, ``fits``, ``peak_bytes``,
    ``peak_low_bytes``, ``peak_high_bytes``, ``headroom_bytes`` and ``error``. In a notebook
    a one- or two-key grid shows as a heat map with the capacity line (:meth:`svg`)."""

    grid: List[str] = []

    def svg(self) -> Optional[str]:
        """The heat map as an SVG document (None for a grid of no key or more than two)."""
        return render_sweep_svg(self, self.grid)

    def _repr_html_(self) -> Optional[str]:
        return self.svg()

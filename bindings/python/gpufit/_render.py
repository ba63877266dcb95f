# SPDX-License-Identifier: MIT
"""Text and HTML renderings of a :class:`gpufit.Report` (internal).

``render_text`` prints what the ``gpufit estimate`` command prints. ``render_html`` returns a
self-contained fragment for notebooks: a verdict line, a stacked-bar chart of the components
of each device role drawn as inline SVG, and a table of every number. The markup is
well-formed XML (every tag closed, only numeric character references), needs no script, no
style sheet and no third-party package, and looks the same in Jupyter, VS Code and a browser.
"""

import math
from typing import Any, Dict, Iterable, List, Tuple

GIB = 1 << 30

#: Colours of the known components (Tableau 10 order, then neutrals for the overheads).
COLORS = {
    "weights": "#4e79a7",
    "gradients": "#f28e2b",
    "optimizer_states": "#e15759",
    "master_weights": "#76b7b2",
    "activations": "#59a14f",
    "kv_cache": "#edc948",
    "logits": "#b07aa1",
    "comm_buffers": "#ff9da7",
    "workspace": "#9c755f",
    "runtime_context": "#8c8c8c",
    "fragmentation": "#c9c9c9",
}
#: For components a newer library adds: picked in order of appearance.
_SPARE = ("#17becf", "#bcbd22", "#7f7f7f", "#d62728", "#9467bd", "#2ca02c", "#1f77b4")

_FONT = "system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif"
_GREEN, _RED, _GREY, _AMBER = "#2e7d32", "#c62828", "#616161", "#ef6c00"


def _gib(b: float) -> float:
    return b / GIB


def _fmt(b: float) -> str:
    return "%.2f GiB" % _gib(b)


_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"})


def escape(text: str) -> str:
    """``html.escape(text)`` (quotes too) without importing the html module at import time."""
    return text.translate(_ESCAPES)


def _x(v: float) -> str:
    """A coordinate for SVG: at most two decimals, no trailing zeros."""
    s = "%.2f" % v
    return s.rstrip("0").rstrip(".") if "." in s else s


# ---------------------------------------------------------------------------------------------
# Text (mirrors cli/gpufit.c)
# ---------------------------------------------------------------------------------------------
def _bar(frac: float, width: int) -> str:
    n = int(frac * width + 0.5)
    if n > width:
        n = width
    if frac > 0.0 and n == 0:
        n = 1
    return "#" * n + "." * (width - n)


def _roles_side_by_side(r: Any, out: List[str]) -> None:
    """Several roles: one column per role, then a bar of each role's device use."""
    roles = r.roles[:8]
    out.append("")
    out.append("%-18s" % "GiB per device" + "".join(" %12s" % ro.name for ro in roles))
    out.append("%-18s" % "" + "".join(" %12s" % ("%d dev, %d L" % (ro.devices, ro.layers))
                                       for ro in roles))
    for name in (roles[0].components if roles else {}):
        values = [ro.components.get(name, 0) for ro in roles]
        if not any(values):
            continue
        out.append("  %-16s" % name + "".join(" %12.2f" % _gib(v) for v in values))
    for label, attr in (("peak allocated", "peak_allocated_bytes"),
                        ("peak reserved", "peak_reserved_bytes"),
                        ("device used", "device_used_bytes")):
        out.append("%-18s" % label + "".join(" %12.2f" % _gib(getattr(ro, attr))
                                             for ro in roles))
    out.append("%-18s" % "fits" + "".join(
        " %12s" % ("yes" if ro.fits else "-" if ro.fits is None else "NO") for ro in roles))
    out.append("")
    for ro in roles:
        cap = 0 if ro.name == "host" else r.capacity_bytes
        scale = max(cap, ro.device_used_bytes)
        line = "  %-10s " % ro.name + _bar(ro.device_used_bytes / scale if scale else 0.0, 40)
        if cap > 0:
            line += " %5.1f %% of %.2f GiB" % (100.0 * ro.device_used_bytes / cap, _gib(cap))
        else:
            line += " %.2f GiB" % _gib(ro.device_used_bytes)
        out.append(line)


def render_text(r: Any, bars: bool = True) -> str:
    """The report as ``gpufit estimate`` prints it (same lines, same numbers)."""
    out = []
    if r.model_name is not None:
        out.append("gpufit %s: %s, task %s" % (r.library_version, r.model_name, r.task))
    cap = _fmt(r.capacity_bytes) if r.capacity_bytes > 0 else "no GPU"
    out.append("parameters: %.3f B total, %.3f B active   capacity: %s" % (
        r.n_params / 1e9, r.n_active_params / 1e9, cap))
    if len(r.roles) == 1:
        ro = r.roles[0]
        out.append("")
        out.append("role %s (%d device%s, %d layers)" % (
            ro.name, ro.devices, "" if ro.devices == 1 else "s", ro.layers))
        scale = max(r.capacity_bytes, ro.device_used_bytes)
        for name, b in ro.components.items():
            if b == 0:
                continue
            line = "  %-17s %10.2f GiB" % (name, _gib(b))
            if bars:
                line += "  " + _bar(b / scale if scale else 0.0, 40)
            out.append(line)
        out.append("  %-17s %10.2f GiB  (%.2f-%.2f)" % (
            "peak allocated", _gib(ro.peak_allocated_bytes), _gib(ro.peak_allocated_low_bytes),
            _gib(ro.peak_allocated_high_bytes)))
        out.append("  %-17s %10.2f GiB  (%.2f-%.2f)" % (
            "peak reserved", _gib(ro.peak_reserved_bytes), _gib(ro.peak_reserved_low_bytes),
            _gib(ro.peak_reserved_high_bytes)))
        line = "  %-17s %10.2f GiB  (%.2f-%.2f)" % (
            "device used", _gib(ro.device_used_bytes), _gib(ro.device_used_low_bytes),
            _gib(ro.device_used_high_bytes))
        if r.capacity_bytes > 0:
            line += "  of %.2f GiB (%.1f %%)" % (
                _gib(r.capacity_bytes), 100.0 * ro.device_used_bytes / r.capacity_bytes)
        out.append(line)
        if ro.kv_capacity_tokens > 0:
            out.append("  %-17s %10.2f GiB  (%.2f-%.2f) = %d tokens" % (
                "kv capacity", _gib(ro.kv_capacity_bytes), _gib(ro.kv_capacity_low_bytes),
                _gib(ro.kv_capacity_high_bytes), ro.kv_capacity_tokens))
    elif r.roles:
        _roles_side_by_side(r, out)
    for note in r.notes:
        out.append("note: %s" % note)
    res = r.resolved  # what every auto resolved to, as the command prints it
    if res:
        def word(k: str, v: Any) -> str:
            if isinstance(v, bool):
                return "true" if v else "false"
            if k == "gpu_memory_utilization":
                return "%.3f" % v
            return str(v)
        out.append("resolved: " + " ".join("%s=%s" % (k, word(k, v)) for k, v in res.items()))
    if r.flags:
        out.append("flags: %s" % r.flags)
    mit = r.mitigations
    if mit:
        out.append("")
        out.append("what would make it fit, best first (cost: speed, quality or money lost):")
    for i, m in enumerate(mit):
        out.append("  %2d. %-4s %8.2f GiB  %s" % (
            i + 1, "fits" if m.get("fits_after") else "oom",
            _gib(m.get("peak_bytes_after", 0)), m.get("text", "")))
        out.append("           --spec \"%s\"" % m.get("spec", ""))
    out.append("")
    out.append(verdict_line(r))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# Chart
# ---------------------------------------------------------------------------------------------
def _off_gpu(r: Any, ro: Any) -> bool:
    """A role that is not checked against the GPU (host memory placed there by offload)."""
    return ro.name == "host" or (ro.fits is None and r.fits is not None)


def _colors(names: Iterable[str]) -> Dict[str, str]:
    out, spare = {}, 0
    for n in names:
        if n in COLORS:
            out[n] = COLORS[n]
        else:
            out[n] = _SPARE[spare % len(_SPARE)]
            spare += 1
    return out


def _present(r: Any) -> List[str]:
    """Component names that are non-zero in some role, in report order."""
    names = []
    for ro in r.roles:
        for n, b in ro.components.items():
            if b and n not in names:
                names.append(n)
    order = list(r.roles[0].components) if r.roles else []
    return sorted(names, key=lambda n: order.index(n) if n in order else len(order))


def _nice_step(span: float, target: int = 6) -> float:
    """A round tick step (1, 2, 2.5 or 5 x 10^k) giving about ``target`` ticks."""
    if span <= 0:
        return 1.0
    raw = span / target
    mag = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def render_svg(r: Any, width: int = 720) -> str:
    """A stacked horizontal bar per device role, one segment per component, the band of its
    device-used total as a whisker (docs/band.md), the GPU's capacity as a dashed line and a
    legend of the components shown."""
    label_w, right, top = 150, 128, 26
    bar_h, gap = 26, 16
    plot_w = width - label_w - right
    roles = r.roles
    names = _present(r)
    colors = _colors(names)
    # the axis reaches the band's high end too (docs/band.md)
    peak = max([max(ro.device_used_bytes, getattr(ro, "device_used_high_bytes", 0) or 0)
                for ro in roles] + [0])
    top_gib = max(_gib(r.capacity_bytes), _gib(peak), 1e-9)
    step = _nice_step(top_gib)
    axis_max = math.ceil(top_gib / step - 1e-9) * step
    if axis_max < top_gib * 1.02:
        axis_max += step

    def sx(b: float) -> float:
        return label_w + plot_w * _gib(b) / axis_max

    bars_bottom = top + len(roles) * (bar_h + gap) - gap
    axis_y = bars_bottom + 8
    # legend layout: items flow left to right and wrap
    legend_y = axis_y + 34
    x, rows, items = label_w, 0, []
    for n in names:
        w = 22 + 7 * len(n) + 18
        if x + w > width - 8 and x > label_w:
            x, rows = label_w, rows + 1
        items.append((n, x, legend_y + rows * 20))
        x += w
    height = legend_y + rows * 20 + 10

    e = []
    e.append('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
             'role="img" font-family="%s" font-size="12" style="display:block">'
             % (width, height, width, height, escape(_FONT)))
    e.append("<title>%s</title>" % escape("GPU memory per device role: %s" % (
        r.model_name or "model")))
    e.append('<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>' % (width, height))
    # grid and axis
    ticks = int(round(axis_max / step))
    for i in range(ticks + 1):
        v = i * step
        tx = label_w + plot_w * v / axis_max
        e.append('<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#e6e6e6" stroke-width="1"/>'
                 % (_x(tx), top - 4, _x(tx), axis_y))
        label = ("%g" % v) + (" GiB" if i == ticks else "")
        e.append('<text x="%s" y="%d" text-anchor="middle" fill="#555">%s</text>'
                 % (_x(tx), axis_y + 15, escape(label)))
    e.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999" stroke-width="1"/>'
             % (label_w, axis_y, label_w + plot_w, axis_y))
    # bars
    for k, ro in enumerate(roles):
        y = top + k * (bar_h + gap)
        e.append('<text x="%d" y="%s" text-anchor="end" font-weight="600" fill="#222">%s</text>'
                 % (label_w - 10, _x(y + bar_h / 2 - 2), escape(ro.name)))
        host = _off_gpu(r, ro)
        sub = ("host memory, %d process%s" % (ro.devices, "" if ro.devices == 1 else "es")
               if host else "%d device%s, %d layers" % (ro.devices, "" if ro.devices == 1
                                                         else "s", ro.layers))
        e.append('<text x="%d" y="%s" text-anchor="end" font-size="10.5" fill="#666">%s</text>'
                 % (label_w - 10, _x(y + bar_h / 2 + 11), escape(sub)))
        if host:
            e.append('<g opacity="0.55">')
        acc = 0
        for n in names:
            b = ro.components.get(n, 0)
            if not b:
                continue
            x0, x1 = sx(acc), sx(acc + b)
            acc += b
            e.append('<rect x="%s" y="%d" width="%s" height="%d" fill="%s" stroke="#ffffff" '
                     'stroke-width="0.5"><title>%s</title></rect>'
                     % (_x(x0), y, _x(max(x1 - x0, 0.5)), bar_h, colors[n],
                        escape("%s (%s): %s, %.1f %% of device used" % (
                            n, ro.name, _fmt(b),
                            100.0 * b / ro.device_used_bytes if ro.device_used_bytes else 0))))
        if host:
            e.append("</g>")
        lo = getattr(ro, "device_used_low_bytes", None)
        hi = getattr(ro, "device_used_high_bytes", None)
        if not host and lo is not None and hi is not None and hi > lo:
            # the band of device used: a whisker from its low to its high end
            ym, x0, x1 = y + bar_h / 2, sx(lo), sx(hi)
            tip = escape("band of device used (%s): %s to %s" % (ro.name, _fmt(lo), _fmt(hi)))
            e.append('<g class="band"><title>%s</title>' % tip)
            e.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#222" stroke-width="1.5"/>'
                     % (_x(x0), _x(ym), _x(x1), _x(ym)))
            for bx in (x0, x1):
                e.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#222" '
                         'stroke-width="1.5"/>' % (_x(bx), _x(ym - 6), _x(bx), _x(ym + 6)))
            e.append("</g>")
        color = _RED if ro.fits is False else "#222"
        pct = (" (%.0f %%)" % (100.0 * ro.device_used_bytes / r.capacity_bytes)
               if r.capacity_bytes and not host else " (host)" if host else "")
        e.append('<text x="%d" y="%s" text-anchor="end" fill="%s" font-weight="600">%s</text>'
                 % (width - 8, _x(y + bar_h / 2 + 4), color,
                    escape("%.2f GiB%s" % (_gib(ro.device_used_bytes), pct))))
    # capacity
    if r.capacity_bytes:
        cx = _x(sx(r.capacity_bytes))
        e.append('<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s" stroke-width="2" '
                 'stroke-dasharray="6 4"/>' % (cx, top - 10, cx, axis_y, _RED))
        label = "capacity %s%s" % (_fmt(r.capacity_bytes),
                                   " (%s)" % r.gpu_name if r.gpu_name else "")
        lx = sx(r.capacity_bytes)
        # right-aligned to the line, unless that would run off the left edge
        anchor, lx = ("end", lx - 4) if lx - 4 - 6.2 * len(label) > 0 else ("start", lx + 4)
        e.append('<text x="%s" y="%d" text-anchor="%s" fill="%s" font-size="11">%s</text>'
                 % (_x(lx), top - 12, anchor, _RED, escape(label)))
    # legend
    for n, lx, ly in items:
        e.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (lx, ly - 10,
                                                                           colors[n]))
        e.append('<text x="%d" y="%d" fill="#333">%s</text>' % (lx + 17, ly, escape(n)))
    e.append("</svg>")
    return "".join(e)


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------
_TD = ('style="padding:2px 10px;text-align:right;font-variant-numeric:tabular-nums;'
       'white-space:nowrap"')
_TH = 'style="padding:3px 10px;text-align:right;border-bottom:1px solid #bbb;white-space:nowrap"'
_TL = 'style="padding:2px 10px;text-align:left"'


def verdict_line(r: Any) -> str:
    """The command's verdict line: the three-way verdict with the fullest device's band."""
    lo, hi, cap = _gib(r.peak_low_bytes), _gib(r.peak_high_bytes), _gib(r.capacity_bytes)
    if r.verdict is None:
        return "verdict: no GPU given (%.2f-%.2f GiB on the fullest device)" % (lo, hi)
    if r.verdict == "fits":
        return ("verdict: FITS: %.2f-%.2f GiB of %.2f GiB (headroom %.2f GiB at the point "
                "estimate)" % (lo, hi, cap, _gib(r.headroom_bytes)))
    if r.verdict == "marginal":
        return ("verdict: MARGINAL: %.2f-%.2f GiB of %.2f GiB (the capacity lies inside the "
                "band: measure, or add margin)" % (lo, hi, cap))
    if r.headroom_bytes >= 0:
        return ("verdict: DOES NOT FIT: the KV-cache budget is smaller than the job needs "
                "(%.2f-%.2f GiB of %.2f GiB used)" % (lo, hi, cap))
    return ("verdict: DOES NOT FIT: %.2f-%.2f GiB of %.2f GiB (short by %.2f GiB at the point "
            "estimate)" % (lo, hi, cap, _gib(-r.headroom_bytes)))


def _verdict(r: Any) -> Tuple[str, str, str]:
    band = "%s-%s" % (_fmt(r.peak_low_bytes), _fmt(r.peak_high_bytes))
    if r.verdict is None:
        return _GREY, "NO GPU GIVEN", "peak %s (%s) per device (no capacity to compare)" % (
            _fmt(r.peak_bytes), band)
    if r.verdict == "fits":
        return _GREEN, "FITS", "peak %s (%s) of %s, headroom %s on the fullest device" % (
            _fmt(r.peak_bytes), band, _fmt(r.capacity_bytes), _fmt(r.headroom_bytes))
    if r.verdict == "marginal":
        return _AMBER, "MARGINAL", "peak %s (%s) of %s: the capacity lies inside the band" % (
            _fmt(r.peak_bytes), band, _fmt(r.capacity_bytes))
    if r.headroom_bytes >= 0:
        return _RED, "DOES NOT FIT", "the KV-cache budget is smaller than the job needs"
    return _RED, "DOES NOT FIT", "peak %s (%s) of %s, short by %s on the fullest device" % (
        _fmt(r.peak_bytes), band, _fmt(r.capacity_bytes), _fmt(-r.headroom_bytes))


def _table(r: Any, colors: Dict[str, str]) -> str:
    names = list(r.roles[0].components) if r.roles else []
    h = ['<table style="border-collapse:collapse;margin-top:6px;font-size:12.5px">']
    h.append("<thead><tr><th %s>GiB per device</th>" % _TH.replace("right", "left"))
    for ro in r.roles:
        h.append("<th %s>%s<br/><span style=\"font-weight:normal;color:#666\">%s</span></th>"
                 % (_TH, escape(ro.name), escape(
                     "host memory" if _off_gpu(r, ro) else "%d device%s · %d layers" % (
                         ro.devices, "" if ro.devices == 1 else "s", ro.layers))))
    h.append("</tr></thead><tbody>")
    for n in names:
        if not any(ro.components.get(n) for ro in r.roles):
            continue
        sw = colors.get(n, "#ffffff")
        h.append('<tr><td %s><span style="display:inline-block;width:10px;height:10px;'
                 'margin-right:6px;background:%s"></span>%s</td>' % (_TL, sw, escape(n)))
        for ro in r.roles:
            h.append("<td %s>%.2f</td>" % (_TD, _gib(ro.components.get(n, 0))))
        h.append("</tr>")

    def row(label: str, values: Iterable[Any], bold: bool = False, top: bool = False) -> None:
        style = "border-top:1px solid #bbb;" if top else ""
        weight = "font-weight:600;" if bold else ""
        h.append('<tr style="%s%s"><td %s>%s</td>' % (style, weight, _TL, escape(label)))
        for v in values:
            h.append("<td %s>%s</td>" % (_TD, v))
        h.append("</tr>")

    row("peak allocated", ["%.2f" % _gib(ro.peak_allocated_bytes) for ro in r.roles], top=True)
    row("peak reserved", ["%.2f" % _gib(ro.peak_reserved_bytes) for ro in r.roles])
    row("device used", ["%.2f" % _gib(ro.device_used_bytes) for ro in r.roles], bold=True)
    if r.capacity_bytes:
        row("headroom", ["–" if _off_gpu(r, ro) else '<span style="color:%s">%.2f</span>' % (
            _RED if ro.headroom_bytes < 0 else _GREEN, _gib(ro.headroom_bytes))
            for ro in r.roles])
        row("fits", ["–" if ro.fits is None else '<span style="color:%s">%s</span>' % (
            _GREEN if ro.fits else _RED, "yes" if ro.fits else "no") for ro in r.roles])
    if any(ro.kv_capacity_tokens for ro in r.roles):
        row("KV capacity", ["%.2f (%d tokens)" % (_gib(ro.kv_capacity_bytes),
                                                  ro.kv_capacity_tokens) for ro in r.roles])
    h.append("</tbody></table>")
    return "".join(h)


def render_html(r: Any) -> str:
    """Verdict line, SVG chart, table and notes as one well-formed HTML fragment."""
    colors = _colors(list(r.roles[0].components) if r.roles else [])
    color, word, detail = _verdict(r)
    head = [r.model_name or "model"]
    if r.task:
        head.append("task %s" % r.task)
    if r.gpu_name or r.capacity_bytes:
        head.append("%s%s" % (r.gpu_name + " " if r.gpu_name else "",
                              "(%s)" % _fmt(r.capacity_bytes)))
    head.append("%.2f B parameters" % (r.n_params / 1e9) + (
        ", %.2f B active" % (r.n_active_params / 1e9)
        if r.n_active_params != r.n_params else ""))
    h = ['<div class="gpufit-report" style="font-family:%s;font-size:13px;line-height:1.45;'
         'color:#222;background:#ffffff;padding:8px;max-width:740px">' % escape(_FONT)]
    h.append('<div style="margin-bottom:4px"><b>%s</b> · %s</div>' % (
        escape(head[0]), escape(" · ".join(head[1:]))))
    h.append('<div style="margin-bottom:8px"><span style="background:%s;color:#ffffff;'
             'padding:1px 8px;border-radius:3px;font-weight:700;letter-spacing:0.03em">%s'
             '</span> <span>%s</span></div>' % (color, escape(word), escape(detail)))
    if r.roles:
        h.append("<div>%s</div>" % render_svg(r))
        h.append(_table(r, colors))
    if r.host_bytes:
        h.append("<div style=\"margin-top:6px\">host memory: %s</div>" % escape(
            _fmt(r.host_bytes)))
    if r.notes:
        h.append('<ul style="margin:6px 0 0 0;padding-left:18px;color:#444">')
        for n in r.notes:
            h.append("<li>%s</li>" % escape(n))
        h.append("</ul>")
    mit = r.mitigations
    if mit:
        h.append('<div style="margin-top:10px"><b>What would make it fit</b> (best first; cost '
                 '= speed, quality or money lost)</div>')
        h.append('<table style="border-collapse:collapse;font-size:12.5px">')
        h.append("<thead><tr><th %s>#</th><th %s>change</th><th %s>peak after</th>"
                 "<th %s>fits</th><th %s>spec</th></tr></thead><tbody>" % (
                     _TH, _TH.replace("right", "left"), _TH, _TH, _TH.replace("right", "left")))
        for i, m in enumerate(mit):
            fits = m.get("fits_after")
            h.append("<tr><td %s>%d</td><td %s>%s</td><td %s>%s</td><td %s><span style="
                     "\"color:%s\">%s</span></td><td %s><code>%s</code></td></tr>" % (
                         _TD, i + 1, _TL, escape(str(m.get("text", ""))), _TD,
                         escape(_fmt(m.get("peak_bytes_after", 0))), _TD,
                         _GREEN if fits else _RED, "yes" if fits else "no", _TL,
                         escape(str(m.get("spec", "")))))
        h.append("</tbody></table>")
    h.append('<div style="margin-top:6px;color:#888;font-size:11px">gpufit %s · 1 GiB = 2^30 '
             'bytes · device used = what nvidia-smi shows</div>' % escape(
                 str(r.library_version)))
    h.append("</div>")
    return "".join(h)

# SPDX-License-Identifier: MIT
"""``python3 -m gpufit``: the ``gpufit`` command, in Python.

Same subcommands, options and exit codes as the C command (``cli/gpufit.c``); the options of
estimate, recommend and plan come from the C command's own table, ``cli/options.def``
(``_options.py`` is generated from it by ``tools/gen_options.py``)::

    python3 -m gpufit estimate [FILE.json] [--model PATH] [--spec "key=value ..."]... [--json]
                               [--max PARAM] [--strict] [--allow-hardware] [--profile FILE]
    python3 -m gpufit recommend [FILE.json] [--model PATH] [--spec ...]... [--only gpu,gpu]
                                [--max-gpus N] [--json] [--profile FILE]
    python3 -m gpufit plan [FILE.json] [--model PATH] [--spec ...]... [--gpus-per-node N]
                           [--nodes N] [--top N] [--json] [--profile FILE]
    python3 -m gpufit models | gpus | params | version

The scenario is put together as the command does (cli/files.c): the file, then the model of
``--model`` (a Hugging Face model directory, its config.json or a .gguf file; a GGUF model
runs under llama.cpp unless the scenario names a framework), the profile, then each
``--spec`` in order.

Exit codes: 0 fits (or no GPU given), 1 does not fit, 2 bad input (usage, unknown key, bad
value, malformed spec or JSON), 3 a file could not be read, 4 internal error, 5 marginal
(estimate: the capacity lies inside the band; ``--strict`` makes it 1).
"""

import argparse
import json
import sys
from typing import NoReturn, Optional, Sequence, TextIO, Tuple, Union

from . import _api, _lib, _options
from . import errors as _errors

EXIT_FITS, EXIT_OOM, EXIT_BAD_INPUT, EXIT_IO, EXIT_INTERNAL, EXIT_MARGINAL = 0, 1, 2, 3, 4, 5

_EPILOG = """\
A scenario comes from a JSON file (shared scenario format), a spec string, or both (the
spec is applied after the file). Example:
  python3 -m gpufit estimate --spec "model=llama-3-8b task=inference gpu=rtx-4090 context_len=8192"

exit codes: 0 fits (or no GPU given), 1 does not fit, 2 bad input, 3 unreadable file,
            4 internal error, 5 marginal (estimate)
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # usage errors are bad input: exit 2, as the C command
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, "%s: error: %s\n" % (self.prog, message))


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python3 -m gpufit", description="Predict the GPU memory of a "
                "deep-learning job before it is launched.", epilog=_EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    e = sub.add_parser("estimate", help="estimate a scenario (JSON file and/or spec string)",
                       epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    r = sub.add_parser("recommend", help="which catalogue GPUs, and how many, fit the job")
    pl = sub.add_parser("plan", help="the cheapest parallel layouts that fit a cluster")
    commands = {"estimate": e, "recommend": r, "plan": pl}
    for sp in commands.values():
        sp.add_argument("file", nargs="?", metavar="FILE.json", help="JSON scenario file")
    # the options of cli/options.def, the C command's own table (_options.py is generated)
    for name, dest, kind, cmds, metavar, default, help_ in _options.OPTIONS:
        for cmd in cmds:
            sp = commands[cmd]
            if kind == "flag":
                sp.add_argument(name, dest=dest, action="store_true", help=help_)
            elif kind == "spec":
                sp.add_argument(name, dest=dest, action="append", metavar=metavar, help=help_)
            elif kind == "count":
                sp.add_argument(name, dest=dest, type=int, metavar=metavar,
                                default=default if default > 0 else None, help=help_)
            else:
                sp.add_argument(name, dest=dest, metavar=metavar, help=help_)
    c = sub.add_parser("calibrate", help="fit the stack constants to measured runs "
                       "(docs/calibration.md)")
    c.add_argument("runs", metavar="RUNS.jsonl", help="measured runs, one JSON object per line "
                   "(docs/runs.md)")
    c.add_argument("-o", dest="output", metavar="PROFILE.json",
                   help="write the profile here (else stdout)")
    sub.add_parser("models", help="built-in model presets")
    sub.add_parser("gpus", help="GPU catalogue")
    sub.add_parser("params", help="every parameter with unit, default and range")
    sub.add_parser("version", help="library version")
    sub.add_parser("help", help="this help")
    return p


def _print_error(what: str, e: _errors.GpufitError) -> None:
    print("gpufit: %s: %s (%s)" % (what, e.message, _lib.status_text(e.status)),
          file=sys.stderr)
    caret = e.caret()
    if caret:
        print(caret, file=sys.stderr)
    elif e.offset is not None:
        print("  at byte offset %d" % e.offset, file=sys.stderr)


def _bad_input_code(e: _errors.GpufitError) -> int:
    return EXIT_INTERNAL if isinstance(e, (_errors.InternalError, _errors.OutOfMemory)) \
        else EXIT_BAD_INPUT


def _load(args: argparse.Namespace,
          what: str = "estimate") -> Union[int, Tuple[_api.Model, _api.Job]]:
    """(model, job) from the file, model, profile and specs of ``args`` (in the command's
    order, cli/files.c), or an exit code."""
    specs = args.spec or []
    if args.file is None and not specs and args.model is None:
        print("gpufit %s: no scenario: give FILE.json, --spec or --model" % what,
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if len(specs) > 16:
        print("gpufit %s: more than 16 --spec options" % what, file=sys.stderr)
        return EXIT_BAD_INPUT
    model, job = _api.Model(), _api.Job()
    if args.file is not None:
        try:
            _api.apply_file(model, job, args.file)
        except OSError:
            print("gpufit: cannot read %s" % args.file, file=sys.stderr)
            return EXIT_IO
        except _errors.GpufitError as e:
            print("gpufit: %s: %s (%s) at byte %s" % (
                args.file, e.message, _lib.status_text(e.status),
                e.offset if e.offset is not None else "?"), file=sys.stderr)
            return _bad_input_code(e)
    if args.model is not None:  # replaces the scenario's model; the specs still override
        if args.model.endswith(".safetensors"):
            print("gpufit: %s: a safetensors file has no architecture; pass its model "
                  "directory or config.json" % args.model, file=sys.stderr)
            return EXIT_BAD_INPUT
        try:
            file_model = _api.Model.from_file(args.model)
        except OSError as e:
            print("gpufit: cannot read %s: %s" % (args.model, e.strerror or e),
                  file=sys.stderr)
            return EXIT_IO
        except _errors.GpufitError as e:
            _print_error(args.model, e)
            return _bad_input_code(e)
        model._replace(file_model)
        if (_api._read_magic(args.model) == b"GGUF" and job.get("framework") == "pytorch"):
            job.set("framework", "llamacpp")  # the default: a GGUF file runs under llama.cpp
    if args.profile is not None:
        try:
            job.apply_profile(args.profile)
        except OSError:
            print("gpufit: cannot read %s" % args.profile, file=sys.stderr)
            return EXIT_IO
        except _errors.GpufitError as e:
            _print_error(args.profile, e)
            return _bad_input_code(e)
    if getattr(args, "allow_hardware", False):
        job.set("allow_hardware", True)
    for spec in specs:
        try:
            _api._apply_spec(model, job, spec)
        except _errors.GpufitError as e:
            _print_error("spec", e)
            return _bad_input_code(e)
    return model, job


def cmd_estimate(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    """``estimate``: file, then spec, then evaluate; prints text or JSON."""
    loaded = _load(args)
    if isinstance(loaded, int):
        return loaded
    model, job = loaded
    if args.max_param is not None:
        return _max(model, job, args.max_param, args.json, out)
    try:
        report = _api.evaluate(model, job)
    except _errors.GpufitError as e:
        _print_error("estimate", e)
        return _bad_input_code(e)
    if args.json:
        out.write(report.to_json())
    else:
        out.write(report.text())
    # the three-way verdict (docs/band.md), as cli/estimate.c; --strict fails closed
    if report.verdict is None and args.strict:
        print("gpufit estimate: --strict needs a GPU (gpu=NAME or a capacity)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if report.verdict == "oom":
        return EXIT_OOM
    if report.verdict == "marginal":
        return EXIT_OOM if args.strict else EXIT_MARGINAL
    return EXIT_FITS


def _max(model: _api.Model, job: _api.Job, name: str, as_json: bool, out: TextIO) -> int:
    pid = _api._param_id(name)
    if not pid:
        print("gpufit: --max: unknown parameter '%s'" % name, file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        v = _api.max_fitting_handles(model, job, name)
    except _errors.GpufitError as e:
        _print_error("--max", e)
        return _bad_input_code(e)
    gbs, dp = job.get("global_batch"), job.get("dp")
    accumulation = (gbs + v * dp - 1) // (v * dp) if v > 0 and gbs > 0 else None
    if as_json:
        d = {"param": name, "max": v}
        if name == "micro_batch" and accumulation is not None:
            d["gradient_accumulation"] = accumulation
        out.write(json.dumps(d) + "\n")
    elif v == 0:
        out.write("%s: even the smallest value does not fit\n" % name)
    else:
        line = "largest %s that fits: %d" % (name, v)
        if name == "micro_batch" and gbs > 0:
            line += " (gradient accumulation %d keeps the global batch of %d)" % (
                accumulation, gbs)
        out.write(line + "\n")
    return EXIT_FITS if v > 0 else EXIT_OOM


def cmd_recommend(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    """``recommend``: catalogue GPUs (and how many) that fit, best first."""
    loaded = _load(args, "recommend")
    if isinstance(loaded, int):
        return loaded
    model, job = loaded
    only = [n for n in (args.only or "").split(",") if n]
    try:
        recs = _api.recommend_handles(model, job, only or None, args.max_gpus)
    except _errors.NotFound as e:
        if e.key == "candidates":
            print("gpufit: --only: %s" % e.message, file=sys.stderr)
            return EXIT_BAD_INPUT
        _print_error("recommend", e)
        return _bad_input_code(e)
    except _errors.GpufitError as e:
        _print_error("recommend", e)
        return _bad_input_code(e)
    if args.json:  # the dataclasses' own to_dict(): the command's JSON
        out.write(json.dumps(recs.to_dict()) + "\n")
    else:
        for i, r in enumerate(recs):
            line = "%2d. %s" % (i + 1, r["reason"])
            if r["price_usd"] > 0:
                line += ", about $%.0f, %.1f TFLOPS per $1000" % (r["price_usd"],
                                                                  r["tflops_per_kusd"])
            out.write(line + "\n")
            out.write('    --spec "%s"\n' % r["spec"])
        if not recs:
            out.write("no catalogue GPU fits this job with up to %d GPUs\n" % args.max_gpus)
    return EXIT_FITS if recs else EXIT_OOM


def cmd_calibrate(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    """``calibrate RUNS.jsonl [-o PROFILE.json]``, as cli/calibrate.c: the profile to stdout
    or to the file; exit 2 for bad runs, 3 for a file that cannot be read or written."""
    try:
        with open(args.runs, "rb") as f:
            data = f.read()
    except OSError as e:
        print("gpufit calibrate: cannot read '%s': %s" % (args.runs, e.strerror),
              file=sys.stderr)
        return EXIT_IO
    try:
        text = _api.calibrate_text(data)
    except _errors.GpufitError as e:
        print("gpufit calibrate: %s: %s" % (args.runs, e.message), file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.output is None:
        out.write(text)
        return EXIT_FITS
    try:
        with open(args.output, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    except OSError:
        print("gpufit calibrate: cannot write '%s'" % args.output, file=sys.stderr)
        return EXIT_IO
    print("gpufit calibrate: profile written to %s" % args.output, file=sys.stderr)
    return EXIT_FITS


def cmd_plan(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    """``plan``: the cheapest layouts that fit gpus_per_node x nodes GPUs."""
    loaded = _load(args, "plan")
    if isinstance(loaded, int):
        return loaded
    model, job = loaded
    try:
        lays = _api.plan_handles(model, job, args.gpus_per_node, args.nodes, args.top)
    except _errors.GpufitError as e:
        _print_error("plan", e)
        return _bad_input_code(e)
    if args.json:
        out.write(json.dumps(lays.to_dict()) + "\n")
    else:
        why = ("--gpus-per-node" if args.gpus_per_node is not None
               else "assumed: no gpus= or --gpus-per-node given" if lays.gpus_assumed
               else "the job's gpus")
        out.write("%d layouts evaluated on %d x %d GPUs (%s); %d cheapest that fit (cost: "
                  "docs/planner.md):\n" % (lays.evaluated, lays.nodes, lays.gpus_per_node, why,
                                            len(lays)))
        for i, y in enumerate(lays):
            out.write("%3d. cost %.3f  %7.2f GiB  %s" % (i + 1, y["cost"],
                                                         y["peak_bytes"] / 2**30, y["spec"]))
            if y.get("kv_capacity_tokens"):  # serving: the room left for more sequences
                out.write("  (KV room %d tokens per replica)" % y["kv_capacity_tokens"])
            out.write("\n")
            if y.get("flags"):  # the layout in its framework's own flags (docs/flags.md)
                out.write("       flags: %s\n" % y["flags"])
        if lays:
            out.write("\nplacement of layout 1: %s\n" % lays[0]["placement"])
        else:
            out.write("no layout fits\n")
    return EXIT_FITS if lays else EXIT_OOM


def cmd_models(out: TextIO = sys.stdout) -> int:
    out.write("%-34s %16s %16s  %s\n" % ("name", "params", "active", "aliases"))
    for m in _api.models():
        out.write("%-34s %16d %16d  %s\n" % (m["name"], m["n_params"], m["n_active_params"],
                                             " ".join(m["aliases"])))
    return EXIT_FITS


def cmd_gpus(out: TextIO = sys.stdout) -> int:
    out.write("%-18s %-28s %10s %6s %5s %5s  %s\n" % ("key", "name", "GiB", "TB/s", "bf16",
                                                     "fp8", "aliases"))
    for g in _api.gpus():
        out.write("%-18s %-28s %10.2f %6.2f %5s %5s  %s\n" % (
            g["key"], g["name"], g["memory_gib"], g["memory_bandwidth_gbs"] / 1000.0,
            "yes" if g["supports_bf16"] else "no", "yes" if g["supports_fp8"] else "no",
            " ".join(g["aliases"])))
    return EXIT_FITS


def cmd_params(out: TextIO = sys.stdout) -> int:
    for p in _api.params():
        line = "%-26s %-5s " % (p["name"], p["domain"])
        if p["type"] == "float":
            line += "float  default %g, range [%g, %g]" % (p["default"], p["min"], p["max"])
        elif p["type"] == "list" and p["name"] == "device_gpus":
            line += ("list   up to %d entries, each a name from 'gpufit gpus' or an id in "
                     "[%.0f, %.0f]" % (p["max_count"], p["min"], p["max"]))
        elif p["type"] == "list":
            line += "list   up to %d entries, each in [%g, %g]" % (p["max_count"], p["min"],
                                                                   p["max"])
        elif p["type"] in ("enum", "bool"):
            d = p["default"]
            if isinstance(d, bool):
                d = "true" if d else "false"
            line += "%s default %s, values: %s" % ("bool " if p["type"] == "bool" else "enum ",
                                                   d, " ".join(p["values"]))
        else:
            line += "int    default %d, range [%d, %d]" % (p["default"], p["min"], p["max"])
            if p["name"] == "gpu":
                line += ", or a name from 'gpufit gpus'"
        if p["unit"]:
            line += " (%s)" % p["unit"]
        out.write(line + "\n    %s\n" % p["doc"])
    return EXIT_FITS


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the command with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "estimate":
            return cmd_estimate(args)
        if args.command == "recommend":
            return cmd_recommend(args)
        if args.command == "plan":
            return cmd_plan(args)
        if args.command == "calibrate":
            return cmd_calibrate(args)
        if args.command == "models":
            return cmd_models()
        if args.command == "gpus":
            return cmd_gpus()
        if args.command == "params":
            return cmd_params()
        if args.command == "version":
            print("gpufit %s" % _lib.version_string)
            return EXIT_FITS
        if args.command == "help":
            parser.print_help()
            return EXIT_FITS
    except BrokenPipeError:
        return EXIT_FITS
    except Exception as e:  # a bug: say so, with the code the C command uses
        print("gpufit: internal error: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return EXIT_INTERNAL
    parser.print_usage(sys.stderr)
    return EXIT_BAD_INPUT


def main_exit() -> NoReturn:
    """Entry point of the ``gpufit-py`` script: exits with :func:`main`'s code."""
    sys.exit(main())

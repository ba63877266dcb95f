# SPDX-License-Identifier: MIT
"""python3 -m gpufit: same subcommands, exit codes and JSON as the gpufit command."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import _support


def py_gpufit(*args):
    p = subprocess.run([sys.executable, "-m", "gpufit"] + list(args), capture_output=True,
                       text=True, env=_support.python_env(), timeout=120)
    return p.returncode, p.stdout, p.stderr


class TestPythonCommand(unittest.TestCase):
    def test_exit_codes(self):
        self.assertEqual(py_gpufit("estimate", "--spec", "model=llama-3-8b task=inference "
                                   "gpu=rtx-4090 context_len=8192")[0], 0)
        self.assertEqual(py_gpufit("estimate", "--spec", "model=llama-3-70b task=inference "
                                   "gpu=rtx-4090")[0], 1)
        code, _, err = py_gpufit("estimate", "--spec", "model=llama-3-8b tp=banana")
        self.assertEqual(code, 2)
        self.assertIn("tp", err)
        self.assertIn("^", err)
        code, _, err = py_gpufit("estimate", "--spec", "model=llama-3-8b frobnicate=1")
        self.assertEqual(code, 2)
        self.assertIn("frobnicate", err)
        self.assertEqual(py_gpufit("estimate", "--spec", "model=no-such-model")[0], 2)
        self.assertEqual(py_gpufit("estimate", "--spec", "model=llama-3-8b tp=3")[0], 2)
        self.assertEqual(py_gpufit("estimate", "/no/such/file.json")[0], 3)
        self.assertEqual(py_gpufit("estimate")[0], 2)
        self.assertEqual(py_gpufit()[0], 2)
        self.assertEqual(py_gpufit("frobnicate")[0], 2)
        self.assertEqual(py_gpufit("estimate", "--frobnicate")[0], 2)
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write('{"model": "llama-3-8b", "context_len": 4096')
            code, _, err = py_gpufit("estimate", bad)
        self.assertEqual(code, 2)
        self.assertIn("at byte", err)

    def test_listings(self):
        for cmd in ("models", "gpus", "params", "version", "help"):
            code, out, _ = py_gpufit(cmd)
            self.assertEqual(code, 0, cmd)
            self.assertTrue(out, cmd)

    def test_same_as_command(self):
        if _support.cli_path() is None:
            self.skipTest("the gpufit command is not built")
        for spec in ("model=llama-3-8b task=inference gpu=rtx-4090 context_len=8192",
                     "model=llama-3-70b task=pretrain gpu=h100 tp=8 pp=4 dp=2",
                     "model=llama-3-70b task=pretrain gpu=h100 tp=8",
                     "model=llama-3-8b task=finetune"):
            with self.subTest(spec=spec):
                c_code, c_out, _ = _support.run_cli("estimate", "--json", "--spec", spec)
                p_code, p_out, _ = py_gpufit("estimate", "--json", "--spec", spec)
                self.assertEqual(p_code, c_code)
                self.assertEqual(json.loads(p_out), json.loads(c_out))
                # the text report: same verdict, parameters and device-used numbers
                c_code, c_out, _ = _support.run_cli("estimate", "--spec", spec)
                p_code, p_out, _ = py_gpufit("estimate", "--spec", spec)
                self.assertEqual(p_code, c_code)
                for pattern in (r"^verdict: .*$", r"^parameters: .*$", r"^device used.*$"):
                    self.assertEqual(re.findall(pattern, p_out, re.M),
                                     re.findall(pattern, c_out, re.M), pattern)
        for cmd in ("models", "gpus", "params"):
            c_code, c_out, _ = _support.run_cli(cmd)
            p_code, p_out, _ = py_gpufit(cmd)
            self.assertEqual(p_code, c_code, cmd)
            self.assertEqual(len(p_out.splitlines()), len(c_out.splitlines()), cmd)


class TestSearchCommands(unittest.TestCase):
    """recommend, plan and estimate --max: same JSON (parsed) and exit codes."""

    CASES = [
        ("estimate", "--spec", "model=llama-3-8b task=inference gpu=rtx-4090", "--max",
         "context_len", "--json"),
        ("estimate", "--spec", "model=llama-3-8b task=pretrain gpu=h100 global_batch=64",
         "--max", "micro_batch", "--json"),
        ("recommend", "--spec", "model=llama-3-8b task=inference", "--max-gpus", "2",
         "--only", "rtx-4090,h100", "--json"),
        ("plan", "--spec", "model=llama-3-70b task=pretrain gpu=h100 seq_len=4096",
         "--nodes", "4", "--top", "3", "--json"),
    ]

    def test_same_as_command(self):
        if _support.cli_path() is None:
            self.skipTest("the gpufit command is not built")
        for args in self.CASES:
            with self.subTest(args=" ".join(args)):
                c_code, c_out, _ = _support.run_cli(*args)
                if c_code == 2 and not c_out:
                    self.skipTest("this gpufit command has no %s" % args[0])
                p_code, p_out, p_err = py_gpufit(*args)
                self.assertEqual(p_code, c_code, p_err)
                self.assertEqual(json.loads(p_out), json.loads(c_out))
                c_code, c_out, _ = _support.run_cli(*args[:-1])
                p_code, p_out, _ = py_gpufit(*args[:-1])
                self.assertEqual(p_out, c_out)

    def test_bad_input(self):
        self.assertEqual(py_gpufit("estimate", "--spec", "model=gpt2 gpu=t4", "--max",
                                   "frobnicate")[0], 2)
        self.assertEqual(py_gpufit("recommend", "--spec", "model=gpt2", "--only",
                                   "no-such-gpu")[0], 2)
        self.assertEqual(py_gpufit("plan")[0], 2)


class TestModelFiles(unittest.TestCase):
    """--model DIR / config.json / .gguf, with --spec (several), for estimate, recommend and
    plan: the same JSON and exit code as the gpufit command (issue 16)."""

    def setUp(self):
        if _support.cli_path() is None:
            self.skipTest("the gpufit command is not built")
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = os.path.join(self.tmp.name, "qwen")
        os.mkdir(self.dir)
        with open(_support.REPO / "tests" / "data" / "hf" / "qwen2.5-7b.json") as f:
            text = f.read()
        with open(os.path.join(self.dir, "config.json"), "w") as f:
            f.write(text)
        self.gguf = _support.REPO / "tests" / "fuzz" / "corpus" / "gguf" / "llama_small.gguf"

    def same(self, *args):
        c_code, c_out, c_err = _support.run_cli(*args)
        p_code, p_out, p_err = py_gpufit(*args)
        self.assertEqual(p_code, c_code, "%s\nC: %s\nPython: %s" % (args, c_err, p_err))
        if c_out.startswith("{"):
            self.assertEqual(json.loads(p_out), json.loads(c_out), args)
        return c_code, json.loads(c_out) if c_out.startswith("{") else c_out

    def test_estimate_model_dir(self):
        code, d = self.same("estimate", "--model", self.dir, "--json", "--spec",
                            "task=inference gpu=rtx-4090", "--spec", "context_len=32768")
        self.assertIn(code, (0, 1, 5))
        self.assertEqual(d["model"]["n_params"], 7615616512)  # Qwen2.5-7B, its config.json
        self.same("estimate", "--model", os.path.join(self.dir, "config.json"), "--json",
                  "--spec", "task=lora gpu=a100-40gb")
        self.same("estimate", "--model", self.dir, "--json")  # no GPU: no verdict
        self.same("estimate", "--model", self.dir, "--json", "--strict")  # exit 2

    def test_gguf_runs_under_llamacpp(self):
        if not self.gguf.exists():
            self.skipTest("no GGUF fixture")
        _, llama = self.same("estimate", "--model", str(self.gguf), "--json", "--spec",
                             "gpu=rtx-4090 context_len=4096")
        _, torch = self.same("estimate", "--model", str(self.gguf), "--json", "--spec",
                             "gpu=rtx-4090 context_len=4096 framework=pytorch")
        _, named = self.same("estimate", "--model", str(self.gguf), "--json", "--spec",
                             "gpu=rtx-4090 context_len=4096 framework=llamacpp")
        self.assertEqual(llama, named)  # the default framework of a GGUF file: llama.cpp
        self.assertNotEqual(llama["peak_bytes"], torch["peak_bytes"])

    def test_recommend_and_plan(self):
        self.same("recommend", "--model", self.dir, "--spec", "task=inference", "--only",
                  "rtx-4090,h100,t4", "--json")
        self.same("plan", "--model", self.dir, "--spec", "task=pretrain gpu=h100 "
                  "seq_len=4096", "--top", "3", "--json")

    def test_missing_model_is_unreadable(self):
        self.same("estimate", "--model", os.path.join(self.tmp.name, "nope"), "--json")
        self.assertEqual(py_gpufit("estimate", "--model",
                                   os.path.join(self.tmp.name, "nope"))[0], 3)

    def test_marginal_and_strict(self):
        for c in range(8192, 200000, 4096):
            spec = "model=llama-3-8b task=inference gpu=rtx-4090 context_len=%d" % c
            c_code, _, _ = _support.run_cli("estimate", "--json", "--spec", spec)
            if c_code == 5:
                break
        else:
            self.skipTest("no marginal case found")
        self.assertEqual(self.same("estimate", "--json", "--spec", spec)[0], 5)
        self.assertEqual(self.same("estimate", "--json", "--strict", "--spec", spec)[0], 1)


if __name__ == "__main__":
    unittest.main()


class TestNoDrift(unittest.TestCase):
    """The two commands take the same subcommands and options: the C command's --help is
    compared with the Python parser, so an option added to one side only fails here."""

    def test_same_subcommands_and_options(self):
        if _support.cli_path() is None:
            self.skipTest("the gpufit command is not built")
        from gpufit import cli as pycli
        parser = pycli._parser()
        sub = next(a for a in parser._actions if a.choices and "estimate" in a.choices)
        code, out, err = _support.run_cli("--help")
        c_cmds = set(re.findall(r"^\s+gpufit ([a-z]+)\b", out + err, re.M)) - {"command"}
        self.assertTrue({"estimate", "recommend", "plan", "calibrate"} <= c_cmds, out + err)
        self.assertTrue(c_cmds <= set(sub.choices), (c_cmds, sorted(sub.choices)))
        for cmd in ("estimate", "recommend", "plan", "calibrate"):
            with self.subTest(cmd=cmd):
                code, out, err = _support.run_cli(cmd, "--help")
                self.assertEqual(code, 0, err)
                lines = (out + err).splitlines()
                usage = [lines[0]]  # the usage line, its continuation lines, the option lines
                for ln in lines[1:]:
                    if not ln.lstrip().startswith("["):
                        break
                    usage.append(ln)
                usage = "\n".join(usage + [ln.split("  ")[1] if ln.startswith("  -") else ln
                                            for ln in lines if re.match(r"^\s+-", ln)])
                c_opts = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", usage)) - {"-h",
                                                                                  "--help"}
                p_opts = {o for a in sub.choices[cmd]._actions for o in a.option_strings} - {
                    "-h", "--help"}
                self.assertEqual(c_opts, p_opts)

    def test_calibrate_same_as_command(self):
        if _support.cli_path() is None:
            self.skipTest("the gpufit command is not built")
        runs = str(_support.REPO / "tests" / "validation" / "public.jsonl")
        if not os.path.exists(runs):
            self.skipTest("no measured runs in this tree")
        c_code, c_out, _ = _support.run_cli("calibrate", runs)
        p_code, p_out, p_err = py_gpufit("calibrate", runs)
        self.assertEqual((p_code, p_out), (c_code, c_out), p_err)
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.jsonl")
            with open(bad, "w") as f:
                f.write('{"id": 1')
            self.assertEqual(py_gpufit("calibrate", bad)[0], _support.run_cli("calibrate",
                                                                              bad)[0])
            self.assertEqual(py_gpufit("calibrate", os.path.join(d, "none.jsonl"))[0], 3)
            out = os.path.join(d, "p.json")
            self.assertEqual(py_gpufit("calibrate", runs, "-o", out)[0], 0)
            with open(out) as f:
                self.assertEqual(f.read(), c_out)

# SPDX-License-Identifier: MIT
"""The options of the scenario commands (estimate, recommend, plan), generated from
cli/options.def by tools/gen_options.py: the table the C command is built from. Do not
edit; ``make check`` fails when this file is stale."""

from typing import Tuple

# (name, dest, kind, commands, metavar, default, help); kind: flag, string, spec (repeated,
# applied in order), count (an integer in [1, 4294967295]); default: a count's value when
# the option is not given, 0 = not given
Option = Tuple[str, str, str, Tuple[str, ...], str, int, str]
OPTIONS: Tuple[Option, ...] = (
    ('--model', 'model', 'string', ('estimate', 'recommend', 'plan'), 'PATH', 0,
     'a Hugging Face model directory (config.json, checked against its *.safetensors headers), its config.json, or a .gguf file; only file headers are read'),
    ('--spec', 'spec', 'spec', ('estimate', 'recommend', 'plan'), '"k=v ..."', 0,
     "scenario keys; up to 16 --spec apply in order, after the file (a later --spec overrides an earlier one's keys)"),
    ('--json', 'json', 'flag', ('estimate', 'recommend', 'plan'), '', 0,
     'the JSON report (docs/report.md)'),
    ('--profile', 'profile', 'string', ('estimate', 'recommend', 'plan'), 'FILE', 0,
     'a calibration profile (gpufit calibrate; docs/calibration.md)'),
    ('--max', 'max_param', 'string', ('estimate',), 'PARAM', 0,
     "the largest micro_batch, seq_len, batch, context_len, prompt_len or n_gpu_layers that is sure to fit (the band's high end)"),
    ('--strict', 'strict', 'flag', ('estimate',), '', 0,
     'a gate: marginal exits 1, no GPU exits 2'),
    ('--allow-hardware', 'allow_hardware', 'flag', ('estimate',), '', 0,
     'list another GPU or more GPUs among the fixes even when software changes that keep the GPU make it fit (job key allow_hardware)'),
    ('--only', 'only', 'string', ('recommend',), 'gpu,gpu', 0,
     'consider only these GPUs (catalogue names, comma-separated)'),
    ('--max-gpus', 'max_gpus', 'count', ('recommend',), 'N', 8,
     'at most N GPUs per recommendation'),
    ('--gpus-per-node', 'gpus_per_node', 'count', ('plan',), 'N', 0,
     "GPUs per node (default: the job's gpus= on one node, else 8)"),
    ('--nodes', 'nodes', 'count', ('plan',), 'N', 1,
     'nodes'),
    ('--top', 'top', 'count', ('plan',), 'N', 10,
     'layouts to list'),
)

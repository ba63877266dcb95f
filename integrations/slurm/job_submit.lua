-- SPDX-License-Identifier: MIT
-- job_submit.lua for gpufit (docs/slurm.md): the controller refuses, at submission, a job that
-- gpufit predicts to run out of GPU memory. It complements the SPANK plugin
-- (gpufit_spank.so): the plugin's submit-side check runs in the user's srun/sbatch/salloc and
-- can be bypassed; this one runs in slurmctld for every job. Tested on Slurm 22.05 by
-- `make check-slurm` (integrations/slurm/test/run.sh).
--
-- Install: JobSubmitPlugins=lua in slurm.conf and this file as job_submit.lua next to
-- slurm.conf (then restart slurmctld). The gpufit command must be installed on the
-- controller (make install; GPUFIT below).
--
-- What it reads from the job (as Slurm 22.05 passes it to job_submit/lua):
--   job_desc.spank_job_env  the SPANK options the user gave, one entry per option:
--                           "_SLURM_SPANK_OPTION_gpufit_gpufit_spec=model=... task=..."
--                           (--gpufit-spec) and "..._gpufit_gpufit=FILE" (--gpufit; a file
--                           on the submit host: not read here, the plugin checks it)
--   job_desc.tres_per_node  "gres:gpu:a100_80gb:2" from --gres=gpu:a100_80gb:2
--   job_desc.tres_per_job   "gres:gpu:a100_80gb:8" from --gpus=a100_80gb:8
-- The GRES type is passed to gpufit as gpu=TYPE: gpufit takes Slurm GRES type names
-- (a100_80gb, h100, rtx4090: docs/gpus.md); GPU_MAP below maps a site's own type names.
--
-- gpufit estimate's exit codes: 0 fits, 1 does not fit (with --strict also marginal),
-- 2 bad input (a malformed spec: its message names the key and the byte offset),
-- 3 unreadable file, 4 internal, 5 marginal (without --strict).

-- the gpufit command on the controller (GPUFIT_CLI in slurmctld's environment overrides it)
local GPUFIT = os.getenv("GPUFIT_CLI") or "/usr/local/bin/gpufit"
-- true: a marginal verdict (the capacity lies inside the band: docs/band.md) is refused
-- (gpufit estimate --strict); false: it is accepted with a warning to the user (exit code 5)
local MARGINAL_REFUSE = false
-- a site's GRES type names that gpufit does not know, mapped to catalogue names (gpufit gpus)
local GPU_MAP = {
    -- ["a100l"] = "a100-80gb-pcie",
}
-- the GPU assumed when a job asks for GPUs without a type (nil: the spec must name one)
local DEFAULT_GPU = nil

local OPTION = "_SLURM_SPANK_OPTION_gpufit_gpufit_spec="

-- The --gpufit-spec value of the job, or nil.
local function gpufit_spec(job_desc)
    local env = job_desc.spank_job_env
    if type(env) ~= "table" then
        return nil
    end
    for _, entry in pairs(env) do
        if type(entry) == "string" and string.sub(entry, 1, #OPTION) == OPTION then
            return string.sub(entry, #OPTION + 1)
        end
    end
    return nil
end

-- The GRES type in "gres:gpu:TYPE:N" (tres_per_node or tres_per_job), or nil.
local function gpu_type(tres)
    if type(tres) ~= "string" then
        return nil
    end
    for item in string.gmatch(tres, "[^,]+") do
        local t = string.match(item, "gpu:([^:]+):%d+$")
        if t ~= nil then
            return GPU_MAP[t] or t
        end
    end
    return nil
end

-- The spec in single quotes for /bin/sh: the user wrote it, so it is never left unquoted.
local function shell_quote(s)
    return "'" .. string.gsub(s, "'", "'\\''") .. "'"
end

-- Runs gpufit; returns its exit code and its output (stdout and stderr).
local function run_gpufit(spec)
    local cmd = GPUFIT .. " estimate" .. (MARGINAL_REFUSE and " --strict" or "") ..
                " --spec " .. shell_quote(spec) .. " 2>&1; echo \"gpufit-exit=$?\""
    local pipe = io.popen(cmd, "r")
    if pipe == nil then
        return 4, "cannot run " .. GPUFIT
    end
    local out = pipe:read("*a")
    pipe:close()
    local code = tonumber(string.match(out, "gpufit%-exit=(%d+)%s*$")) or 4
    return code, string.gsub(out, "gpufit%-exit=%d+%s*$", "")
end

-- The verdict line of gpufit's report and its first fix (ranked fixes keep the GPU first:
-- docs/mitigations.md), with the --spec that applies it.
local function verdict_and_fix(out)
    local text = string.match(out, "verdict: [^\n]+") or out
    local fix = string.match(out, "\n(%s+1%. [^\n]+\n[^\n]+)")
    if fix ~= nil then
        text = text .. "\nfirst fix:\n" .. fix
    end
    return text
end

function slurm_job_submit(job_desc, part_list, submit_uid)
    local spec = gpufit_spec(job_desc)
    if spec == nil then
        return slurm.SUCCESS -- the job did not ask for a check
    end
    local gpu = gpu_type(job_desc.tres_per_node) or gpu_type(job_desc.tres_per_job) or
                DEFAULT_GPU
    if gpu ~= nil then
        spec = spec .. " gpu=" .. gpu -- the GPU the job asks for wins over the spec's own
    end
    local code, out = run_gpufit(spec)
    if code == 0 then
        return slurm.SUCCESS
    elseif code == 5 then
        slurm.log_user("gpufit: MARGINAL, accepted:\n%s", verdict_and_fix(out))
        return slurm.SUCCESS
    elseif code == 1 then
        slurm.log_user("gpufit: job refused (out of GPU memory predicted):\n%s",
                       verdict_and_fix(out))
        return slurm.ERROR
    elseif code == 2 then
        slurm.log_user("gpufit: job refused: malformed --gpufit-spec:\n%s", out)
        return slurm.ERROR
    end
    -- 3, 4 or no gpufit: fail open, the node-side plugin still checks
    slurm.log_info("gpufit: job_submit: gpufit exited %d: %s", code, out)
    return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
    return slurm.SUCCESS
end

slurm.log_info("gpufit job_submit.lua loaded (gpufit: %s)", GPUFIT)
return slurm.SUCCESS

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make check-slurm: the SPANK plugin against a real Slurm (22.05, Debian 12) on loopback.
#
# Needs root and the Debian packages slurmctld slurmd slurm-client libslurm-dev munge (the
# Makefile target installs nothing; .ci/run does). Prints SKIP and exits 0 without them.
# Writes its own SLURM_CONF in a temporary directory (4 stand-in GPUs, proctrack/linuxproc,
# task/none, no accounting), starts munged (as the munge user, own key and socket), slurmctld
# and slurmd in the background, runs the jobs below and stops every daemon it started by PID.
#
# usage: run.sh PLUGIN.so GPUFIT_BUILD_DIR   (GPUFIT_SLURM_KEEP=1 keeps the temporary directory;
# GPUFIT_SLURM_PORT: slurmctld's port, slurmd's is the next one; default 16817)
set -euo pipefail

PLUGIN=${1:?usage: run.sh PLUGIN.so BUILD_DIR}
BUILD=${2:?usage: run.sh PLUGIN.so BUILD_DIR}
PLUGIN=$(readlink -f "$PLUGIN")
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(readlink -f "$BUILD")

# GPUFIT_SLURM_REQUIRED=1 (.ci/run): a SKIP fails
skip() {
    echo "SKIP: check-slurm: $*"
    [ -z "${GPUFIT_SLURM_REQUIRED:-}" ] || { echo "FAIL: GPUFIT_SLURM_REQUIRED is set"; exit 1; }
    exit 0
}
[ "$(id -u)" -eq 0 ] || skip "needs root (daemons, munge user)"
for t in slurmctld slurmd srun sbatch scontrol munged; do
    command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] ||
        skip "$t missing (apt-get install slurmctld slurmd slurm-client libslurm-dev munge)"
done
id munge >/dev/null 2>&1 || skip "no munge user"
[ -f "$PLUGIN" ] || { echo "FAIL: $PLUGIN not built"; exit 1; }
PATH=$PATH:/usr/sbin
START=$(date +%s)

T=$(mktemp -d /tmp/gpufit-slurm.XXXXXX)
chmod 755 "$T"
PIDS=()
cleanup() {
    rc=$?
    # munged's own PID too (runuser started it), then every PID in the order started
    [ -s "$T/munge/munged.pid" ] && PIDS+=("$(cat "$T/munge/munged.pid")")
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    if [ "$rc" -ne 0 ]; then
        echo "---- logs ($T) ----"
        for f in "$T"/log/* "$T"/munge/munged.log; do echo "== $f"; tail -n 40 "$f"; done
    fi
    if [ -n "${GPUFIT_SLURM_KEEP:-}" ]; then echo "kept $T"; else rm -rf "$T"; fi
    exit "$rc"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $* ($(( $(date +%s) - START )) s)"; }

# ---- munge: its own key, socket and logs, as the munge user -------------------------------
mkdir -p "$T/munge" "$T/log" /run/munge
chown munge: "$T/munge" /run/munge
chmod 755 "$T/munge"  # munged: the socket directory must be searchable by all
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chown munge: "$T/munge/munge.key"
chmod 400 "$T/munge/munge.key"
runuser -u munge -- munged --key-file="$T/munge/munge.key" --socket="$T/munge/munge.sock" \
    --pid-file="$T/munge/munged.pid" --seed-file="$T/munge/seed" \
    --log-file="$T/munge/munged.log" --foreground > "$T/log/munged.out" 2>&1 &
PIDS+=($!)

# ---- Slurm configuration ------------------------------------------------------------------
HOST=$(hostname -s)
mkdir -p "$T/dev" "$T/spool" "$T/state" "$T/out"
# stand-in device nodes for gres.conf (NVIDIA's major 195; a regular file where mknod is not
# allowed, which slurmd logs as an error but accepts)
for i in 0 1 2 3; do mknod "$T/dev/nvidia$i" c 195 "$i" 2>/dev/null || : > "$T/dev/nvidia$i"; done
NCPU=$(nproc)
PORT=${GPUFIT_SLURM_PORT:-16817}
cat > "$T/slurm.conf" <<CONF
ClusterName=gpufit-test
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
PlugStackConfig=$T/plugstack.conf
GresTypes=gpu
InactiveLimit=0
KillWait=2
MinJobAge=300
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$NCPU Gres=gpu:a100_80gb:4 State=UNKNOWN
PartitionName=gpu Nodes=ALL Default=YES MaxTime=5 State=UP
CONF
cat > "$T/gres.conf" <<CONF
NodeName=$HOST Name=gpu Type=a100_80gb File=$T/dev/nvidia[0-3]
CONF
cat > "$T/cgroup.conf" <<CONF
CgroupAutomount=no
CONF
# the plugin goes in with mv (never cp over a loaded .so); required: a load failure fails jobs
cp "$PLUGIN" "$T/gpufit_spank.so.new"
mv "$T/gpufit_spank.so.new" "$T/gpufit_spank.so"
cat > "$T/plugstack.conf" <<CONF
required $T/gpufit_spank.so gpu=a100-80gb margin=0.05 marginal=warn enforce=both
CONF
export SLURM_CONF=$T/slurm.conf
export LD_LIBRARY_PATH=$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

for _ in $(seq 50); do [ -S "$T/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$T/munge/munge.sock" ] || fail "munged did not start"

# GPUFIT_CLI: the gpufit command job_submit.lua runs (test 6)
GPUFIT_CLI=$BUILD/gpufit slurmctld -D -i -f "$T/slurm.conf" > "$T/log/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -f "$T/slurm.conf" > "$T/log/slurmd.out" 2>&1 &
PIDS+=($!)

# wait_idle: until slurmctld answers and the node is idle (60 s at most)
wait_idle() {
    local state=
    for _ in $(seq 120); do
        state=$(sinfo -h -N -n "$HOST" -o %T 2>/dev/null || true)
        [ "$state" = idle ] && return 0
        sleep 0.5
    done
    fail "node $HOST not idle after 60 s (state '$state')"
}
wait_idle
ok "slurmctld and slurmd up, node $HOST idle"

# ---- the jobs ------------------------------------------------------------------------------
cd "$T/out"
FIT='model=llama-3-8b task=lora precision=amp_bf16'  # fp32 base: band around 47 GiB
DOOMED='model=llama-3-70b task=finetune'
BAD='model=llama-3-8b tsak=lora'
# a client-side plugstack.conf without the submit-side check (what a user could do): the
# node must still refuse
sed 's/enforce=both/enforce=remote/' "$T/plugstack.conf" > "$T/plugstack-remote.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$T/plugstack-remote.conf|" "$T/slurm.conf" > "$T/slurm-remote.conf"

njobs() { squeue -h -a -t all -o %i | wc -l; }
# expect NAME RC_WANTED FILE PATTERN...: every pattern (grep -E) in FILE
expect() {
    local name=$1 want=$2 file=$3 rc_got
    shift 3
    rc_got=$(cat "$name.rc")
    if [ "$want" = 0 ] && [ "$rc_got" != 0 ]; then cat "$name".*; fail "$name: exit $rc_got, wanted 0"; fi
    if [ "$want" != 0 ] && [ "$rc_got" = 0 ]; then cat "$name".*; fail "$name: exit 0, wanted non-zero"; fi
    for pat in "$@"; do
        grep -qE -- "$pat" "$file" || { cat "$name".*; fail "$name: no /$pat/ in $file"; }
    done
}
# run NAME CMD...: stdout in NAME.out, stderr in NAME.err, exit status in NAME.rc
run() {
    local name=$1
    shift
    set +e
    "$@" > "$name.out" 2> "$name.err"
    echo $? > "$name.rc"
    set -e
}
# wait_job ID: until the job has left the queue's live states; echoes its state
wait_job() {
    local st=
    for _ in $(seq 60); do
        st=$(squeue -h -j "$1" -t all -o %T 2>/dev/null || true)
        case "$st" in PENDING|RUNNING|CONFIGURING|COMPLETING|"") sleep 0.5 ;; *) break ;; esac
    done
    echo "$st"
}
REASON='gpufit: job refused: DOES NOT FIT: role all needs [0-9.]+ GiB \(band [0-9.]+-[0-9.]+ GiB\) of 76\.00 GiB \(80\.00 GiB less a 4\.00 GiB margin\) on A100 80GB SXM4'
FIX='gpufit: fix \(keeps the GPU\): .*QLoRA.*-> [0-9.]+ GiB \(fits\)'
FIXSPEC='gpufit:   --gpufit-spec: add task=qlora checkpointing=full'
PARSE="gpufit: spec: unknown parameter 'tsak' .*did you mean 'task'\? \(unknown parameter\) at byte 17"

# 1. a fitting job runs (srun), and as a batch script
run fit srun -t 1 --gres=gpu:a100_80gb:1 --gpufit-spec="$FIT" echo gpufit-job-ran
expect fit 0 fit.out '^gpufit-job-ran$'
expect fit 0 fit.err 'srun: gpufit: FITS: [0-9.]+-[0-9.]+ GiB of 76\.00 GiB \(80\.00 GiB less a 4\.00 GiB margin\) on A100 80GB SXM4 \(role all\)'
ok "srun: a fitting job runs"
printf '#!/bin/sh\n#SBATCH --gres=gpu:a100_80gb:1\n#SBATCH --gpufit-spec="%s"\n#SBATCH -o fitbatch.log -t 1\necho gpufit-batch-ran\n' "$FIT" > fit.sh
run fitbatch sbatch --parsable fit.sh
expect fitbatch 0 fitbatch.out '^[0-9]+$'
st=$(wait_job "$(cat fitbatch.out)")
[ "$st" = COMPLETED ] || fail "fitting batch job: state $st"
grep -qx gpufit-batch-ran fitbatch.log || fail "fitting batch job: no output"
ok "sbatch: a fitting #SBATCH --gpufit-spec job completes"

# 2. a doomed job is refused before it is queued: srun, then sbatch with #SBATCH lines
n0=$(njobs)
run doomed srun -t 1 --gres=gpu:a100_80gb:1 --gpufit-spec="$DOOMED" echo SHOULD-NOT-RUN
expect doomed 1 doomed.err "srun: error: $REASON" "$FIX" "$FIXSPEC"
grep -q SHOULD-NOT-RUN doomed.out && fail "doomed srun job ran"
printf '#!/bin/sh\n#SBATCH --gres=gpu:a100_80gb:2\n#SBATCH --gpufit-spec="%s"\n#SBATCH -o doomedbatch.log -t 1\necho SHOULD-NOT-RUN\n' "$DOOMED" > doomed.sh
run doomedbatch sbatch doomed.sh
expect doomedbatch 1 doomedbatch.err "sbatch: error: $REASON" "$FIX" "$FIXSPEC"
run doomedalloc salloc -t 1 --gpus=a100_80gb:1 --gpufit-spec="$DOOMED" true
expect doomedalloc 1 doomedalloc.err "salloc: error: $REASON" "$FIX"
[ "$(njobs)" = "$n0" ] || fail "a refused submission reached the queue"
ok "srun, sbatch (#SBATCH --gpufit-spec) and salloc: a doomed job is refused at submission, nothing queued"

# 3. the layout must fit the GPUs asked for: tp=2 on one GPU
run layout srun -t 1 --gres=gpu:a100_80gb:1 --gpufit-spec="$FIT tp=2" true
expect layout 1 layout.err "the job's layout uses 2 GPUs \(dp x tp x pp x cp\) but it holds 1"
ok "srun: a layout wider than the allocation is refused"

# the marginal policy: a job whose band straddles the usable capacity (margin 41.25 %: 47 GiB)
run marginal srun -t 1 --gres=gpu:a100_80gb:1 --gpufit-spec="$FIT margin=0.4125" echo gpufit-job-ran
expect marginal 0 marginal.out '^gpufit-job-ran$'
# (a warning is printed as is, at submission and by the node into the job's output)
expect marginal 0 marginal.err '^gpufit: MARGINAL \(the GPU.s capacity lies inside the band\): role all needs 4[0-9.]+ GiB \(band [0-9.]+-[0-9.]+ GiB\) of 47\.00 GiB \(80\.00 GiB less a 33\.00 GiB margin\)'
sed 's/marginal=warn/marginal=refuse/' "$T/plugstack.conf" > "$T/plugstack-refuse.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$T/plugstack-refuse.conf|" "$T/slurm.conf" > "$T/slurm-refuse.conf"
run marginalr env SLURM_CONF="$T/slurm-refuse.conf" srun -t 1 --gres=gpu:a100_80gb:1 \
    --gpufit-spec="$FIT margin=0.4125" echo SHOULD-NOT-RUN
expect marginalr 1 marginalr.err 'srun: error: gpufit: job refused: MARGINAL \(marginal=refuse\)'
ok "srun: a marginal job runs with a warning (marginal=warn), is refused with marginal=refuse"

# 4. a malformed spec is refused with the parser's error (key, offset, caret)
run bad srun -t 1 --gres=gpu:a100_80gb:1 --gpufit-spec="$BAD" echo SHOULD-NOT-RUN
expect bad 1 bad.err "gpufit: job refused: the --gpufit-spec is malformed" "$PARSE" \
    'gpufit:   model=llama-3-8b tsak=lora' 'gpufit: {20}\^'
ok "srun: a malformed spec is refused with the parse error"

# 5. the node enforces what the submit side did not check (a client with enforce=remote)
export SLURM_CONF=$T/slurm-remote.conf
run rdoomed srun -t 1 --gres=gpu:a100_80gb:1 --gpufit-spec="$DOOMED" echo SHOULD-NOT-RUN
expect rdoomed 1 rdoomed.err "slurmstepd[^:]*: error: $REASON" "$FIX" "$FIXSPEC"
grep -q SHOULD-NOT-RUN rdoomed.out && fail "doomed srun step ran on the node"
ok "node: a doomed srun step fails (exit $(cat rdoomed.rc)) with reason and fix"
run rbatch sbatch --parsable doomed.sh
expect rbatch 0 rbatch.out '^[0-9]+$'
st=$(wait_job "$(cat rbatch.out)")
[ "$st" = FAILED ] || fail "doomed batch job on the node: state $st, wanted FAILED"
grep -q SHOULD-NOT-RUN doomedbatch.log && fail "doomed batch script ran"
grep -qE "$REASON" doomedbatch.log || { cat doomedbatch.log; fail "no reason in the job's output"; }
grep -qE "$FIX" doomedbatch.log || { cat doomedbatch.log; fail "no fix in the job's output"; }
ok "node: a doomed batch job FAILED before its script ran, reason and fix in its output"
printf '{"model": "llama-3-8b", "task": "lora", "tsak": 1}\n' > bad.json
run rbad srun -t 1 --gres=gpu:a100_80gb:1 --gpufit=bad.json echo SHOULD-NOT-RUN
expect rbad 1 rbad.err "gpufit: job refused: the --gpufit scenario is malformed" \
    "gpufit: scenario: .*'tsak'.*at byte [0-9]+"
ok "node: a malformed --gpufit scenario (read as the user, in the job's directory) is refused"
# the node reads the file with the job user's rights: a file only root may read is refused for
# a job of the user nobody
printf '{"model": "llama-3-8b", "task": "lora"}\n' > rootonly.json
chmod 600 rootonly.json
run rnobody runuser -u nobody -- srun -t 1 --gres=gpu:a100_80gb:1 --gpufit=rootonly.json true
expect rnobody 1 rnobody.err "slurmstepd[^:]*: error: gpufit: job refused: cannot read --gpufit=rootonly.json"
ok "node: --gpufit=FILE is read with the job user's rights (nobody cannot read a root-only file)"
printf '{"model": "llama-3-8b", "task": "lora"}\n' > fit.json
run rfit srun -t 1 --gres=gpu:a100_80gb:1 --gpufit=fit.json echo gpufit-job-ran
expect rfit 0 rfit.out '^gpufit-job-ran$'
ok "node: a fitting --gpufit=fit.json job runs"
export SLURM_CONF=$T/slurm.conf

# 6. job_submit.lua: with JobSubmitPlugins=lua (scontrol reconfigure) slurmctld refuses at
# submission (clients with enforce=remote: the plugin's submit-side check does not answer first)
cp "$HERE/../job_submit.lua" "$T/job_submit.lua"
for conf in slurm.conf slurm-remote.conf; do echo "JobSubmitPlugins=lua" >> "$T/$conf"; done
scontrol reconfigure
wait_idle
export SLURM_CONF=$T/slurm-remote.conf
run lfit srun -t 1 --gres=gpu:a100_80gb:1 --gpufit-spec="$FIT" echo gpufit-job-ran
expect lfit 0 lfit.out '^gpufit-job-ran$'
n0=$(njobs)
run ldoomed sbatch doomed.sh
expect ldoomed 1 ldoomed.err 'gpufit: job refused \(out of GPU memory predicted\):' \
    'verdict: DOES NOT FIT: [0-9.]+-[0-9.]+ GiB of 80\.00 GiB' 'first fix:' \
    '--spec "task=qlora checkpointing=full"'
run lbad srun -t 1 --gres=gpu:a100_80gb:1 --gpufit-spec="$BAD" true
expect lbad 1 lbad.err 'gpufit: job refused: malformed --gpufit-spec:' \
    "gpufit: spec: unknown parameter 'tsak'"
[ "$(njobs)" = "$n0" ] || fail "job_submit.lua let a refused job into the queue"
ok "job_submit.lua: a fitting job runs; doomed (with verdict and fix) and malformed jobs are refused by slurmctld"
export SLURM_CONF=$T/slurm.conf

echo "check-slurm: all passed in $(( $(date +%s) - START )) s"

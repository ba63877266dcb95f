/* SPDX-License-Identifier: MIT */
/* The temporaries of torch.optim's Adam/AdamW step (docs/memory/optimizer-step.md): bytes on
 * the GPU during optimizer.step() besides the weights, gradients and states, by the step's
 * implementation. The evaluation counts them where they exceed what the step no longer
 * holds (activations, logits, autocast's copies). */
#include "eval.h"

/* out[0] point, out[1] low, out[2] high; moment: the bytes of one moment (exp_avg_sq) on this
 * device, the states' dtype and shard; 1 if a byte count could exceed 64 bits. */
int gpufit__optimizer_step_bytes(const gpufit__plan *p, const gpufit__shape *s,
                                 const gpufit__counts *c, const gpufit__slice *sl,
                                 uint64_t moment, uint64_t out[3])
{
    out[0] = out[1] = out[2] = 0;
    switch (p->opt_impl) {
    case GPUFIT_OPTIMIZER_IMPL_FOREACH: {
        /* torch/optim/adamw.py _multi_tensor_adamw: exp_avg_sq_sqrt = _foreach_sqrt(
         * exp_avg_sqs), then divided and eps added in place: one list the size of the
         * (param group x device x dtype) sub-group's second moments, taken as all of them
         * (the HF Trainer's no-decay group of biases and norms is the small rest). PyTorch 2.0
         * made a second list, denom = _foreach_add(exp_avg_sq_sqrt, eps) (removed by PR
         * #104898, 2.1): the high end. Left to the trainer (auto), the step may be fused
         * (transformers with torch >= 2.8): the low end is none. */
        uint64_t two;
        if (gpufit__mul(moment, 2, &two))
            return 1;
        out[0] = moment;
        out[1] = p->opt_auto ? 0 : moment;
        out[2] = two;
        return 0;
    }
    case GPUFIT_OPTIMIZER_IMPL_FORLOOP: {
        /* _single_tensor_adamw: denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
         * holds two temporaries of one parameter at the division (the point and high end);
         * transformers' own AdamW (optim=adamw_hf, optimization.py AdamW.step: denom =
         * exp_avg_sq.sqrt().add_(eps)) holds one (the low end). The largest parameter is the
         * largest linear weight of a layer or the embedding / output head on this stage. */
        uint64_t n = gpufit__div_up(c->largest_matrix, p->tp), e, b;
        if ((sl->embedding || sl->output) && gpufit__mul(s->V, s->h, &e) == 0) {
            e = gpufit__div_up(e, p->tp);
            n = e > n ? e : n;
        }
        if (gpufit__dtype_bytes(p->o_dt, n, &b))
            return 1;
        b = b < moment ? b : moment; /* one tensor is never more than the state */
        out[1] = b;
        out[0] = out[2] = 2 * b; /* 2 x moment <= the states' bytes: no wrap */
        return 0;
    }
    default: /* fused (torch/optim/adam.py _fused_adam: one kernel, in place) or no torch step */
        return 0;
    }
}

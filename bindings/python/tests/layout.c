/* Prints sizeof and offsetof of every public struct of gpufit.h, one line each:
 *
 *     struct gpufit_error 280
 *     field gpufit_error status 4 4          (offset, size)
 *
 * tests/test_layout.py compiles this file against include/gpufit.h and compares every line
 * with the ctypes mirrors in gpufit/_types.py. A field appended to a struct in the header
 * changes its sizeof, so the test fails until both this list and the mirror have it: add a
 * FIELD line here and the same field at the end of the class in gpufit/_types.py. */
#include <gpufit.h>

#include <stddef.h>
#include <stdio.h>

#define STRUCT(T) printf("struct %s %zu\n", #T, sizeof(T))
#define FIELD(T, f) printf("field %s %s %zu %zu\n", #T, #f, offsetof(T, f), sizeof(((T *)0)->f))

int main(void)
{
    STRUCT(gpufit_error);
    FIELD(gpufit_error, struct_size);
    FIELD(gpufit_error, status);
    FIELD(gpufit_error, param);
    FIELD(gpufit_error, reserved0);
    FIELD(gpufit_error, offset);
    FIELD(gpufit_error, message);

    STRUCT(gpufit_param_info);
    FIELD(gpufit_param_info, struct_size);
    FIELD(gpufit_param_info, id);
    FIELD(gpufit_param_info, domain);
    FIELD(gpufit_param_info, type);
    FIELD(gpufit_param_info, min_int);
    FIELD(gpufit_param_info, max_int);
    FIELD(gpufit_param_info, default_int);
    FIELD(gpufit_param_info, min_float);
    FIELD(gpufit_param_info, max_float);
    FIELD(gpufit_param_info, default_float);
    FIELD(gpufit_param_info, since);
    FIELD(gpufit_param_info, flags);
    FIELD(gpufit_param_info, name);
    FIELD(gpufit_param_info, unit);
    FIELD(gpufit_param_info, doc);

    STRUCT(gpufit_safetensors_info);
    FIELD(gpufit_safetensors_info, struct_size);
    FIELD(gpufit_safetensors_info, n_tensors);
    FIELD(gpufit_safetensors_info, n_params);
    FIELD(gpufit_safetensors_info, total_bytes);
    FIELD(gpufit_safetensors_info, header_bytes);
    FIELD(gpufit_safetensors_info, bytes_fp32);
    FIELD(gpufit_safetensors_info, bytes_16bit);
    FIELD(gpufit_safetensors_info, bytes_8bit);
    FIELD(gpufit_safetensors_info, bytes_other);

    STRUCT(gpufit_preset_info);
    FIELD(gpufit_preset_info, struct_size);
    FIELD(gpufit_preset_info, index);
    FIELD(gpufit_preset_info, n_params);
    FIELD(gpufit_preset_info, n_active_params);
    FIELD(gpufit_preset_info, name);
    FIELD(gpufit_preset_info, aliases);
    FIELD(gpufit_preset_info, hf_repo);

    STRUCT(gpufit_gpu_info);
    FIELD(gpufit_gpu_info, struct_size);
    FIELD(gpufit_gpu_info, id);
    FIELD(gpufit_gpu_info, memory_bytes);
    FIELD(gpufit_gpu_info, marketed_bytes);
    FIELD(gpufit_gpu_info, memory_bandwidth_gbs);
    FIELD(gpufit_gpu_info, bf16_tflops);
    FIELD(gpufit_gpu_info, fp8_tflops);
    FIELD(gpufit_gpu_info, nvlink_gbs);
    FIELD(gpufit_gpu_info, msrp_usd);
    FIELD(gpufit_gpu_info, supports_bf16);
    FIELD(gpufit_gpu_info, supports_fp8);
    FIELD(gpufit_gpu_info, usable_known);
    FIELD(gpufit_gpu_info, launch_year);
    FIELD(gpufit_gpu_info, name);
    FIELD(gpufit_gpu_info, key);
    FIELD(gpufit_gpu_info, aliases);
    FIELD(gpufit_gpu_info, vendor);
    FIELD(gpufit_gpu_info, architecture);

    STRUCT(gpufit_summary);
    FIELD(gpufit_summary, struct_size);
    FIELD(gpufit_summary, fits);
    FIELD(gpufit_summary, n_roles);
    FIELD(gpufit_summary, worst_role);
    FIELD(gpufit_summary, n_notes);
    FIELD(gpufit_summary, reserved0);
    FIELD(gpufit_summary, capacity_bytes);
    FIELD(gpufit_summary, peak_bytes);
    FIELD(gpufit_summary, headroom_bytes);
    FIELD(gpufit_summary, n_params);
    FIELD(gpufit_summary, n_active_params);
    FIELD(gpufit_summary, host_bytes);
    FIELD(gpufit_summary, n_mitigations);
    FIELD(gpufit_summary, reserved1);
    FIELD(gpufit_summary, verdict);
    FIELD(gpufit_summary, reserved2);
    FIELD(gpufit_summary, peak_low_bytes);
    FIELD(gpufit_summary, peak_high_bytes);

    STRUCT(gpufit_role_info);
    FIELD(gpufit_role_info, struct_size);
    FIELD(gpufit_role_info, n_devices);
    FIELD(gpufit_role_info, peak_allocated_bytes);
    FIELD(gpufit_role_info, peak_reserved_bytes);
    FIELD(gpufit_role_info, device_used_bytes);
    FIELD(gpufit_role_info, headroom_bytes);
    FIELD(gpufit_role_info, kv_capacity_bytes);
    FIELD(gpufit_role_info, kv_capacity_tokens);
    FIELD(gpufit_role_info, fits);
    FIELD(gpufit_role_info, layers);
    FIELD(gpufit_role_info, name);
    FIELD(gpufit_role_info, capacity_bytes);
    FIELD(gpufit_role_info, gpu);
    FIELD(gpufit_role_info, peak_allocated_low_bytes);
    FIELD(gpufit_role_info, peak_allocated_high_bytes);
    FIELD(gpufit_role_info, peak_reserved_low_bytes);
    FIELD(gpufit_role_info, peak_reserved_high_bytes);
    FIELD(gpufit_role_info, device_used_low_bytes);
    FIELD(gpufit_role_info, device_used_high_bytes);
    FIELD(gpufit_role_info, kv_capacity_low_bytes);
    FIELD(gpufit_role_info, kv_capacity_high_bytes);
    FIELD(gpufit_role_info, verdict);
    FIELD(gpufit_role_info, reserved0);

    STRUCT(gpufit_mitigation_info);
    FIELD(gpufit_mitigation_info, struct_size);
    FIELD(gpufit_mitigation_info, kind);
    FIELD(gpufit_mitigation_info, fits_after);
    FIELD(gpufit_mitigation_info, n_changes);
    FIELD(gpufit_mitigation_info, peak_bytes_after);
    FIELD(gpufit_mitigation_info, saved_bytes);
    FIELD(gpufit_mitigation_info, cost);
    FIELD(gpufit_mitigation_info, text);
    FIELD(gpufit_mitigation_info, changes);
    FIELD(gpufit_mitigation_info, changes_json);
    FIELD(gpufit_mitigation_info, flags);

    STRUCT(gpufit_recommendation);
    FIELD(gpufit_recommendation, struct_size);
    FIELD(gpufit_recommendation, gpu_id);
    FIELD(gpufit_recommendation, count);
    FIELD(gpufit_recommendation, fits);
    FIELD(gpufit_recommendation, needs_nvlink);
    FIELD(gpufit_recommendation, has_nvlink);
    FIELD(gpufit_recommendation, peak_bytes);
    FIELD(gpufit_recommendation, headroom_bytes);
    FIELD(gpufit_recommendation, price_usd);
    FIELD(gpufit_recommendation, tflops);
    FIELD(gpufit_recommendation, tflops_per_kusd);
    FIELD(gpufit_recommendation, gpu_name);
    FIELD(gpufit_recommendation, reason);
    FIELD(gpufit_recommendation, spec);
    FIELD(gpufit_recommendation, spec_json);

    STRUCT(gpufit_layout);
    FIELD(gpufit_layout, struct_size);
    FIELD(gpufit_layout, tp);
    FIELD(gpufit_layout, pp);
    FIELD(gpufit_layout, vpp);
    FIELD(gpufit_layout, dp);
    FIELD(gpufit_layout, cp);
    FIELD(gpufit_layout, ep);
    FIELD(gpufit_layout, zero);
    FIELD(gpufit_layout, micro_batch);
    FIELD(gpufit_layout, checkpointing);
    FIELD(gpufit_layout, peak_bytes);
    FIELD(gpufit_layout, headroom_bytes);
    FIELD(gpufit_layout, cost);
    FIELD(gpufit_layout, spec);
    FIELD(gpufit_layout, placement);
    FIELD(gpufit_layout, kv_capacity_tokens);
    FIELD(gpufit_layout, spec_json);
    FIELD(gpufit_layout, flags);
    return 0;
}

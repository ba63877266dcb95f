// Compile-only test: include/gpufit.h on its own from C++11 under -Wall -Wextra -Wpedantic
// -Werror. Checks the extern "C" block, that the initialiser macros are valid C++ (no
// narrowing errors), and that the public structs stay standard-layout. Nothing is linked.
#include "gpufit.h"

#include <type_traits>

static_assert(std::is_standard_layout<gpufit_error>::value, "gpufit_error is standard-layout");
static_assert(std::is_standard_layout<gpufit_param_info>::value, "standard-layout");
static_assert(std::is_standard_layout<gpufit_preset_info>::value, "standard-layout");
static_assert(std::is_standard_layout<gpufit_gpu_info>::value, "standard-layout");
static_assert(std::is_standard_layout<gpufit_summary>::value, "standard-layout");
static_assert(std::is_standard_layout<gpufit_role_info>::value, "standard-layout");
static_assert(std::is_trivially_copyable<gpufit_error>::value, "gpufit_error is a plain struct");
static_assert(sizeof(gpufit_status) == 4 && sizeof(gpufit_param) == 4, "enums are 32-bit");

int header_test_cxx(void);
int header_test_cxx(void)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_role_info role = gpufit_role_info();
    role.struct_size = static_cast<uint32_t>(sizeof role);
    // Taking the address of a few functions checks their C++ visibility and types.
    int32_t (*evaluate)(gpufit_result **, const gpufit_model *, const gpufit_job *,
                        gpufit_error *) = gpufit_evaluate;
    const char *(*status_str)(int32_t) = gpufit_status_str;
    return (evaluate != nullptr) + (status_str != nullptr) +
           GPUFIT_HAS_FIELD(&role, gpufit_role_info, name) + (err.offset == UINT64_MAX) +
           (GPUFIT_VERSION_NUMBER > 0);
}

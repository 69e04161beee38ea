package dev.arrayd.devices.cuda;



/**
 * What NVRTC is given for a CUDA C module: a short prelude, then {@code #line 1 "kernel.cu"} and the
 * user's source, so NVRTC's diagnostics name the user's own lines as {@code kernel.cu(3): error: ...}.
 *
 * <h2>The CUDA C kernel convention</h2>
 * Each entry point is a {@code __global__ void} function whose parameters follow its declared
 * signature in order: a buffer is a pointer to its dtype's type ({@code float}, {@code double},
 * {@code int32_t}, {@code int64_t}, {@code uint8_t}; f16 / bf16 as raw {@code uint16_t}), a scalar a
 * value of it. Declare it {@code extern "C"} or not: arrayd finds it through NVRTC name expressions.
 * The prelude defines the fixed-width integer types and, for parity with the C and OpenCL
 * conventions, {@code arrayd_global_id(d)}, {@code arrayd_global_size(d)}, {@code arrayd_local_id(d)},
 * {@code arrayd_local_size(d)}, {@code arrayd_group_id(d)} ({@code long long}, d in 0..2). A launch
 * runs exactly its global size (see {@link LaunchGeometry}), so no bounds guard beyond the user's own
 * {@code n} is needed.
 */
final class CudaSourceAssembler {

    static final String USER_FILE = "kernel.cu";

    static final String PRELUDE = """
            typedef signed char int8_t;
            typedef unsigned char uint8_t;
            typedef short int16_t;
            typedef unsigned short uint16_t;
            typedef int int32_t;
            typedef unsigned int uint32_t;
            typedef long long int64_t;
            typedef unsigned long long uint64_t;
            __device__ __forceinline__ long long arrayd_dim3_(dim3 v, int d) { return d == 0 ? v.x : d == 1 ? v.y : v.z; }
            __device__ __forceinline__ long long arrayd_uint3_(uint3 v, int d) { return d == 0 ? v.x : d == 1 ? v.y : v.z; }
            __device__ __forceinline__ long long arrayd_local_id(int d) { return arrayd_uint3_(threadIdx, d); }
            __device__ __forceinline__ long long arrayd_local_size(int d) { return arrayd_dim3_(blockDim, d); }
            __device__ __forceinline__ long long arrayd_group_id(int d) { return arrayd_uint3_(blockIdx, d); }
            __device__ __forceinline__ long long arrayd_global_size(int d) { return arrayd_dim3_(gridDim, d) * arrayd_dim3_(blockDim, d); }
            __device__ __forceinline__ long long arrayd_global_id(int d) { return arrayd_group_id(d) * arrayd_local_size(d) + arrayd_local_id(d); }
            """;

    private CudaSourceAssembler() {}

    static String assemble(String userSource) {
        return PRELUDE + "#line 1 \"" + USER_FILE + "\"\n" + userSource;
    }
}

// The parts of the CUDA driver API, NVRTC and cuBLAS that the CUDA backend calls,
// declared here rather than taken from the toolkit's headers, and loaded with dlopen
// when a program first touches a GPU (Note [CUDA without the toolkit]).
//
// Note [CUDA without the toolkit]: the CUDA toolkit is not in Debian's main archive,
// so eagerflow is built everywhere without it. The backend declares the few types and
// functions it uses (their layouts and values are fixed by NVIDIA's ABI, checked against
// the toolkit's headers on a GPU machine by scripts/gpu_check.sh) and resolves them at
// run time from the driver (libcuda.so.1), NVRTC and cuBLAS. One library binary
// therefore runs on machines with and without GPUs; without a driver or a device,
// ef::cuda::is_available() is false and moving a tensor to a GPU raises a clear error.
// Kernels are CUDA C++ text compiled by NVRTC on first use (src/backends/cuda/codegen.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ef::cuda::api {

// ---- driver API (cuda.h) ----
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUstream_st;
struct CUmod_st;
struct CUfunc_st;
using CUcontext = CUctx_st*;
using CUstream = CUstream_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr unsigned CU_STREAM_NON_BLOCKING = 1;

struct Driver {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int* version);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDeviceGetName)(char* name, int len, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuStreamCreate)(CUstream* stream, unsigned flags);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuMemAlloc)(CUdeviceptr* ptr, size_t bytes);  // cuMemAlloc_v2
  CUresult (*cuMemFree)(CUdeviceptr ptr);                  // cuMemFree_v2
  CUresult (*cuMemGetInfo)(size_t* free, size_t* total);   // cuMemGetInfo_v2
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyDtoHAsync)(void* dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuLaunchKernel)(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                             CUstream stream, void** params, void** extra);
  CUresult (*cuGetErrorName)(CUresult error, const char** name);
  CUresult (*cuGetErrorString)(CUresult error, const char** text);
};

// ---- NVRTC (nvrtc.h) ----
using nvrtcResult = int;
struct _nvrtcProgram;
using nvrtcProgram = _nvrtcProgram*;
inline constexpr nvrtcResult NVRTC_SUCCESS = 0;

struct Nvrtc {
  nvrtcResult (*nvrtcVersion)(int* major, int* minor);
  const char* (*nvrtcGetErrorString)(nvrtcResult result);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram* program, const char* source, const char* name,
                                    int num_headers, const char* const* headers,
                                    const char* const* include_names);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram program, int num_options, const char* const* options);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram program, size_t* size);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram program, char* log);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram program, size_t* size);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram program, char* cubin);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram* program);
};

// ---- cuBLAS (cublas_api.h) ----
using cublasStatus_t = int;
struct cublasContext;
using cublasHandle_t = cublasContext*;
inline constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
inline constexpr int CUBLAS_OP_N = 0;
inline constexpr int CUBLAS_OP_T = 1;

struct Cublas {
  cublasStatus_t (*cublasCreate)(cublasHandle_t* handle);                     // cublasCreate_v2
  cublasStatus_t (*cublasSetStream)(cublasHandle_t handle, CUstream stream);  // cublasSetStream_v2
  cublasStatus_t (*cublasSgemmStridedBatched)(cublasHandle_t handle, int transa, int transb, int m, int n,
                                              int k, const float* alpha, const float* a, int lda,
                                              long long stride_a, const float* b, int ldb, long long stride_b,
                                              const float* beta, float* c, int ldc, long long stride_c,
                                              int batch_count);
  cublasStatus_t (*cublasDgemmStridedBatched)(cublasHandle_t handle, int transa, int transb, int m, int n,
                                              int k, const double* alpha, const double* a, int lda,
                                              long long stride_a, const double* b, int ldb,
                                              long long stride_b, const double* beta, double* c, int ldc,
                                              long long stride_c, int batch_count);
};

// The loaded libraries. Each throws UnimplementedError saying what was looked for and
// why it failed (no driver: not a GPU machine; no NVRTC or cuBLAS: the toolkit's
// libraries are not on the library path) the first time it is asked for.
const Driver& driver();
const Nvrtc& nvrtc();
const Cublas& cublas();

// Why the driver could not be loaded or initialized, or empty when it was.
std::string driver_unavailable_reason();

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string error_text(CUresult result);

}  // namespace ef::cuda::api

#include "backends/cuda/api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "eagerflow/core/error.h"

namespace ef::cuda::api {
namespace {

// Directories tried after the dynamic linker's own search: where the toolkit installs.
std::vector<std::string> library_dirs() {
  std::vector<std::string> dirs{""};
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(var)) dirs.push_back(std::string(root) + "/lib64/");
  dirs.push_back("/usr/local/cuda/lib64/");
  dirs.push_back("/usr/local/cuda/targets/x86_64-linux/lib/");
  return dirs;
}

// dlopens the first of `names` found; on failure `why` lists what was tried.
void* open_library(std::initializer_list<const char*> names, std::string& why) {
  std::string first_error;  // the dynamic linker's own search for the first name says the most
  for (const std::string& dir : library_dirs())
    for (const char* name : names) {
      if (void* handle = dlopen((dir + name).c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
      const char* err = dlerror();
      if (first_error.empty() && err) first_error = err;
    }
  why = "none of";
  for (const char* name : names) why += std::string(" ") + name;
  why += " could be loaded (" + first_error + ")";
  return nullptr;
}

template <class Fn>
bool resolve(void* handle, Fn& fn, const char* symbol, std::string& why) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (!fn && why.empty()) why = std::string("the library has no symbol ") + symbol;
  return fn != nullptr;
}

struct Loaded {
  Driver driver{};
  std::string driver_why;  // empty when the driver loaded and initialized
  bool driver_tried = false;
  Nvrtc nvrtc{};
  std::string nvrtc_why;
  bool nvrtc_tried = false;
  Cublas cublas{};
  std::string cublas_why;
  bool cublas_tried = false;
  std::mutex mutex;
};

Loaded& loaded() {
  static auto* l = new Loaded();  // never destroyed: kernels may run during exit
  return *l;
}

void load_driver(Loaded& l) {
  l.driver_tried = true;
  void* h = open_library({"libcuda.so.1", "libcuda.so"}, l.driver_why);
  if (!h) {
    l.driver_why = "no CUDA driver: " + l.driver_why;
    return;
  }
  std::string& why = l.driver_why;
  Driver& d = l.driver;
  resolve(h, d.cuInit, "cuInit", why);
  resolve(h, d.cuDriverGetVersion, "cuDriverGetVersion", why);
  resolve(h, d.cuDeviceGetCount, "cuDeviceGetCount", why);
  resolve(h, d.cuDeviceGet, "cuDeviceGet", why);
  resolve(h, d.cuDeviceGetName, "cuDeviceGetName", why);
  resolve(h, d.cuDeviceGetAttribute, "cuDeviceGetAttribute", why);
  resolve(h, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", why);
  resolve(h, d.cuCtxSetCurrent, "cuCtxSetCurrent", why);
  resolve(h, d.cuStreamCreate, "cuStreamCreate", why);
  resolve(h, d.cuStreamSynchronize, "cuStreamSynchronize", why);
  resolve(h, d.cuMemAlloc, "cuMemAlloc_v2", why);
  resolve(h, d.cuMemFree, "cuMemFree_v2", why);
  resolve(h, d.cuMemGetInfo, "cuMemGetInfo_v2", why);
  resolve(h, d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", why);
  resolve(h, d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", why);
  resolve(h, d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", why);
  resolve(h, d.cuModuleLoadData, "cuModuleLoadData", why);
  resolve(h, d.cuModuleGetFunction, "cuModuleGetFunction", why);
  resolve(h, d.cuLaunchKernel, "cuLaunchKernel", why);
  resolve(h, d.cuGetErrorName, "cuGetErrorName", why);
  resolve(h, d.cuGetErrorString, "cuGetErrorString", why);
  if (!why.empty()) {
    why = "the CUDA driver is too old: " + why;
    return;
  }
  if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS)
    why = "the CUDA driver failed to initialize: " + error_text(r);
}

}  // namespace

std::string error_text(CUresult result) {
  const Driver& d = loaded().driver;
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.cuGetErrorName) d.cuGetErrorName(result, &name);
  if (d.cuGetErrorString) d.cuGetErrorString(result, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text) out += std::string(" (") + text + ")";
  return out;
}

std::string driver_unavailable_reason() {
  Loaded& l = loaded();
  std::lock_guard<std::mutex> lock(l.mutex);
  if (!l.driver_tried) load_driver(l);
  return l.driver_why;
}

const Driver& driver() {
  std::string why = driver_unavailable_reason();
  if (!why.empty()) fail<UnimplementedError>("CUDA is not available: ", why);
  return loaded().driver;
}

const Nvrtc& nvrtc() {
  Loaded& l = loaded();
  std::lock_guard<std::mutex> lock(l.mutex);
  if (!l.nvrtc_tried) {
    l.nvrtc_tried = true;
    std::string& why = l.nvrtc_why;
    if (void* h = open_library({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}, why)) {
      Nvrtc& n = l.nvrtc;
      resolve(h, n.nvrtcVersion, "nvrtcVersion", why);
      resolve(h, n.nvrtcGetErrorString, "nvrtcGetErrorString", why);
      resolve(h, n.nvrtcCreateProgram, "nvrtcCreateProgram", why);
      resolve(h, n.nvrtcCompileProgram, "nvrtcCompileProgram", why);
      resolve(h, n.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", why);
      resolve(h, n.nvrtcGetProgramLog, "nvrtcGetProgramLog", why);
      resolve(h, n.nvrtcGetCUBINSize, "nvrtcGetCUBINSize", why);
      resolve(h, n.nvrtcGetCUBIN, "nvrtcGetCUBIN", why);
      resolve(h, n.nvrtcDestroyProgram, "nvrtcDestroyProgram", why);
    }
  }
  if (!l.nvrtc_why.empty())
    fail<UnimplementedError>("CUDA kernels need NVRTC (the CUDA toolkit's run-time compiler), but ",
                             l.nvrtc_why,
                             "; put the toolkit's lib64 directory on LD_LIBRARY_PATH or set CUDA_HOME");
  return l.nvrtc;
}

const Cublas& cublas() {
  Loaded& l = loaded();
  std::lock_guard<std::mutex> lock(l.mutex);
  if (!l.cublas_tried) {
    l.cublas_tried = true;
    std::string& why = l.cublas_why;
    if (void* h = open_library({"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, why)) {
      Cublas& b = l.cublas;
      resolve(h, b.cublasCreate, "cublasCreate_v2", why);
      resolve(h, b.cublasSetStream, "cublasSetStream_v2", why);
      resolve(h, b.cublasSgemmStridedBatched, "cublasSgemmStridedBatched", why);
      resolve(h, b.cublasDgemmStridedBatched, "cublasDgemmStridedBatched", why);
    }
  }
  if (!l.cublas_why.empty())
    fail<UnimplementedError>("matrix products on a GPU need cuBLAS, but ", l.cublas_why,
                             "; put the toolkit's lib64 directory on LD_LIBRARY_PATH or set CUDA_HOME");
  return l.cublas;
}

}  // namespace ef::cuda::api

#include "backends/cuda/kernel_cache.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "backends/cuda/codegen.h"
#include "eagerflow/core/error.h"

namespace ef::cuda {
namespace {

using namespace api;

struct Cache {
  std::mutex mutex;
  std::unordered_map<std::string, CUfunction> functions;  // key: device index + source
};

Cache& cache() {
  static auto* c = new Cache();
  return *c;
}

std::filesystem::path cache_dir() {
  if (const char* dir = std::getenv("EF_CUDA_CACHE_DIR")) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"))
    return std::filesystem::path(xdg) / "eagerflow" / "cuda";
  if (const char* home = std::getenv("HOME"))
    return std::filesystem::path(home) / ".cache" / "eagerflow" / "cuda";
  return {};
}

std::string arch_of(const DeviceState& d) {
  return "sm_" + std::to_string(d.compute_major * 10 + d.compute_minor);
}

// The file a compiled source is kept in: the hash covers everything that shapes the
// binary, so a changed header or a new NVRTC never reuses a stale one.
std::filesystem::path cache_file(const DeviceState& d, const std::string& source) {
  std::filesystem::path dir = cache_dir();
  if (dir.empty()) return {};
  int major = 0, minor = 0;
  nvrtc().nvrtcVersion(&major, &minor);
  std::string key = source + arch_of(d) + std::to_string(major) + "." + std::to_string(minor);
  for (const DeviceHeader& h : device_headers()) key += h.text;
  std::ostringstream name;
  name << std::hex << std::hash<std::string>{}(key) << "-" << arch_of(d) << ".cubin";
  return dir / name.str();
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Written under a temporary name and renamed, so a reader never sees half a file.
void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return;  // the cache is an optimization: no directory, no cache
  std::filesystem::path tmp = path;
  tmp += ".tmp" + std::to_string(std::hash<std::string>{}(bytes));
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()))) return;
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

std::string compile(const DeviceState& d, const std::string& source, std::string_view op) {
  const Nvrtc& n = nvrtc();
  std::vector<const char*> header_texts, header_names;
  std::vector<std::string> texts;
  for (const DeviceHeader& h : device_headers()) texts.emplace_back(h.text);
  for (size_t i = 0; i < texts.size(); ++i) {
    header_texts.push_back(texts[i].c_str());
    header_names.push_back(device_headers()[i].name.data());
  }
  nvrtcProgram program = nullptr;
  if (nvrtcResult r = n.nvrtcCreateProgram(&program, source.c_str(), "ef_kernel.cu",
                                           static_cast<int>(header_texts.size()), header_texts.data(),
                                           header_names.data());
      r != NVRTC_SUCCESS)
    fail<InternalError>(op, ": NVRTC could not create a program: ", n.nvrtcGetErrorString(r));
  const std::string arch = "--gpu-architecture=" + arch_of(d);
  const char* options[] = {arch.c_str(), "--std=c++17"};
  nvrtcResult r = n.nvrtcCompileProgram(program, 2, options);
  if (r != NVRTC_SUCCESS) {
    size_t size = 0;
    n.nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    if (size) n.nvrtcGetProgramLog(program, log.data());
    n.nvrtcDestroyProgram(&program);
    fail<InternalError>(op, ": NVRTC failed to compile a CUDA kernel for ", arch_of(d), ": ",
                        n.nvrtcGetErrorString(r), "\n", log, "\nsource:\n", source);
  }
  size_t size = 0;
  n.nvrtcGetCUBINSize(program, &size);
  std::string cubin(size, '\0');
  n.nvrtcGetCUBIN(program, cubin.data());
  n.nvrtcDestroyProgram(&program);
  return cubin;
}

}  // namespace

CUfunction compiled_kernel(DeviceState& d, const std::string& source, std::string_view op) {
  Cache& c = cache();
  std::string key = std::to_string(d.index) + "\n" + source;
  std::lock_guard<std::mutex> lock(c.mutex);
  if (auto it = c.functions.find(key); it != c.functions.end()) return it->second;
  const std::filesystem::path file = cache_file(d, source);
  std::string cubin = file.empty() ? std::string() : read_file(file);
  if (cubin.empty()) {
    cubin = compile(d, source, op);
    if (!file.empty()) write_file(file, cubin);
  }
  CUmodule module = nullptr;
  CUresult r = driver().cuModuleLoadData(&module, cubin.data());
  if (r != CUDA_SUCCESS && !file.empty()) {  // a damaged cache file: compile afresh
    cubin = compile(d, source, op);
    write_file(file, cubin);
    r = driver().cuModuleLoadData(&module, cubin.data());
  }
  check(r, std::string(op) + ": loading a compiled kernel", d);
  CUfunction fn = nullptr;
  check(driver().cuModuleGetFunction(&fn, module, "ef_kernel"),
        std::string(op) + ": finding a compiled kernel", d);
  c.functions.emplace(std::move(key), fn);
  return fn;
}

}  // namespace ef::cuda

// Compiled fused kernels (see fused_compile.h).
//
// Note [compiled fused kernels]: the interpreter (run_fused_block) runs a fused program
// step by step over 4 KiB blocks, so each step loads its operands from L1 and stores its
// result there: about one cycle per step per 8 floats however cheap the step is. An
// 8-op arithmetic chain measured 13.8 cycles per 8 floats interpreted, and 3 to 4 as
// one loop written by hand, where intermediates stay in registers. So, as XLA and
// PyTorch's Inductor do, the program is turned into such a loop:
//
//   #pragma omp simd
//   for (int64_t i = 0; i < n; ++i) {
//     const T v0 = in0[i];
//     const T v4 = ef::cpu::functors::MultiplyFn{}(v0, v1);   // v1: a single element
//     ...
//     out0[i] = v9;
//   }
//
// and compiled, at the program's first run, by the compiler that built the library, with
// its -march. Every step calls its op's own functor from backends/cpu/elementwise_functors.h,
// whose text (with float_math.h and vector_math.h) is embedded in the library, so a
// compiled chain computes each value with the same code as the op alone. Two settings keep
// it bit for bit the same: -ffp-contract=off (a multiply feeding an add is not fused into
// one FMA across steps), and the same loop shape over the same blocks (the driver still
// calls the kernel block by block), so libmvec's vector and scalar variants meet the same
// elements. tests/cpp/ops/fused_compile_test.cpp checks every shared functor, both float
// dtypes, against the interpreter.
//
// Kernels are cached in memory per plan and per process, and on disk under a hash of
// their source, the compiler, its flags and the embedded headers, so a program compiles
// once per machine. Compiling takes 0.2 s (g++ -O3, with the functors' header
// precompiled once, in 2 s), hence off by default.
#include "ops/math/fused_compile.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "backends/cpu/elementwise.h"
#include "eagerflow/ops/fused_elementwise.h"
#include "ops/math/kernel_sources.h"

extern char** environ;

namespace ef {
namespace {

bool enabled_from_environment() {
  const char* env = std::getenv("EF_COMPILE_FUSED_KERNELS");
  return env && *env && std::string_view(env) != "0";
}

std::atomic<bool>& compile_enabled() {
  static std::atomic<bool> enabled{enabled_from_environment()};
  return enabled;
}

}  // namespace

void set_compile_fused_kernels(bool enabled) { compile_enabled() = enabled; }
bool compile_fused_kernels() { return compile_enabled(); }

namespace detail {

struct CompiledKernelCache {
  std::mutex mutex;
  std::vector<std::pair<std::string, CompiledFusedFn>> kernels;  // key: dtype and single values
};

std::shared_ptr<CompiledKernelCache> new_compiled_kernel_cache() {
  return std::make_shared<CompiledKernelCache>();
}

namespace {

namespace fs = std::filesystem;

// FNV-1a: a stable 64-bit hash for file names (std::hash may differ between builds).
uint64_t fnv1a(std::string_view text, uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(uint64_t h) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(h));
  return buffer;
}

// `path` with a suffix naming this process: where a file is written before it is renamed
// into place, so that processes compiling at the same time never see a half-written one.
fs::path temporary_for(const fs::path& path) { return path.string() + ".tmp" + std::to_string(getpid()); }

std::string compiler() {
  if (const char* env = std::getenv("EF_CXX"); env && *env) return env;
  return std::string(kernel_compiler());
}

// Flags as in the library's build (CMakeLists.txt), plus -ffp-contract=off (the Note).
std::vector<std::string> compile_flags() {
  std::vector<std::string> flags = {
      "-O3", "-std=c++20", "-fPIC", "-shared", "-fno-math-errno", "-fopenmp-simd", "-ffp-contract=off", "-w"};
  if (!kernel_arch().empty()) flags.push_back("-march=" + std::string(kernel_arch()));
  return flags;
}

fs::path cache_dir() {
  if (const char* env = std::getenv("EF_KERNEL_CACHE_DIR"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "eagerflow" / "kernels";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "eagerflow" / "kernels";
  // The shared temporary directory: only a directory of our own, closed to other users
  // (who could otherwise plant a kernel there), is used.
  const fs::path dir = fs::temp_directory_path() / ("eagerflow-kernels-" + std::to_string(getuid()));
  ::mkdir(dir.c_str(), 0700);
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
    throw std::runtime_error(dir.string() + " is not a directory of this user's alone");
  return dir;
}

// Writes `text` to `path` through a temporary file and a rename.
void write_file(const fs::path& path, std::string_view text) {
  const fs::path tmp = temporary_for(path);
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

// Runs the compiler (no shell) with its output and errors in `log`; returns its exit status.
int run_compiler(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The hash of what every kernel is built with: the compiler, its flags and the embedded
// headers' text.
uint64_t toolchain_hash(const std::string& cxx, const std::vector<std::string>& flags) {
  uint64_t h = fnv1a(cxx);
  for (const std::string& f : flags) h = fnv1a(f, h);
  for (const KernelHeader& header : kernel_headers()) h = fnv1a(header.text, fnv1a(header.path, h));
  return h;
}

// The embedded headers, written once under a directory named by the toolchain's hash,
// with the functors' header precompiled (elementwise_functors.h.gch,
// which every kernel includes first): 0.2 s per kernel instead of 0.9, most of which is
// parsing <cmath> and <functional>. Without the precompiled header (its build failed),
// kernels compile from the text.
fs::path header_dir(const fs::path& dir, const std::string& cxx, const std::vector<std::string>& flags,
                    uint64_t toolchain) {
  const fs::path include = dir / ("include-" + hex(toolchain));
  for (const KernelHeader& header : kernel_headers()) {
    const fs::path path = include / header.path;
    if (fs::exists(path)) continue;
    fs::create_directories(path.parent_path());
    write_file(path, header.text);
  }
  const fs::path functors = include / "backends/cpu/elementwise_functors.h";
  const fs::path pch = functors.string() + ".gch";
  if (!fs::exists(pch)) {
    const fs::path tmp = temporary_for(pch);
    std::vector<std::string> args = {cxx};
    for (const std::string& f : flags)
      if (f != "-shared") args.push_back(f);
    args.insert(args.end(),
                {"-I", include.string(), "-x", "c++-header", functors.string(), "-o", tmp.string()});
    std::error_code ignored;
    if (run_compiler(args, include / "pch.log") == 0)
      fs::rename(tmp, pch, ignored);
    else
      fs::remove(tmp, ignored);
  }
  return include;
}

void report_once(const std::string& message) {
  static std::once_flag once;
  std::call_once(
      once, [&] { std::fprintf(stderr, "eagerflow: %s; fused ops run interpreted\n", message.c_str()); });
}

// Compiles `source` (or finds it compiled on disk) and loads it; null on failure.
CompiledFusedFn load_kernel(const std::string& source) {
  static std::mutex mutex;  // one compile at a time; also guards `loaded`
  static std::map<uint64_t, CompiledFusedFn> loaded;
  const std::string cxx = compiler();
  const std::vector<std::string> flags = compile_flags();
  const uint64_t toolchain = toolchain_hash(cxx, flags);
  const uint64_t h = fnv1a(source, toolchain);
  std::lock_guard lock(mutex);
  if (auto it = loaded.find(h); it != loaded.end()) return it->second;
  CompiledFusedFn fn = nullptr;
  try {
    const fs::path dir = cache_dir();
    fs::create_directories(dir);
    const fs::path library = dir / ("fused-" + hex(h) + ".so");
    if (!fs::exists(library)) {
      const fs::path cpp = dir / ("fused-" + hex(h) + ".cpp"), log = dir / ("fused-" + hex(h) + ".log");
      write_file(cpp, source);
      const fs::path tmp = temporary_for(library);
      std::vector<std::string> args = {cxx};
      args.insert(args.end(), flags.begin(), flags.end());
      args.insert(args.end(), {"-I", header_dir(dir, cxx, flags, toolchain).string(), "-o", tmp.string(),
                               cpp.string(), "-lmvec", "-lm"});
      const int status = run_compiler(args, log);
      if (status != 0) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        report_once("compiling a fused kernel with '" + cxx + "' failed (" +
                    (status < 0 ? std::string("could not run it") : "exit status " + std::to_string(status)) +
                    "; its messages are in " + log.string() + ")");
        return loaded[h] = nullptr;
      }
      fs::rename(tmp, library);
    }
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      report_once(std::string("loading a compiled fused kernel failed: ") + dlerror());
      return loaded[h] = nullptr;
    }
    fn = reinterpret_cast<CompiledFusedFn>(dlsym(handle, "ef_fused_kernel"));
    if (!fn) report_once("a compiled fused kernel lacks ef_fused_kernel: " + library.string());
  } catch (const std::exception& e) {  // the cache directory is not writable, ...
    report_once(std::string("compiling a fused kernel failed: ") + e.what());
  }
  return loaded[h] = fn;
}

}  // namespace

std::string fused_kernel_source(const FusedPlan& plan, DType dtype, std::span<const char> single) {
  for (const FusedStep& step : plan.steps)
    if (!cpu::contains(step.op->elementwise_block.compiled_dtypes, dtype)) return {};
  auto value = [](int64_t v) { return "v" + std::to_string(v); };
  auto call = [&](const FusedStep& step) {
    std::string s = std::string(step.op->elementwise_block.functor) + "{}(" + value(step.operands[0]);
    if (step.arity == 2) s += ", " + value(step.operands[1]);
    return s + ")";
  };
  std::ostringstream out;
  out << "// A compiled fused kernel of eagerflow (Note [compiled fused kernels]).\n"
      << "#include \"backends/cpu/elementwise_functors.h\"  // first: it is precompiled\n\n"
      << "using T = " << (dtype == DType::Float64 ? "double" : "float") << ";\n\n"
      << "extern \"C\" void ef_fused_kernel(int64_t n, const void* const* in, void* const* out) {\n";
  // Single elements (inputs, and steps that read only them) are computed once, as the
  // interpreter computes them: on one element.
  for (int64_t i = 0; i < plan.num_inputs; ++i)
    if (single[i])
      out << "  const T " << value(i) << " = *static_cast<const T*>(in[" << i << "]);\n";
    else
      out << "  const T* in" << i << " = static_cast<const T*>(in[" << i << "]);\n";
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const int64_t v = plan.num_inputs + static_cast<int64_t>(k);
    if (single[v]) out << "  const T " << value(v) << " = " << call(plan.steps[k]) << ";\n";
    if (plan.steps[k].output >= 0)
      out << "  T* out" << plan.steps[k].output << " = static_cast<T*>(out[" << plan.steps[k].output
          << "]);\n";
  }
  // Every input element is read before any output element is written: an output may be
  // an input's own buffer (in-place reuse), element for element.
  out << "#pragma omp simd\n  for (int64_t i = 0; i < n; ++i) {\n";
  for (int64_t i = 0; i < plan.num_inputs; ++i)
    if (!single[i]) out << "    const T " << value(i) << " = in" << i << "[i];\n";
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const int64_t v = plan.num_inputs + static_cast<int64_t>(k);
    if (!single[v]) out << "    const T " << value(v) << " = " << call(plan.steps[k]) << ";\n";
  }
  for (size_t k = 0; k < plan.steps.size(); ++k)
    if (plan.steps[k].output >= 0)
      out << "    out" << plan.steps[k].output << "[i] = " << value(plan.num_inputs + static_cast<int64_t>(k))
          << ";\n";
  out << "  }\n}\n";
  return out.str();
}

CompiledFusedFn compiled_fused_kernel(const FusedPlan& plan, DType dtype, std::span<const char> single) {
  if (!compile_fused_kernels() && !plan.program.compiled) return nullptr;
  std::string key(1, static_cast<char>(dtype));
  key.append(single.begin(), single.end());
  CompiledKernelCache& cache = *plan.kernel_cache;
  {
    std::lock_guard lock(cache.mutex);
    for (const auto& [k, fn] : cache.kernels)
      if (k == key) return fn;
  }
  const std::string source = fused_kernel_source(plan, dtype, single);
  CompiledFusedFn fn = source.empty() ? nullptr : load_kernel(source);
  std::lock_guard lock(cache.mutex);
  cache.kernels.emplace_back(std::move(key), fn);
  return fn;
}

}  // namespace detail
}  // namespace ef

// DLPack: tensors exchange memory with NumPy, PyTorch and other frameworks without
// copying (t.__dlpack__(), ef.from_dlpack(obj)). Also ef.from_numpy's zero-copy path.
#include <dlpack/dlpack.h>

#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

// DLPack 0.8 added a code for bool; the 0.6 header predates it.
constexpr uint8_t kDLBoolCode = 6;

DLDataType dl_dtype(ef::DType dtype) {
  switch (dtype) {
    case ef::DType::Float32: return {kDLFloat, 32, 1};
    case ef::DType::Float64: return {kDLFloat, 64, 1};
    case ef::DType::Int32: return {kDLInt, 32, 1};
    case ef::DType::Int64: return {kDLInt, 64, 1};
    case ef::DType::Bool: return {kDLBoolCode, 8, 1};
    case ef::DType::Float16:
      return {kDLFloat, 16, 1};
    case ef::DType::BFloat16:
      return {kDLBfloat, 16, 1};
    case ef::DType::Int8:
      return {kDLInt, 8, 1};
    case ef::DType::UInt8:
      return {kDLUInt, 8, 1};
    case ef::DType::Int16:
      return {kDLInt, 16, 1};
    case ef::DType::UInt16:
      return {kDLUInt, 16, 1};
    case ef::DType::UInt32:
      return {kDLUInt, 32, 1};
    case ef::DType::Complex64:
      return {kDLComplex, 64, 1};
    case ef::DType::Complex128:
      return {kDLComplex, 128, 1};
  }
  return {kDLFloat, 32, 1};
}

ef::DType from_dl_dtype(DLDataType t) {
  if (t.lanes == 1) {
    if (t.code == kDLFloat && t.bits == 32) return ef::DType::Float32;
    if (t.code == kDLFloat && t.bits == 64) return ef::DType::Float64;
    if (t.code == kDLInt && t.bits == 32) return ef::DType::Int32;
    if (t.code == kDLInt && t.bits == 64) return ef::DType::Int64;
    if (t.code == kDLBoolCode && t.bits == 8) return ef::DType::Bool;
    if (t.code == kDLFloat && t.bits == 16) return ef::DType::Float16;
    if (t.code == kDLBfloat && t.bits == 16) return ef::DType::BFloat16;
    if (t.code == kDLInt && t.bits == 8) return ef::DType::Int8;
    if (t.code == kDLUInt && t.bits == 8) return ef::DType::UInt8;
    if (t.code == kDLInt && t.bits == 16) return ef::DType::Int16;
    if (t.code == kDLUInt && t.bits == 16) return ef::DType::UInt16;
    if (t.code == kDLUInt && t.bits == 32) return ef::DType::UInt32;
    if (t.code == kDLComplex && t.bits == 64) return ef::DType::Complex64;
    if (t.code == kDLComplex && t.bits == 128) return ef::DType::Complex128;
  }
  throw ef::InvalidArgumentError(
      "from_dlpack: unsupported DLPack dtype (code " + std::to_string(t.code) + ", " +
      std::to_string(t.bits) + " bits, " + std::to_string(t.lanes) +
      " lanes); eagerflow has float32, float64, float16, bfloat16, int8, uint8, int16, uint16, int32, "
      "uint32, int64, bool, complex64 and complex128");
}

// What an exported DLManagedTensor owns: the tensor (keeping its memory alive) and
// the shape and strides arrays DLTensor points to.
struct Export {
  DLManagedTensor managed;
  ef::Tensor tensor;
  std::vector<int64_t> shape, strides;
};

py::capsule to_dlpack(const ef::Tensor& t, py::handle stream) {
  if (!stream.is_none() && !(PyLong_Check(stream.ptr()) && stream.cast<int64_t>() <= 1))
    throw ef::InvalidArgumentError("__dlpack__: eagerflow tensors live on the CPU; stream must be None");
  if (t.is_symbolic()) throw ef::FailedPreconditionError("__dlpack__: the tensor is symbolic and has no memory");
  if (t.device().type != ef::DeviceType::CPU)
    throw ef::UnimplementedError("__dlpack__: exporting a tensor on " + t.device().to_string() +
                                 " is not implemented yet; export t.cpu() instead");
  auto* e = new Export{};
  // A view that walks memory backwards (x[::-1]) is exported as a copy: DLPack's
  // consumers assume strides >= 0 (PyTorch aborts the process on a negative one).
  bool backwards = false;
  for (int i = 0; i < t.rank(); ++i) backwards = backwards || t.strides()[i] < 0;
  e->tensor = backwards ? t.contiguous() : t;
  const ef::Tensor& exported = e->tensor;
  for (int i = 0; i < exported.rank(); ++i) {
    e->shape.push_back(exported.shape()[i]);
    e->strides.push_back(exported.strides()[i]);
  }
  DLTensor& dl = e->managed.dl_tensor;
  dl.data = const_cast<void*>(exported.raw_data());
  dl.device = {kDLCPU, 0};
  dl.ndim = exported.rank();
  dl.dtype = dl_dtype(exported.dtype());
  dl.shape = e->shape.data();
  dl.strides = e->strides.data();
  dl.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = [](DLManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); };
  // A capsule nobody consumed (still named "dltensor") frees the tensor itself.
  return py::capsule(&e->managed, "dltensor", [](PyObject* capsule) {
    if (PyCapsule_IsValid(capsule, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    }
  });
}

ef::Tensor from_dlpack(py::object obj) {
  py::object capsule = obj;
  if (py::hasattr(obj, "__dlpack__")) {
    if (py::hasattr(obj, "__dlpack_device__")) {
      py::tuple device = obj.attr("__dlpack_device__")();
      if (device[0].cast<int>() != kDLCPU)
        throw ef::UnimplementedError("from_dlpack: only CPU memory can be imported (device type " +
                                     std::to_string(device[0].cast<int>()) + ")");
    }
    capsule = obj.attr("__dlpack__")();
  }
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor"))
    throw ef::InvalidArgumentError("from_dlpack: expected an object with __dlpack__ or an unused 'dltensor' capsule");
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  const DLTensor& dl = managed->dl_tensor;
  auto release = [managed] {
    if (managed->deleter) managed->deleter(managed);
  };
  try {
    if (dl.device.device_type != kDLCPU)
      throw ef::UnimplementedError("from_dlpack: only CPU memory can be imported");
    const ef::DType dtype = from_dl_dtype(dl.dtype);
    if (dl.ndim < 0 || dl.ndim > 8)
      throw ef::InvalidArgumentError("from_dlpack: rank " + std::to_string(dl.ndim) + " is beyond eagerflow's 8");
    ef::Dims dims, strides;
    int64_t expected_stride = 1;
    for (int i = dl.ndim - 1; i >= 0; --i) {
      int64_t stride = dl.strides ? dl.strides[i] : expected_stride;
      strides.push_back(stride);
      expected_stride *= dl.shape[i];
    }
    std::reverse(strides.begin(), strides.end());
    int64_t lowest = 0, highest = 0;  // element offsets the view reaches
    bool empty = false;
    for (int i = 0; i < dl.ndim; ++i) {
      dims.push_back(dl.shape[i]);
      if (dl.shape[i] == 0) empty = true;
      if (strides[i] < 0) lowest += strides[i] * (dl.shape[i] - 1);
      else highest += strides[i] * (dl.shape[i] - 1);
    }
    ef::Shape shape(dims);
    ef::validate_shape(shape, "from_dlpack", "shape", ef::size_of(dtype));
    const int64_t item = static_cast<int64_t>(ef::size_of(dtype));
    char* first = static_cast<char*>(dl.data) + dl.byte_offset;
    if (reinterpret_cast<uintptr_t>(first) % static_cast<uintptr_t>(item) != 0)
      throw ef::InvalidArgumentError("from_dlpack: the data is not aligned to its element size");
    // The storage spans what the view reaches; the tensor's offset points at `first`.
    char* base = empty ? first : first + lowest * item;
    size_t nbytes = empty ? 0 : static_cast<size_t>((highest - lowest + 1) * item);
    ef::Ref<ef::Storage> storage = ef::Storage::wrap(base, nbytes, ef::kCPU, release);
    PyCapsule_SetName(capsule.ptr(), "used_dltensor");
    ef::Ref<ef::TensorImpl> impl(new ef::TensorImpl());
    impl->dtype = dtype;
    impl->shape = shape;
    impl->strides = strides;
    impl->offset = empty ? 0 : -lowest;
    impl->storage = storage;
    return ef::Tensor(impl);
  } catch (...) {
    throw;  // not consumed: the capsule still owns the memory and frees it
  }
}

}  // namespace

void bind_dlpack(py::module_& m, py::class_<ef::Tensor>& tensor) {
  tensor.def("__dlpack__", &to_dlpack, py::arg("stream") = py::none());
  tensor.def("__dlpack_device__", [](const ef::Tensor& t) {
    // GPU tensors say where they are; exporting them (kDLCUDA) is not implemented yet,
    // and __dlpack__ says so.
    const bool gpu = t.device().type == ef::DeviceType::CUDA;
    return py::make_tuple(static_cast<int>(gpu ? kDLCUDA : kDLCPU), t.device().index);
  });
  m.def("from_dlpack", &from_dlpack, py::arg("dlpack"),
        "A tensor sharing the memory of `dlpack` (an object with __dlpack__, e.g. a NumPy array or a PyTorch "
        "tensor, or a DLPack capsule). No copy is made.");
}

}  // namespace efpy

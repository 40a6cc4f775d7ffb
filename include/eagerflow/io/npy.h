// NumPy's .npy and .npz files, so that C++ programs exchange tensors with NumPy
// (np.load / np.save / np.savez):
//
//   ef::Tensor x = ef::io::load_npy("x.npy");
//   ef::io::save_npz("out.npz", {{"logits", y}});
//
// Dtypes: float16/32/64, int32/64, bool (NumPy's '<f2', '<f4', '<f8', '<i4', '<i8',
// '|b1'); bfloat16 has no NumPy dtype and is refused. Fortran-ordered arrays are read
// and transposed into row-major order. Reading validates the magic, version, header,
// shape and size and throws DataLossError naming the file and the field; writing is
// atomic (Note [checkpoint integrity] in safetensors.h). An .npz is written as an
// uncompressed zip, as np.savez does.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "eagerflow/core/tensor.h"

namespace ef::io {

Tensor load_npy(const std::string& path, CallSite where = CallSite::current());
// As load_npy, from the bytes of a file; `source` names them in errors.
Tensor parse_npy(std::span<const uint8_t> bytes, const std::string& source = "<memory>");
void save_npy(const std::string& path, const Tensor& value, CallSite where = CallSite::current());
// Writes one .npy member per tensor ("<name>.npy"), as np.savez(path, **tensors).
void save_npz(const std::string& path, const std::map<std::string, Tensor>& tensors,
              CallSite where = CallSite::current());
// The members of an uncompressed .npz (np.savez's), by name without ".npy".
std::map<std::string, Tensor> load_npz(const std::string& path, CallSite where = CallSite::current());

}  // namespace ef::io

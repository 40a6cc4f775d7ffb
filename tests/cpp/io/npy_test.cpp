// .npy and .npz files: round trips of every dtype NumPy shares, Fortran order, and
// damaged files refused naming the field (tests/python/test_saved_model.py reads and
// writes them with NumPy itself).
#include <eagerflow/io/npy.h>

#include "io_test_util.h"

namespace ef {
namespace {

using testing::iota;
using testing::TempDir;

TEST(Npy, EveryDtypeRoundTrips) {
  TempDir dir("npy_round_trip");
  for (DType dtype : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Float16}) {
    const Tensor t = cast(iota({2, 3, 4}), dtype);
    io::save_npy(dir.file("t.npy"), t);
    const Tensor back = io::load_npy(dir.file("t.npy"));
    EXPECT_EQ(back.dtype(), dtype);
    EXPECT_EQ(back.to_vector<double>(), t.to_vector<double>());
  }
  for (const Tensor& t : {constant({true, false, true}), constant(2.5), zeros({0, 3})}) {
    io::save_npy(dir.file("t.npy"), t);
    const Tensor back = io::load_npy(dir.file("t.npy"));
    EXPECT_EQ(back.shape(), t.shape());
    EXPECT_EQ(back.to_vector<double>(), t.to_vector<double>());
  }
  io::save_npz(dir.file("all.npz"), {{"a", iota({3})}, {"b", constant(int64_t{7})}});
  const auto all = io::load_npz(dir.file("all.npz"));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all.at("a").to_vector<float>(), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(all.at("b").item<int64_t>(), 7);
  EXPECT_THROW(io::save_npy(dir.file("bf.npy"), zeros({2}, DType::BFloat16)), UnimplementedError);
}

std::vector<uint8_t> file_with_header(const std::string& header, size_t data_bytes) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.push_back(static_cast<uint8_t>(header.size()));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.resize(out.size() + data_bytes, 0);
  return out;
}

TEST(Npy, FortranOrderIsTransposedIntoRowMajor) {
  std::vector<uint8_t> f =
      file_with_header("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }\n", 0);
  for (int32_t v : {0, 3, 1, 4, 2, 5})  // column-major [[0, 1, 2], [3, 4, 5]]
    for (int b = 0; b < 4; ++b) f.push_back(static_cast<uint8_t>(v >> (8 * b)));
  EXPECT_EQ(io::parse_npy(f).to_vector<int>(), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(Npy, DamagedFilesAreRefusedNamingTheField) {
  const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
  EXPECT_NO_THROW(io::parse_npy(file_with_header(good, 24)));
  const std::vector<std::pair<std::vector<uint8_t>, std::string>> cases = {
      {{}, "magic"},
      {{'N', 'U', 'M', 'P', 'Y', 0, 1, 0, 0, 0}, "magic"},
      {file_with_header(good, 23), "data"},
      {file_with_header(good, 25), "data"},
      {file_with_header("{'descr': '<f4', 'shape': (2, 3), }", 24), "fortran_order"},
      {file_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", 24), "shape"},
      {file_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': 6, }", 24), "shape"},
      {file_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", 0),
       "shape"},
      {file_with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", 0), "data"},
  };
  for (const auto& [bytes, field] : cases) {
    try {
      io::parse_npy(bytes, "x.npy");
      ADD_FAILURE() << "accepted; expected an error about " << field;
    } catch (const DataLossError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
  std::vector<uint8_t> bools =
      file_with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", 2);
  bools.back() = 7;
  EXPECT_THROW(io::parse_npy(bools), DataLossError);
  EXPECT_THROW(
      io::parse_npy(file_with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", 4)),
      UnimplementedError);
}

}  // namespace
}  // namespace ef

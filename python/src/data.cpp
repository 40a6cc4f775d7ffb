// ef.data: Dataset, its iterator, the IDX reader and Fashion-MNIST. The Python classes
// in python/eagerflow/data.py add the element structure (nested tuples and dicts).
//
// Note [datasets and the GIL]: map functions written in Python run on the pipeline's
// threads (parallel map workers, the prefetch thread), which must take the GIL to call
// them. So every call that may wait for those threads — next(), and destroying an
// iterator, which joins them — releases the GIL first; otherwise the consumer would
// hold the GIL while waiting for a thread that waits for the GIL. Consumers in C++
// called with the GIL held (Model.fit and evaluate of a dataset) are covered
// by the wait hooks installed in bind_data, which release the GIL for each wait
// (Note [waiting on pipeline threads] in eagerflow/data/pipeline_threads.h).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <eagerflow/data/pipeline_threads.h>

#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
namespace data = ef::data;
constexpr ef::CallSite kPython{};

py::tuple to_tuple(const data::Element& e) {
  py::tuple t(e.size());
  for (size_t i = 0; i < e.size(); ++i) t[i] = py::cast(e[i]);
  return t;
}

// A Python callable held by pipeline nodes: dropped on whatever thread releases the
// last copy, so take the GIL to release it.
std::shared_ptr<py::function> held(py::function fn) {
  return std::shared_ptr<py::function>(new py::function(std::move(fn)), [](py::function* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

// The components of a sequence of tensor-likes.
data::Element element_of(py::handle items) {
  data::Element out;
  for (py::handle item : owned_items(items)) out.push_back(to_tensor(item));
  return out;
}

// A Python callable of a tuple of tensors, returning a sequence of tensor-likes.
data::MapFn map_fn_of(py::function fn) {
  return [f = held(std::move(fn))](const data::Element& in) {
    py::gil_scoped_acquire gil;
    return element_of((*f)(to_tuple(in)));
  };
}

// A Python callable of a tuple of tensors returning a tensor-like (filter's predicate).
data::PredicateFn predicate_of(py::function fn) {
  return [f = held(std::move(fn))](const data::Element& in) {
    py::gil_scoped_acquire gil;
    return to_tensor((*f)(to_tuple(in)));
  };
}

// A Python callable of a tuple of tensors returning a _Dataset (flat_map, interleave).
data::DatasetFn dataset_fn_of(py::function fn) {
  return [f = held(std::move(fn))](const data::Element& in) {
    py::gil_scoped_acquire gil;
    return (*f)(to_tuple(in)).cast<data::Dataset>();
  };
}

// from_generator's source: `start()` begins a pass and returns its next function, which
// returns a sequence of tensor-likes, or None at the end. Both run holding the GIL, on
// whichever thread pulls the pass (the consumer's, or a prefetch thread).
data::GeneratorFn generator_of(py::function start) {
  return [f = held(std::move(start))]() -> std::function<std::optional<data::Element>()> {
    py::gil_scoped_acquire gil;
    std::shared_ptr<py::function> next = held((*f)());
    return [next]() -> std::optional<data::Element> {
      py::gil_scoped_acquire gil;
      py::object item = (*next)();
      if (item.is_none()) return std::nullopt;
      return element_of(item);
    };
  };
}

// One pass; released without the GIL (Note [datasets and the GIL]).
class PyIterator {
 public:
  explicit PyIterator(data::Iterator it) : it_(std::move(it)) {}
  ~PyIterator() {
    py::gil_scoped_release release;
    it_ = data::Iterator();
  }
  py::object next() {
    data::Element e;
    bool got;
    {
      py::gil_scoped_release release;
      got = it_.next(e);
    }
    if (!got) return py::none();
    return to_tuple(e);
  }

 private:
  data::Iterator it_;
};

// The file's elements in a NumPy array of the stored type (a copy).
py::array idx_to_numpy(const data::IdxFile& f) {
  const char* dtype = "uint8";
  switch (f.type) {
    case data::IdxType::UInt8:
      dtype = "uint8";
      break;
    case data::IdxType::Int8:
      dtype = "int8";
      break;
    case data::IdxType::Int16:
      dtype = "int16";
      break;
    case data::IdxType::Int32:
      dtype = "int32";
      break;
    case data::IdxType::Float32:
      dtype = "float32";
      break;
    case data::IdxType::Float64:
      dtype = "float64";
      break;
  }
  std::vector<py::ssize_t> shape(f.dims.begin(), f.dims.end());
  return py::array(py::dtype(dtype), shape, f.data.data());
}

}  // namespace

void bind_data(py::module_& m) {
  py::module_ d = m.def_submodule("data", "tf.data-style input pipelines (use eagerflow.data)");
  d.attr("AUTOTUNE") = data::kAutotune;
  d.attr("INFINITE_CARDINALITY") = data::kInfiniteCardinality;
  d.attr("UNKNOWN_CARDINALITY") = data::kUnknownCardinality;

  data::set_wait_hooks(
      {[]() -> void* { return Py_IsInitialized() && PyGILState_Check() ? PyEval_SaveThread() : nullptr; },
       [](void* state) {
         if (state) PyEval_RestoreThread(static_cast<PyThreadState*>(state));
       }});

  py::class_<PyIterator>(d, "_Iterator").def("next", &PyIterator::next);

  py::class_<data::Dataset>(d, "_Dataset")
      .def_static("from_tensor_slices",
                  [](py::sequence tensors) {
                    return data::Dataset::from_tensor_slices(element_of(tensors), kPython);
                  })
      .def("shuffle", [](const data::Dataset& ds, int64_t buffer_size, std::optional<int64_t> seed,
                         bool reshuffle) { return ds.shuffle(buffer_size, seed, reshuffle, kPython); })
      .def("batch", [](const data::Dataset& ds, int64_t n, bool drop) { return ds.batch(n, drop, kPython); })
      .def("map", [](const data::Dataset& ds, py::function fn,
                     int64_t calls) { return ds.map(map_fn_of(std::move(fn)), calls, kPython); })
      .def("repeat", [](const data::Dataset& ds, int64_t count) { return ds.repeat(count, kPython); })
      .def("take", [](const data::Dataset& ds, int64_t count) { return ds.take(count, kPython); })
      .def("prefetch", [](const data::Dataset& ds, int64_t n) { return ds.prefetch(n, kPython); })
      .def_static(
          "from_tensors",
          [](py::sequence tensors) { return data::Dataset::from_tensors(element_of(tensors), kPython); })
      .def_static(
          "zip",
          [](const std::vector<data::Dataset>& datasets) { return data::Dataset::zip(datasets, kPython); })
      .def_static("from_generator",
                  [](py::function start) {
                    return data::Dataset::from_generator(generator_of(std::move(start)), kPython);
                  })
      .def("filter", [](const data::Dataset& ds,
                        py::function fn) { return ds.filter(predicate_of(std::move(fn)), kPython); })
      .def("skip", [](const data::Dataset& ds, int64_t count) { return ds.skip(count, kPython); })
      .def("shard", [](const data::Dataset& ds, int64_t num_shards,
                       int64_t index) { return ds.shard(num_shards, index, kPython); })
      .def("enumerate", [](const data::Dataset& ds, int64_t start) { return ds.enumerate(start, kPython); })
      .def("concatenate",
           [](const data::Dataset& ds, const data::Dataset& other) { return ds.concatenate(other, kPython); })
      .def("unbatch", [](const data::Dataset& ds) { return ds.unbatch(kPython); })
      .def("padded_batch",
           [](const data::Dataset& ds, int64_t batch_size, std::optional<std::vector<py::object>> shapes,
              std::optional<std::vector<py::object>> values, bool drop) {
             std::optional<std::vector<ef::Shape>> padded;
             if (shapes) {
               padded.emplace();
               for (const py::object& s : *shapes) padded->push_back(to_shape(s, "padded_shapes"));
             }
             std::optional<std::vector<ef::TensorOrScalar>> padding;
             if (values) {
               padding.emplace();
               for (const py::object& v : *values) padding->push_back(to_operand(v));
             }
             return ds.padded_batch(batch_size, std::move(padded), std::move(padding), drop, kPython);
           })
      .def("cache", [](const data::Dataset& ds) { return ds.cache(kPython); })
      .def("interleave",
           [](const data::Dataset& ds, py::function fn, int64_t cycle_length, int64_t block_length) {
             return ds.interleave(dataset_fn_of(std::move(fn)), cycle_length, block_length, kPython);
           })
      .def("flat_map", [](const data::Dataset& ds,
                          py::function fn) { return ds.flat_map(dataset_fn_of(std::move(fn)), kPython); })
      .def("reduce",
           [](const data::Dataset& ds, py::sequence initial_state, py::function fn) {
             auto f = held(std::move(fn));
             data::ReduceFn reduce_fn = [f](const data::Element& state, const data::Element& element) {
               py::gil_scoped_acquire gil;
               return element_of((*f)(to_tuple(state), to_tuple(element)));
             };
             data::Element initial = element_of(initial_state);
             data::Element result;
             {
               py::gil_scoped_release release;  // the pass may run Python on its threads
               result = ds.reduce(std::move(initial), std::move(reduce_fn), kPython);
             }
             return to_tuple(result);
           })
      .def("cardinality", &data::Dataset::cardinality)
      .def("make_iterator", [](const data::Dataset& ds) { return new PyIterator(ds.make_iterator()); });

  d.def(
      "read_idx", [](const std::string& path) { return data::read_idx(path, kPython); },
      R"doc(Reads an IDX file (the format of MNIST and Fashion-MNIST) as a tensor.

The file may be gzip-compressed (detected by content). eagerflow has no 8- or
16-bit integers, so ubyte, byte and short elements become int32 (same values);
int becomes int32, float float32 and double float64.

    labels = ef.data.read_idx("train-labels-idx1-ubyte.gz")   # int32 [60000]

Args:
  path: The file's path, a str.

Returns:
  A Tensor with the file's dimensions.

Raises:
  NotFoundError: the file is missing or unreadable.
  InvalidArgumentError: a malformed file (bad magic or type code, sizes that do
    not match the data, a corrupt gzip stream), naming the file and the field.
)doc",
      "path"_a);
  d.def(
      "_read_idx_numpy",
      [](const std::string& path) { return idx_to_numpy(data::read_idx_file(path, kPython)); }, "path"_a);
  d.def("fashion_mnist_directory", &data::datasets::fashion_mnist_directory, "directory"_a = "");
  d.def(
      "fashion_mnist",
      [](const std::string& directory) {
        data::datasets::FashionMnist f = data::datasets::fashion_mnist(directory, kPython);
        return py::make_tuple(py::make_tuple(f.train.images, f.train.labels),
                              py::make_tuple(f.test.images, f.test.labels));
      },
      "directory"_a = "");
  d.def(
      "_fashion_mnist_numpy",
      [](const std::string& directory) {
        data::datasets::FashionMnistFiles f = data::datasets::read_fashion_mnist_files(directory, kPython);
        return py::make_tuple(py::make_tuple(idx_to_numpy(f.train_images), idx_to_numpy(f.train_labels)),
                              py::make_tuple(idx_to_numpy(f.test_images), idx_to_numpy(f.test_labels)));
      },
      "directory"_a = "");
}

}  // namespace efpy

// Dispatch: the errors every op call shares (undefined or symbolic inputs), the caller's
// file:line in messages, shape-only graph building, and the op registry.
#include <algorithm>

#include "test_util.h"

namespace ef {
namespace {

using ::ef::testing::expect_meta;

TEST(Dispatch, UndefinedInputNamesOpAndIndex) {
  EXPECT_ERROR(exp(Tensor()), InvalidArgumentError, "exp", "input 0", "undefined");
  EXPECT_ERROR(add(constant(1.f), Tensor()), InvalidArgumentError, "add", "undefined");
}

TEST(Dispatch, ErrorsNameTheCallersFileAndLine) {
  int line = __LINE__ + 2;
  try {
    (void)add(constant({1.f, 2.f}), constant({1.f, 2.f, 3.f}));
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    std::string what = e.what();
    EXPECT_THAT(what, ::testing::HasSubstr(std::string(__FILE__) + ":" + std::to_string(line))) << what;
    EXPECT_THAT(what, ::testing::HasSubstr("(called from "));
    EXPECT_TRUE(e.has_call_site());
    EXPECT_EQ(std::string(e.what()).find(__FILE__), std::string(e.what()).rfind(__FILE__));  // appended once
    EXPECT_EQ(e.message().find(__FILE__), std::string::npos);
  }
}

TEST(Dispatch, CallSiteIsTheOutermostUserCall) {
  // clip_by_value calls other ops internally; the error still names this file.
  EXPECT_ERROR(clip_by_value(constant({1.f}), constant({1.f, 2.f}), constant({1.f, 2.f, 3.f})), Error, __FILE__);
  EXPECT_ERROR(cast(Tensor(), DType::Int32), InvalidArgumentError, __FILE__, "cast");
}

TEST(Dispatch, CallSiteCapturesTheLine) {
  CallSite here = CallSite::current();
  EXPECT_EQ(here.line(), static_cast<uint_least32_t>(__LINE__ - 1));
  EXPECT_STREQ(here.file_name(), __FILE__);
  Error e("boom");
  e.add_call_site(here);
  e.add_call_site(CallSite::current());  // ignored: the first call site wins
  EXPECT_EQ(std::string(e.what()), "boom (called from " + std::string(__FILE__) + ":" + std::to_string(here.line()) + ")");
  Error no_site("quiet");
  no_site.add_call_site(CallSite());  // line 0: nothing to report
  EXPECT_EQ(std::string(no_site.what()), "quiet");
}

TEST(Dispatch, SymbolicInputInEagerModeThrows) {
  Tensor s = symbolic_tensor(DType::Float32, {2});
  EXPECT_ERROR(exp(s), InvalidArgumentError, "exp", "symbolic", "eagerly");
}

TEST(InferenceOnly, RunsMathOpsWithoutComputing) {
  InferenceOnlyBuilder builder;
  {
    BuildScope scope(&builder);
    Tensor x = symbolic_tensor(DType::Float32, {kUnknownDim, 3});
    Tensor y = symbolic_tensor(DType::Float32, {4, 1});
    Tensor z = add(x, y);
    EXPECT_TRUE(z.is_symbolic());
    expect_meta(z, {4, 3}, DType::Float32);
    expect_meta(exp(x), {kUnknownDim, 3}, DType::Float32);
    expect_meta(x > 0.f, {kUnknownDim, 3}, DType::Bool);
    expect_meta(cast(x, DType::Int64), {kUnknownDim, 3}, DType::Int64);
    expect_meta(x * 2 + 1, {kUnknownDim, 3}, DType::Float32);
    expect_meta(clip_by_value(x, 0.f, 1.f), {kUnknownDim, 3}, DType::Float32);
    expect_meta(logical_not(x < y), {4, 3}, DType::Bool);
    expect_meta(zeros({2, 5}), {2, 5}, DType::Float32);
    expect_meta(zeros_like(x), {kUnknownDim, 3}, DType::Float32);
    // Inference still validates.
    EXPECT_ERROR(add(x, symbolic_tensor(DType::Float32, {5, 2})), InvalidArgumentError, "add", "[?, 3]", "[5, 2]");
    EXPECT_ERROR(add(x, symbolic_tensor(DType::Float64, {3})), InvalidArgumentError, "float32", "float64");
    EXPECT_ERROR(exp(symbolic_tensor(DType::Int32, {2})), InvalidArgumentError, "exp", "int32");
    // Eager tensors are accepted as inputs while building.
    expect_meta(add(x, constant({1.f, 2.f, 3.f})), {kUnknownDim, 3}, DType::Float32);
  }
  EXPECT_GE(builder.ops_built(), 10);
  // Outside the scope ops execute again.
  EXPECT_FALSE(add(constant(1.f), constant(2.f)).is_symbolic());
}

TEST(InferenceOnly, ScopesNestAndRestore) {
  InferenceOnlyBuilder outer, inner;
  {
    BuildScope a(&outer);
    {
      BuildScope b(&inner);
      (void)exp(constant(1.f));
    }
    (void)exp(constant(1.f));
    (void)exp(constant(1.f));
  }
  EXPECT_EQ(inner.ops_built(), 1);
  EXPECT_EQ(outer.ops_built(), 2);
  EXPECT_EQ(Context::current().builder, nullptr);
}

TEST(Registry, ListsOpsSortedByName) {
  std::vector<const OpDef*> ops = registered_ops();
  ASSERT_FALSE(ops.empty());
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end(),
                             [](const OpDef* a, const OpDef* b) { return a->name < b->name; }));
  std::vector<std::string_view> names;
  for (const OpDef* op : ops) {
    names.push_back(op->name);
    EXPECT_NE(op->infer, nullptr) << op->name;
  }
  for (std::string_view expected : {"add", "exp", "cast", "fill", "range", "equal", "logical_not"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "duplicate op name";
}

TEST(Registry, FindOpAndDefineOpErrors) {
  EXPECT_EQ(find_op("add").name, "add");
  EXPECT_ERROR(find_op("no_such_op"), NotFoundError, "no_such_op");
  OpDef duplicate;
  duplicate.name = "add";
  duplicate.infer = find_op("add").infer;
  duplicate.gradient = find_op("add").gradient;
  EXPECT_ERROR(define_op(duplicate), InternalError, "add", "twice");
  // Every op must have a gradient or say why it has none — and not both.
  OpDef no_gradient;
  no_gradient.name = "op_without_gradient";
  no_gradient.infer = find_op("add").infer;
  EXPECT_ERROR(define_op(no_gradient), InternalError, "op_without_gradient", "gradient", "not_differentiable");
  no_gradient.gradient = find_op("add").gradient;
  no_gradient.not_differentiable = "a reason";
  EXPECT_ERROR(define_op(no_gradient), InternalError, "also marked");
  for (const OpDef* op : registered_ops())
    EXPECT_TRUE(op->gradient || !op->not_differentiable.empty()) << op->name;
  OpDef no_inference;
  no_inference.name = "op_without_inference";
  EXPECT_ERROR(define_op(no_inference), InternalError, "inference");
  EXPECT_ERROR(define_op(OpDef()), InternalError, "name");
}

TEST(Dispatch, ElementwiseOpsRunByNameCheckTheirInputCount) {
  const Tensor x = constant({1.0, 2.0});
  EXPECT_ERROR(run_op_multi(find_op("add"), {x}, {}, CallSite::current()), InvalidArgumentError,
               "add: expects 2 inputs, got 1");
  EXPECT_ERROR(run_op_multi(find_op("exp"), {x, x}, {}, CallSite::current()), InvalidArgumentError,
               "exp: expects 1 input, got 2");
}

}  // namespace
}  // namespace ef

// FusedProgram: building it, encoding it as fused_elementwise's attrs, and decoding
// and validating those attrs into the FusedPlan the kernel runs.
//
// Encoding (attrs are plain values, so graphs hash, compare and print it like any op):
//   ops         string  op names joined by ',':          "multiply,add,tanh"
//   operands    ints    every instruction's operands, in order:  [0, 1, 3, 2, 4]
//   outputs     ints    value indices of the outputs:    [5]
//   num_inputs  int                                      3
//   compiled    bool   FusedProgram::compiled, only when true (listings stay short)
#include <algorithm>
#include <array>
#include <string>

#include "ops/math/fused_plan.h"

namespace ef {

int64_t FusedProgram::add(const OpDef& op, std::vector<int64_t> operands) {
  instructions.push_back({&op, std::move(operands)});
  return num_inputs + static_cast<int64_t>(instructions.size()) - 1;
}

int64_t FusedProgram::add(std::string_view op_name, std::vector<int64_t> operands) {
  return add(find_op(op_name), std::move(operands));
}

Attrs fused_program_to_attrs(const FusedProgram& program) {
  std::string ops;
  Dims operands;
  for (size_t k = 0; k < program.instructions.size(); ++k) {
    const FusedInstruction& ins = program.instructions[k];
    if (!ins.op) fail("fused_elementwise: instruction ", k, " has no op");
    if (k) ops += ',';
    ops += ins.op->name;
    for (int64_t v : ins.operands) operands.push_back(v);
  }
  Dims outputs(program.outputs.begin(), program.outputs.end());
  if (program.compiled)
    return Attrs{std::move(ops), std::move(operands), std::move(outputs), program.num_inputs, true};
  return Attrs{std::move(ops), std::move(operands), std::move(outputs), program.num_inputs};
}

FusedProgram fused_program_from_attrs(const Attrs& attrs) { return detail::fused_plan(attrs)->program; }

namespace detail {
namespace {

constexpr std::string_view kOp = "fused_elementwise";

void check_attr_types(const Attrs& attrs) {
  const bool ok =
      (attrs.size() == 4 || (attrs.size() == 5 && std::holds_alternative<bool>(attrs[kFusedCompiled]))) &&
      std::holds_alternative<std::string>(attrs[kFusedOps]) &&
      std::holds_alternative<Dims>(attrs[kFusedOperands]) &&
      std::holds_alternative<Dims>(attrs[kFusedOutputs]) &&
      std::holds_alternative<int64_t>(attrs[kFusedNumInputs]);
  if (!ok)
    fail(kOp,
         ": expected attrs (ops: string, operands: ints, outputs: ints, num_inputs: int[, compiled: bool]), "
         "got ",
         attrs.size(), " attrs; build them with fused_program_to_attrs");
}

std::vector<std::string_view> split_names(std::string_view joined) {
  std::vector<std::string_view> names;
  if (joined.empty()) return names;
  size_t start = 0;
  for (;;) {
    size_t comma = joined.find(',', start);
    names.push_back(joined.substr(start, comma - start));
    if (comma == std::string_view::npos) return names;
    start = comma + 1;
  }
}

const OpDef& fusible_op(std::string_view name, size_t k) {
  const OpDef* op = nullptr;
  try {
    op = &find_op(name);
  } catch (const NotFoundError&) {
    fail<NotFoundError>(kOp, ": instruction ", k, " names op '", name, "', which is not registered");
  }
  if (!op->elementwise_block.fn)
    fail(kOp, ": instruction ", k, " is '", name, "', which cannot be fused: ",
         op->traits.elementwise ? "its result is not of its input dtype, or it reads attrs"
                                : "it is not an elementwise op",
         " (Note [elementwise blocks])");
  return *op;
}

// Decodes and validates; then gives each intermediate a scratch buffer, reusing a
// buffer once its value's last reader has run.
FusedPlan decode(const Attrs& attrs) {
  check_attr_types(attrs);
  FusedPlan plan;
  const Dims& operands = attrs.get_ints(kFusedOperands);
  plan.num_inputs = attrs.get_int(kFusedNumInputs);
  if (plan.num_inputs < 1) fail(kOp, ": the program needs at least one input, got num_inputs ", plan.num_inputs);
  const std::vector<std::string_view> names = split_names(attrs.get<std::string>(kFusedOps));
  if (names.empty()) fail(kOp, ": the program has no instructions");

  plan.program.num_inputs = plan.num_inputs;
  plan.program.compiled = attrs.size() > kFusedCompiled && attrs.get_bool(kFusedCompiled);
  size_t cursor = 0;
  for (size_t k = 0; k < names.size(); ++k) {
    const OpDef& op = fusible_op(names[k], k);
    FusedStep step{&op, op.elementwise_block.arity};
    if (cursor + step.arity > operands.size())
      fail(kOp, ": instruction ", k, " ('", op.name, "') takes ", step.arity, " operands, but only ",
           operands.size() - cursor, " remain of the ", operands.size(), " operands given");
    const int64_t defined = plan.num_inputs + static_cast<int64_t>(k);  // values before instruction k
    for (int j = 0; j < step.arity; ++j) {
      const int64_t v = operands[cursor++];
      if (v < 0 || v >= defined)
        fail(kOp, ": operand ", j, " of instruction ", k, " ('", op.name, "') is value ", v,
             ", but only values 0..", defined - 1, " (", plan.num_inputs, " inputs and ", k,
             " earlier results) are defined before it");
      step.operands[j] = v;
    }
    plan.steps.push_back(step);
    plan.program.instructions.push_back({&op, {step.operands, step.operands + step.arity}});
    plan.cost_ns += op.elementwise_block.cost_ns;
    plan.dtypes &= op.elementwise_block.dtypes;
  }
  if (cursor != operands.size())
    fail(kOp, ": the instructions take ", cursor, " operands in all, but ", operands.size(), " were given");

  const int64_t num_values = plan.num_inputs + static_cast<int64_t>(plan.steps.size());
  const Dims& outputs = attrs.get_ints(kFusedOutputs);
  if (outputs.empty()) fail(kOp, ": the program has no outputs");
  for (size_t j = 0; j < outputs.size(); ++j) {
    const int64_t v = outputs[j];
    if (v < plan.num_inputs || v >= num_values)
      fail(kOp, ": output ", j, " is value ", v, ", which is not an instruction result (values ",
           plan.num_inputs, "..", num_values - 1, ")");
    plan.outputs.push_back(v);
    plan.program.outputs.push_back(v);
    auto first = std::find(plan.outputs.begin(), plan.outputs.end(), v) - plan.outputs.begin();
    if (first != static_cast<int64_t>(j)) plan.copies.push_back({static_cast<int>(j), static_cast<int>(first)});
    else plan.steps[v - plan.num_inputs].output = static_cast<int>(j);
  }

  std::vector<int64_t> last_use(num_values, -1);
  for (size_t k = 0; k < plan.steps.size(); ++k)
    for (int j = 0; j < plan.steps[k].arity; ++j) last_use[plan.steps[k].operands[j]] = static_cast<int64_t>(k);
  std::vector<int> free_slots;
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    FusedStep& step = plan.steps[k];
    if (step.output < 0) {  // an intermediate: it needs a buffer
      if (free_slots.empty()) free_slots.push_back(plan.num_slots++);
      step.slot = free_slots.back();
      free_slots.pop_back();
    }
    // Operands are freed only now: a step never writes over its own operands' scratch
    // buffers. A result nobody reads is freed at once.
    for (int j = 0; j <= step.arity; ++j) {
      const int64_t v = j < step.arity ? step.operands[j] : plan.num_inputs + static_cast<int64_t>(k);
      if (v < plan.num_inputs || last_use[v] > static_cast<int64_t>(k)) continue;
      if (j < step.arity && std::find(step.operands, step.operands + j, v) != step.operands + j) continue;
      const FusedStep& producer = plan.steps[v - plan.num_inputs];
      if (producer.slot >= 0) free_slots.push_back(producer.slot);
    }
  }
  return plan;
}

}  // namespace

std::shared_ptr<const FusedPlan> fused_plan(const Attrs& attrs) {
  // Infer and kernel both need the plan, and a graph runs the same few fused nodes again
  // and again: comparing attrs (~0.1 us) costs far less than decoding (a registry
  // look-up per op: ~1.2 us for 8 ops). The last kCached plans are kept per thread.
  constexpr size_t kCached = 8;
  struct Cached {
    Attrs attrs;
    std::shared_ptr<const FusedPlan> plan;
  };
  thread_local std::array<Cached, kCached> cache;
  thread_local size_t next = 0;
  for (const Cached& c : cache)
    if (c.plan && c.attrs == attrs) return c.plan;
  auto plan = std::make_shared<const FusedPlan>(decode(attrs));
  cache[next] = {attrs, plan};
  next = (next + 1) % kCached;
  return plan;
}

}  // namespace detail
}  // namespace ef

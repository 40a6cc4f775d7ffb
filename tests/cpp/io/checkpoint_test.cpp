// Object-based checkpoints: keys by path, exact continuation of training after a
// restore into fresh objects, validation that changes nothing on error, and the manager.
#include <eagerflow/io/checkpoint.h>
#include <eagerflow/io/safetensors.h>
#include <eagerflow/nn/layers.h>
#include <eagerflow/nn/losses.h>

#include "io_test_util.h"

namespace ef::testing {
namespace {

using io::Checkpoint;

struct Net : nn::Layer {
  explicit Net(int64_t hidden = 4) : Layer("net"), hidden_units(hidden) {}
  int64_t hidden_units;
  nn::Dense& hidden = add_module<nn::Dense>("hidden", hidden_units, nn::DenseOptions{.activation = "tanh"});
  nn::Dense& out = add_module<nn::Dense>("out", 3);
  Tensor call(const Tensor& x, bool) override { return out(hidden(x)); }
};

const Tensor& inputs() {
  static const Tensor x = random::uniform({8, 5}, -1.0, 1.0, DType::Float32, 1);
  return x;
}
const Tensor& targets() {
  static const Tensor y = random::uniform({8, 3}, -1.0, 1.0, DType::Float32, 2);
  return y;
}

void train(Net& net, optim::Optimizer& opt, int steps) {
  for (int i = 0; i < steps; ++i)
    opt.minimize([&] { return reduce_mean(nn::losses::mean_squared_error(targets(), net(inputs()))); },
                 net.trainable_variables());
}

// The optimizers under test, each configured to use all its slots.
std::vector<std::function<std::unique_ptr<optim::Optimizer>()>> optimizers() {
  return {[] { return std::make_unique<optim::Adam>(0.01); },
          [] { return std::make_unique<optim::AdamW>(0.01, 0.1, 0.9, 0.999, 1e-7, /*amsgrad=*/true); },
          [] { return std::make_unique<optim::SGD>(0.05, 0.9, /*nesterov=*/true); },
          [] { return std::make_unique<optim::RMSprop>(0.01, 0.9, 0.5, 1e-7, /*centered=*/true); },
          [] { return std::make_unique<optim::Adagrad>(0.05); }};
}

// The model and optimizer state as bytes, for bitwise comparisons.
std::map<std::string, std::vector<uint8_t>> snapshot(const Checkpoint& ckpt) {
  std::map<std::string, std::vector<uint8_t>> out;
  for (const auto& [key, t] : ckpt.state()) out[key] = tensor_bytes(t);
  return out;
}

TEST(CheckpointTest, KeysFollowObjectPaths) {
  Net net;
  net(inputs());
  optim::Adam adam(0.01);
  Variable counter(constant(int64_t{0}), "counter", false);
  Checkpoint ckpt{{"model", net}, {"optimizer", adam}, {"counter", counter}};
  train(net, adam, 1);
  std::vector<std::string> keys;
  for (const auto& [key, t] : ckpt.state()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "counter", "model/hidden/bias", "model/hidden/kernel", "model/out/bias", "model/out/kernel",
                      "optimizer/iterations", "optimizer/slots/model/hidden/bias/m", "optimizer/slots/model/hidden/bias/v",
                      "optimizer/slots/model/hidden/kernel/m", "optimizer/slots/model/hidden/kernel/v",
                      "optimizer/slots/model/out/bias/m", "optimizer/slots/model/out/bias/v",
                      "optimizer/slots/model/out/kernel/m", "optimizer/slots/model/out/kernel/v",
                      "optimizer/steps/model/hidden/bias", "optimizer/steps/model/hidden/kernel",
                      "optimizer/steps/model/out/bias", "optimizer/steps/model/out/kernel"}));
}

TEST(CheckpointTest, RestoredTrainingContinuesBitwiseLikeTheUninterruptedRun) {
  TempDir dir("resume");
  for (size_t k = 0; k < optimizers().size(); ++k) {
    SCOPED_TRACE("optimizer " + std::to_string(k));
    // Uninterrupted: 6 steps. Its initial weights are shared with the other runs.
    Net a;
    a(inputs());
    Checkpoint{{"model", a}}.save(dir.file("init.safetensors"));
    auto opt_a = optimizers()[k]();
    Checkpoint ckpt_a{{"model", a}, {"optimizer", *opt_a}};
    train(a, *opt_a, 6);

    // Interrupted: 3 steps, save, 3 more (the process would end here).
    Net b;
    b(inputs());
    Checkpoint{{"model", b}}.restore(dir.file("init.safetensors"));
    auto opt_b = optimizers()[k]();
    Checkpoint ckpt_b{{"model", b}, {"optimizer", *opt_b}};
    train(b, *opt_b, 3);
    ckpt_b.save(dir.file("step3.safetensors"));
    train(b, *opt_b, 3);

    // A fresh model and optimizer (no slots yet) restore and train the last 3 steps.
    Net c;
    c(inputs());
    auto opt_c = optimizers()[k]();
    Checkpoint ckpt_c{{"model", c}, {"optimizer", *opt_c}};
    ckpt_c.restore(dir.file("step3.safetensors"));
    EXPECT_EQ(opt_c->iterations(), 3);
    train(c, *opt_c, 3);

    const auto expected = snapshot(ckpt_a);
    EXPECT_EQ(snapshot(ckpt_b), expected);
    EXPECT_EQ(snapshot(ckpt_c), expected);
    EXPECT_EQ(opt_c->iterations(), 6);
  }
}

TEST(CheckpointTest, MismatchesAreRejectedAndChangeNothing) {
  TempDir dir("mismatch");
  Net net;
  net(inputs());
  optim::Adam adam(0.01);
  train(net, adam, 2);
  Checkpoint{{"model", net}, {"optimizer", adam}}.save(dir.file("ckpt.safetensors"));
  const std::string path = dir.file("ckpt.safetensors");

  // Each target is trained one step so that it has state to protect.
  auto check_unchanged = [&](Checkpoint& target, auto&& restore) {
    const auto before = snapshot(target);
    restore();
    EXPECT_EQ(snapshot(target), before);
  };
  {  // a wider hidden layer: shapes differ
    Net wide(5);
    wide(inputs());
    optim::Adam opt(0.01);
    train(wide, opt, 1);
    Checkpoint target{{"model", wide}, {"optimizer", opt}};
    check_unchanged(target, [&] {
      EXPECT_ERROR(target.restore(path), InvalidArgumentError, path, "'model/hidden/kernel'", "[5, 4]",
                   "[5, 5]", "checkpoint_test.cpp");
    });
  }
  {  // an extra object: its key is missing
    Net same;
    same(inputs());
    Variable extra(ones({2}), "extra");
    Checkpoint target{{"model", same}, {"extra", extra}};
    check_unchanged(target, [&] { EXPECT_ERROR(target.restore(path), NotFoundError, path, "'extra'", "[2]", "missing"); });
  }
  {  // no optimizer: its keys are unexpected
    Net same;
    same(inputs());
    Checkpoint target{{"model", same}};
    check_unchanged(target, [&] {
      EXPECT_ERROR(target.restore(path), InvalidArgumentError, path, "optimizer/iterations", "match no object");
    });
  }
  {  // another optimizer: SGD with momentum lacks its "momentum" slot in the file
    Net same;
    same(inputs());
    optim::SGD sgd(0.1, 0.9);
    train(same, sgd, 1);
    Checkpoint target{{"model", same}, {"optimizer", sgd}};
    check_unchanged(target, [&] {
      EXPECT_ERROR(target.restore(path), NotFoundError, path, "optimizer/slots/model/hidden/kernel/momentum");
    });
    EXPECT_EQ(sgd.iterations(), 1);
  }
  {  // a dtype mismatch
    Net same;
    same(inputs());
    Variable v(ones({3}, DType::Float64), "v");
    io::save_safetensors(dir.file("v.safetensors"), {{"v", ones({3}, DType::Float32)}});
    Checkpoint target{{"v", v}};
    check_unchanged(target, [&] {
      EXPECT_ERROR(target.restore(dir.file("v.safetensors")), InvalidArgumentError, "'v'", "float32", "float64");
    });
  }
  {  // a damaged file
    std::vector<uint8_t> bytes = read_bytes(path);
    bytes[bytes.size() - 3] ^= 0x10;
    write_bytes(dir.file("damaged.safetensors"), bytes);
    Net same;
    same(inputs());
    optim::Adam opt(0.01);
    train(same, opt, 1);
    Checkpoint target{{"model", same}, {"optimizer", opt}};
    check_unchanged(target, [&] {
      EXPECT_ERROR(target.restore(dir.file("damaged.safetensors")), DataLossError, "damaged.safetensors", "crc32c");
    });
  }
}

TEST(CheckpointTest, MovesBetweenEagerAndGraphMode) {
  // The announcement: save eagerly, build the same model code in a graph, restore
  // while the graph is the default (Note [checkpoints run eagerly]), run in a Session.
  TempDir dir("graph");
  Net eager_net;
  optim::SGD sgd(0.1);
  train(eager_net, sgd, 2);
  const Tensor expected = eager_net(inputs());
  Checkpoint{{"model", eager_net}}.save(dir.file("eager.safetensors"));

  Graph g;
  Net graph_net;
  Tensor x, y;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float32, {kUnknownDim, 5}, "x");
    y = graph_net(x);
    Checkpoint{{"model", graph_net}}.restore(dir.file("eager.safetensors"));  // uninitialized until now
  }
  Session session(g);
  EXPECT_EQ(tensor_bytes(session.run(y, {{x, inputs()}})), tensor_bytes(expected));
  // The initializer puts the fresh values back, as in TensorFlow; a later restore wins again.
  session.run({}, {}, {global_variables_initializer(g)});
  EXPECT_NE(tensor_bytes(session.run(y, {{x, inputs()}})), tensor_bytes(expected));
  {
    Graph::Scope scope(g);
    Checkpoint{{"model", graph_net}}.restore(dir.file("eager.safetensors"));
    Checkpoint{{"model", graph_net}}.save(dir.file("graph.safetensors"));  // saved from graph mode
  }
  EXPECT_EQ(tensor_bytes(session.run(y, {{x, inputs()}})), tensor_bytes(expected));
  EXPECT_EQ(global_variables(g).size(), 4u);

  Net eager_again;
  eager_again(inputs());
  Checkpoint{{"model", eager_again}}.restore(dir.file("graph.safetensors"));
  EXPECT_EQ(tensor_bytes(eager_again(inputs())), tensor_bytes(expected));

  // Saving a graph variable that was never initialized is an error, not a file of garbage.
  Graph fresh;
  Net never_initialized;
  {
    Graph::Scope scope(fresh);
    never_initialized(placeholder(DType::Float32, {kUnknownDim, 5}, "x"));
  }
  Checkpoint uninitialized{{"model", never_initialized}};
  EXPECT_ERROR(uninitialized.save(dir.file("bad.safetensors")), FailedPreconditionError, "not initialized");
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"eager.safetensors", "graph.safetensors"}));
}

// A checkpoint's dtype must match its variable's unless the caller asks for a cast
// (float32 weights into a bfloat16 copy of the model, say).
TEST(CheckpointTest, OtherFloatDtypesLoadOnlyWhenAskedToConvert) {
  TempDir dir("convert");
  Variable w(constant({0.1f, -2.5f}), "w");
  Checkpoint{{"w", w}}.save(dir.file("f32"));
  Variable half(cast(zeros({2}), DType::BFloat16), "w");
  Checkpoint into_half{{"w", half}};
  EXPECT_ERROR(into_half.restore(dir.file("f32")), InvalidArgumentError, "dtype float32", "bfloat16",
               "convert_dtypes");
  EXPECT_EQ(half.value().to_vector<float>(), (std::vector<float>{0.f, 0.f}));  // unchanged
  into_half.restore(dir.file("f32"), {.convert_dtypes = true});
  EXPECT_EQ(half.dtype(), DType::BFloat16);
  EXPECT_EQ(half.value().to_vector<float>(), cast(w.value(), DType::BFloat16).to_vector<float>());
  Variable ints(constant({1, 2}), "w");
  Checkpoint into_ints{{"w", ints}};
  const io::RestoreOptions convert{.convert_dtypes = true};
  EXPECT_ERROR(into_ints.restore(dir.file("f32"), convert), InvalidArgumentError, "int32");
}

TEST(CheckpointTest, OptimizerStateOfAnUntrackedVariableCannotBeSaved) {
  Net net;
  net(inputs());
  optim::Adam adam(0.01);
  train(net, adam, 1);
  Variable lone(ones({2}), "lone");
  Checkpoint ckpt{{"lone", lone}, {"optimizer", adam}};
  EXPECT_ERROR(ckpt.state(), FailedPreconditionError, "optimizer", "no object of this checkpoint tracks");
}

TEST(CheckpointTest, BadObjectNames) {
  Variable v(ones({1}));
  EXPECT_ERROR((Checkpoint{{"a/b", v}}), InvalidArgumentError, "a/b");
  EXPECT_ERROR((Checkpoint{{"", v}}), InvalidArgumentError, "non-empty");
  EXPECT_ERROR((Checkpoint{{"v", v}, {"v", v}}), InvalidArgumentError, "two objects");
}

TEST(CheckpointManagerTest, KeepsTheNewestAndContinuesNumbering) {
  TempDir dir("manager");
  Variable v(constant(0.0f), "v");
  Checkpoint ckpt{{"v", v}};
  const std::string folder = (dir.path() / "run").string();  // created by the manager
  io::CheckpointManager manager(ckpt, folder, 2);
  EXPECT_FALSE(manager.latest_checkpoint().has_value());
  for (int i = 1; i <= 4; ++i) {
    v.assign(constant(static_cast<float>(i)));
    EXPECT_EQ(manager.save(), folder + "/ckpt-" + std::to_string(i) + ".safetensors");
  }
  EXPECT_EQ(manager.checkpoints(), (std::vector<std::string>{folder + "/ckpt-3.safetensors", folder + "/ckpt-4.safetensors"}));
  ASSERT_TRUE(manager.latest_checkpoint().has_value());
  v.assign(constant(0.0f));
  ckpt.restore(*manager.latest_checkpoint());
  EXPECT_EQ(v.value().item<float>(), 4.0f);

  // Other files in the folder are not checkpoints; a new manager continues at 5.
  write_bytes(folder + "/ckpt-x.safetensors", {1});
  write_bytes(folder + "/.ckpt-9.safetensors.tmp-123-0", {1});
  write_bytes(folder + "/ckpt-10.safetensors.bak", {1});
  io::CheckpointManager again(ckpt, folder, 0);
  EXPECT_EQ(again.save(), folder + "/ckpt-5.safetensors");
  EXPECT_EQ(again.checkpoints().size(), 3u);  // max_to_keep 0 keeps all
  EXPECT_ERROR(io::CheckpointManager(ckpt, folder, -1), InvalidArgumentError, "max_to_keep");
}

}  // namespace
}  // namespace ef::testing

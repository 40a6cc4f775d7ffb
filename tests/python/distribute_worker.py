"""One rank of the multi-process tests in test_distribute.py (run under mpirun).

Each check raises on failure: ef.distribute then ends the job naming this rank, and
the test sees a failed mpirun. Prints "rank R ok" at the end.
"""
import os
import shutil
import sys
import tempfile

import numpy as np

import eagerflow as ef

ROWS_PER_RANK, STEPS = 4, 3


def check_collectives(r, n):
    x = ef.constant([1.0, 2.0]) * (r + 1)
    total = n * (n + 1) / 2
    np.testing.assert_array_equal(ef.distribute.all_reduce(x).numpy(), [total, 2 * total])
    np.testing.assert_array_equal(ef.distribute.all_reduce(x, op="mean").numpy(), [total / n, 2 * total / n])
    np.testing.assert_array_equal(ef.distribute.all_reduce(x, op="max").numpy(), [n, 2 * n])
    np.testing.assert_array_equal(ef.distribute.broadcast(np.full(3, r, np.int64), root=n - 1).numpy(), [n - 1] * 3)
    gathered = ef.distribute.all_gather(ef.fill([1, 2], float(r)))
    np.testing.assert_array_equal(gathered.numpy(), np.repeat(np.arange(n, dtype=np.float32), 2).reshape(n, 2))
    scattered = ef.distribute.reduce_scatter(np.arange(2 * n, dtype=np.float64))
    np.testing.assert_array_equal(scattered.numpy(), [2 * r * n, (2 * r + 1) * n])
    ef.distribute.barrier()


def check_gradient(r, n):
    x = ef.constant([1.0, 2.0], dtype=ef.float64) + r
    with ef.GradientTape() as tape:
        tape.watch(x)
        loss = ef.reduce_sum(ef.distribute.all_reduce(x * x))
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), 2 * x.numpy() * n)


def check_disagreement(r):
    x = ef.ones([2]) if r == 0 else ef.ones([3])
    try:
        ef.distribute.all_reduce(x)
    except ef.errors.InvalidArgumentError as e:
        assert "disagree" in str(e) and "ranks 0: all_reduce(sum) float32 [2]" in str(e), str(e)
    else:
        raise AssertionError("ranks with different shapes got no error")


def mlp_loss(w, x, y):
    hidden = ef.tanh(ef.matmul(x, w[0]) + w[1])
    return ef.reduce_mean(ef.square(ef.matmul(hidden, w[2]) + w[3] - y))


def train(initial, make_optimizer, x, y, rows, average):
    w = [ef.Variable(a) for a in initial]
    optimizer = make_optimizer()
    for _ in range(STEPS):
        with ef.GradientTape() as tape:
            loss = mlp_loss(w, x[rows], y[rows])
        grads = tape.gradient(loss, w)
        if average == "fused":
            grads = ef.distribute.all_reduce_many(grads, op="mean")
        elif average:
            grads = [ef.distribute.all_reduce(g, op="mean") for g in grads]
        optimizer.apply_gradients(zip(grads, w))
    return [v.numpy() for v in w]


def check_data_parallel(r, n):
    """n ranks with batch B and averaged gradients end where one process with batch n*B does."""
    for dtype, tolerance in ((np.float64, 1e-10), (np.float32, 1e-5)):
        for make_optimizer in (lambda: ef.optimizers.SGD(0.1, momentum=0.9), lambda: ef.optimizers.Adam(0.01)):
            rng = np.random.default_rng(0)  # the same draws on every rank
            initial = [rng.normal(0, 0.5, s).astype(dtype) for s in ((3, 8), (8,), (8, 1), (1,))]
            x = rng.standard_normal((n * ROWS_PER_RANK, 3)).astype(dtype)
            y = rng.standard_normal((n * ROWS_PER_RANK, 1)).astype(dtype)
            one = train(initial, make_optimizer, x, y, slice(None), average=False)
            mine = slice(r * ROWS_PER_RANK, (r + 1) * ROWS_PER_RANK)
            for average in (True, "fused"):
                parallel = train(initial, make_optimizer, x, y, mine, average=average)
                for a, b, start in zip(one, parallel, initial):
                    np.testing.assert_allclose(b, a, rtol=0, atol=tolerance)
                    assert np.abs(a - start).max() > 1e-3  # training moved the weights


def check_strategy(r, n):
    strategy = ef.distribute.MultiWorkerMirroredStrategy(timeout=60)
    assert strategy.num_replicas_in_sync == n
    with strategy.scope():
        w = ef.Variable(np.full(3, float(r)))
        layer = ef.keras.layers.Dense(4)
        layer.build((None, 3))  # random initial kernel: rank 0's on every rank
    np.testing.assert_array_equal(w.numpy(), [0.0] * 3)
    kernel = layer.kernel.value()
    spread = ef.distribute.all_reduce(kernel, op="max") - ef.distribute.all_reduce(kernel, op="min")
    assert np.abs(spread.numpy()).max() == 0
    assert ef.Variable(np.full(3, float(r))).numpy()[0] == r  # outside the scope: not mirrored
    shard = list(strategy.experimental_distribute_dataset(range(2 * n + 1)))
    assert shard == [r, n + r], shard
    x = ef.constant([[1.0], [2.0]]) * (r + 1)  # a batch of 2 per replica
    total = 3 * n * (n + 1) / 2
    np.testing.assert_allclose(strategy.reduce(ef.distribute.ReduceOp.SUM, x, axis=0).numpy(), [total])
    np.testing.assert_allclose(strategy.reduce(ef.distribute.ReduceOp.MEAN, x, axis=0).numpy(), [total / (2 * n)])
    np.testing.assert_allclose(strategy.run(lambda a: a * 2, args=(x,)).numpy(), x.numpy() * 2)


def make_model():
    return ef.keras.Sequential([ef.keras.layers.Dense(8, activation="tanh"), ef.keras.layers.Dense(1)])


def same_data(n, seed):
    rng = np.random.default_rng(seed)  # the same draws on every rank
    x = rng.standard_normal((n * ROWS_PER_RANK, 3)).astype(np.float32)
    return x, (x.sum(axis=1, keepdims=True) ** 2).astype(np.float32)


def single_process_copy(variables):
    """A model holding these values, trained alone on the whole batch as the reference."""
    model = make_model()
    model(np.zeros((1, 3), np.float32))
    for v, value in zip(model.trainable_variables, variables):
        v.assign(value.numpy())
    return model


def train_step(model, optimizer, x, y, loss_of):
    with ef.GradientTape() as tape:
        loss = loss_of(model(x), y)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def mse(prediction, y):
    return ef.reduce_mean(ef.square(prediction - y))


def expect_same_weights(a, b, start):
    for u, v, s in zip(a.trainable_variables, b.trainable_variables, start):
        np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=0, atol=1e-5)
        assert np.abs(u.numpy() - s).max() > 1e-4  # training moved the weights


def check_ddp(r, n):
    """DataParallel: the replicas of a lazily built Keras model train as one process on the whole batch."""
    x, y = same_data(n, 1)
    mine = slice(r * ROWS_PER_RANK, (r + 1) * ROWS_PER_RANK)
    ddp = ef.distribute.DataParallel(make_model(), bucket_cap_mb=1e-6)  # a bucket per variable
    ddp(x[mine])  # builds the model: rank 0's initial weights everywhere
    start = [v.numpy() for v in ddp.trainable_variables]
    spread = [ef.distribute.all_reduce(v.value(), op="max") - ef.distribute.all_reduce(v.value(), op="min")
              for v in ddp.trainable_variables]
    assert max(np.abs(s.numpy()).max() for s in spread) == 0
    single = single_process_copy(ddp.trainable_variables)
    ddp_optimizer, single_optimizer = ef.optimizers.Adam(0.01), ef.optimizers.Adam(0.01)
    for _ in range(STEPS):
        train_step(ddp, ddp_optimizer, x[mine], y[mine], mse)
        train_step(single, single_optimizer, x, y, mse)
    expect_same_weights(ddp, single, start)
    assert ddp.last_stats()["buckets"] == 4, ddp.last_stats()
    assert ddp.layers[0].units == 8  # other attributes are the model's


def check_strategy_run(r, n):
    """TensorFlow's custom loop: strategy.run sums the replicas' gradients, the loss is
    divided by the global batch size; eagerly and inside ef.function."""
    x, y = same_data(n, 2)
    mine = slice(r * ROWS_PER_RANK, (r + 1) * ROWS_PER_RANK)
    strategy = ef.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        model = make_model()
        model(x[:1])
    start = [v.numpy() for v in model.trainable_variables]
    single = single_process_copy(model.trainable_variables)
    optimizer, single_optimizer = ef.optimizers.SGD(0.05, momentum=0.9), ef.optimizers.SGD(0.05, momentum=0.9)

    def replica_loss(prediction, labels):
        return ef.nn.compute_average_loss(ef.square(prediction - labels)[:, 0])

    def step(xb, yb):
        return train_step(model, optimizer, xb, yb, replica_loss)

    traced = ef.function(lambda xb, yb: strategy.run(step, args=(xb, yb)))
    for i in range(STEPS):
        run = strategy.run if i % 2 == 0 else lambda _, args: traced(*args)
        loss = strategy.reduce(ef.distribute.ReduceOp.SUM, run(step, args=(ef.constant(x[mine]), ef.constant(y[mine]))))
        single_loss = train_step(single, single_optimizer, x, y, mse)
        np.testing.assert_allclose(float(loss), float(single_loss), rtol=1e-5)
    expect_same_weights(model, single, start)


def check_keras_fit(r, n):
    """model.fit under the strategy: n replicas end where one process with the whole batch
    does, with the same History (loss, metrics and validation, over all replicas)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((10 * 4 * n, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5], np.float32) > 0).astype(np.int64)

    def compiled_model():
        model = ef.keras.Sequential([ef.keras.layers.Dense(8, activation="tanh"), ef.keras.layers.Dense(2)])
        model.compile(optimizer=ef.optimizers.Adam(0.02), metrics=["accuracy"],
                      loss=ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model

    strategy = ef.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        replicas = compiled_model()
        replicas(x[:1])
    assert replicas.distribute_strategy is strategy
    single = compiled_model()
    single(x[:1])
    single.set_weights(replicas.get_weights())
    options = dict(batch_size=4 * n, epochs=2, verbose=0, shuffle=False, validation_split=0.25)
    got = replicas.fit(x, y, **options).history
    want = single.fit(x, y, **options).history
    for name in ("loss", "accuracy", "val_loss", "val_accuracy"):
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)
    for a, b in zip(replicas.get_weights(), single.get_weights()):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
    try:
        replicas.fit(x, y, batch_size=4 * n + 1, verbose=0)
    except ef.errors.InvalidArgumentError as e:
        assert "is the global batch and must be a positive multiple" in str(e), str(e)
    else:
        raise AssertionError("a batch_size that does not divide got no error")


def check_checkpoints(r, n):
    """Under the strategy rank 0 writes each checkpoint (the others wait), every rank gets
    its path and restores from it."""
    token = int(ef.distribute.broadcast(ef.constant(np.random.default_rng().integers(1 << 40)), root=0))
    directory = os.path.join(tempfile.gettempdir(), f"eagerflow-distributed-checkpoints-{token}")
    with ef.distribute.MultiWorkerMirroredStrategy().scope():
        model = make_model()
        model(np.ones((1, 3), np.float32))
    manager = ef.train.CheckpointManager(ef.train.Checkpoint(model=model), directory, max_to_keep=2)
    saved = None
    for step in range(3):
        model.trainable_variables[0].assign_add(np.ones(model.trainable_variables[0].shape, np.float32))
        path = manager.save()
        assert os.path.basename(path) == f"ckpt-{step + 1}.safetensors", path
        saved = [v.numpy() for v in model.trainable_variables]
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-2.safetensors", "ckpt-3.safetensors"]
    for v in model.trainable_variables:
        v.assign(np.zeros(v.shape, np.float32))
    ef.train.Checkpoint(model=model).restore(manager.latest_checkpoint)
    for v, want in zip(model.trainable_variables, saved):
        np.testing.assert_array_equal(v.numpy(), want)
    ef.distribute.barrier()
    if r == 0:
        shutil.rmtree(directory)


def check_sync_batch_normalization(r, n):
    """Each rank's shard is normalized, and differentiated, as one BatchNormalization
    normalizes the whole batch (torch.nn.SyncBatchNorm's promise)."""
    x = np.random.default_rng(9).normal(2.0, 3.0, size=(4 * n, 3))
    weights = np.random.default_rng(10).normal(size=(4 * n, 3))

    def output_and_gradients(layer, rows):
        inputs = ef.constant(x[rows])
        with ef.GradientTape() as tape:
            tape.watch(inputs)
            loss = ef.reduce_sum(layer(inputs, training=True) * weights[rows])
        return [t.numpy() for t in tape.gradient(loss, [inputs] + layer.trainable_variables)]

    whole = output_and_gradients(ef.keras.layers.BatchNormalization(momentum=0.5), slice(None))
    mine = slice(4 * r, 4 * r + 4)
    synced = ef.keras.layers.experimental.SyncBatchNormalization(momentum=0.5)
    dinput, dgamma, dbeta = output_and_gradients(synced, mine)
    np.testing.assert_allclose(dinput, whole[0][mine], rtol=1e-12, atol=1e-12)
    for got, want in ((dgamma, whole[1]), (dbeta, whole[2])):
        np.testing.assert_allclose(ef.distribute.all_reduce(ef.constant(got)).numpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(synced.moving_mean.numpy(), 0.5 * x.mean(0), rtol=1e-12)


def main():
    ef.distribute.init(timeout=60)
    r, n = ef.distribute.rank(), ef.distribute.size()
    assert n > 1, "run under mpirun with two or more ranks"
    check_collectives(r, n)
    check_gradient(r, n)
    check_disagreement(r)
    check_data_parallel(r, n)
    check_strategy(r, n)
    check_ddp(r, n)
    check_strategy_run(r, n)
    check_keras_fit(r, n)
    check_checkpoints(r, n)
    check_sync_batch_normalization(r, n)
    if len(sys.argv) > 1 and sys.argv[1] == "raise" and r == 1:
        raise RuntimeError("rank 1 could not read its shard")
    ef.distribute.barrier()
    print(f"rank {r} ok", flush=True)


if __name__ == "__main__":
    main()

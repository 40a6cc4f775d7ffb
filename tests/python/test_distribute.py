"""ef.distribute: a group of one in this process, and several ranks under mpirun
(distribute_worker.py), skipping with the reason where MPI is missing."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import eagerflow as ef

HERE = os.path.dirname(os.path.abspath(__file__))
BUILT = getattr(ef._core, "distribute", None) is not None
needs_build = pytest.mark.skipif(not BUILT, reason="eagerflow was built without MPI (libopenmpi-dev)")
LAUNCHED = any(v in os.environ for v in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"))


@needs_build
@pytest.mark.skipif(LAUNCHED, reason="this test runs outside a launcher")
def test_a_plain_process_is_a_group_of_one():
    ef.distribute.init()
    assert (ef.distribute.rank(), ef.distribute.size(), ef.distribute.local_rank()) == (0, 0 + 1, 0)
    x = ef.constant([[1.0, 2.0]])
    for op in ("sum", "mean", "max", "min"):
        np.testing.assert_array_equal(ef.distribute.all_reduce(x, op=op).numpy(), [[1.0, 2.0]])
    np.testing.assert_array_equal(ef.distribute.broadcast(x).numpy(), x.numpy())
    np.testing.assert_array_equal(ef.distribute.all_gather(x).numpy(), x.numpy())
    np.testing.assert_array_equal(ef.distribute.reduce_scatter(x).numpy(), x.numpy())
    ef.distribute.barrier()
    fused = ef.distribute.all_reduce_many([x, None, np.arange(3)], op="max")
    np.testing.assert_array_equal(fused[0].numpy(), x.numpy())
    assert fused[1] is None
    np.testing.assert_array_equal(fused[2].numpy(), [0, 1, 2])


@needs_build
def test_collectives_in_functions_and_tapes():
    ef.distribute.init()
    n = ef.distribute.size()

    @ef.function
    def summed(x):
        return ef.distribute.all_reduce(x * 2.0)

    np.testing.assert_array_equal(summed(ef.constant([1.0, 3.0])).numpy(), [2.0 * n, 6.0 * n])
    x = ef.constant([1.0, 2.0])
    with ef.GradientTape() as tape:
        tape.watch(x)
        y = ef.reduce_sum(ef.distribute.all_reduce(x, op="mean") * 3.0)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 3.0])


@needs_build
def test_init_again_changes_only_the_options_given():
    ef.distribute.init(timeout=30)
    ef.distribute.MultiWorkerMirroredStrategy()
    ef.distribute.init(check_agreement=False)
    assert (ef.distribute._d.timeout(), ef.distribute._d.check_agreement()) == (30, False)
    ef.distribute.init(timeout=300, check_agreement=True)
    with pytest.raises(ef.errors.InvalidArgumentError, match="timeout_seconds must be positive"):
        ef.distribute.init(timeout=0)


@needs_build
def test_bad_arguments_name_the_op():
    ef.distribute.init()
    with pytest.raises(ef.errors.InvalidArgumentError, match="avg.*sum, mean, max, min"):
        ef.distribute.all_reduce(ef.ones([2]), op="avg")
    with pytest.raises(ef.errors.InvalidArgumentError, match="all_reduce: reduction 'mean' needs a floating dtype"):
        ef.distribute.all_reduce(ef.constant([1, 2]), op="mean")
    with pytest.raises(ef.errors.InvalidArgumentError, match="all_gather.*scalar"):
        ef.distribute.all_gather(ef.constant(1.0))
    with pytest.raises(ef.errors.InvalidArgumentError, match="broadcast: root 5"):
        ef.distribute.broadcast(ef.ones([2]), root=5)


@needs_build
def test_strategy_in_one_process():
    strategy = ef.distribute.MultiWorkerMirroredStrategy()
    n = strategy.num_replicas_in_sync
    with strategy.scope():
        w = ef.Variable([1.0, 2.0])
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    if n == 1:
        assert list(strategy.experimental_distribute_dataset([3, 4, 5])) == [3, 4, 5]
    x = ef.constant([[1.0], [3.0]])
    np.testing.assert_allclose(strategy.reduce(ef.distribute.ReduceOp.MEAN, x, axis=0).numpy(), [2.0])
    with pytest.raises(ef.errors.InvalidArgumentError, match="ReduceOp.SUM or ReduceOp.MEAN"):
        strategy.reduce("max", x)


@needs_build
def test_gradient_sync_data_parallel_and_run_in_one_process():
    ef.distribute.init()
    n = ef.distribute.size()
    w = ef.Variable([1.0, 2.0])
    with ef.distribute.GradientSync([w], op="sum") as sync:
        with ef.GradientTape() as tape:
            loss = ef.reduce_sum(w * w)
        np.testing.assert_allclose(tape.gradient(loss, w).numpy(), [2.0 * n, 4.0 * n])
        assert sync.last_stats()["buckets"] == 1
    with ef.GradientTape() as tape:  # closed: the plain gradient
        loss = ef.reduce_sum(w * w)
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), [2.0, 4.0])
    with pytest.raises(ef.errors.InvalidArgumentError, match="op must be 'mean' or 'sum'"):
        ef.distribute.GradientSync([w], op="max")
    with pytest.raises(ef.errors.InvalidArgumentError, match="bucket_cap_mb must be positive"):
        ef.distribute.GradientSync([w], bucket_cap_mb=0)

    model = ef.distribute.DataParallel(ef.keras.layers.Dense(2))
    with ef.GradientTape() as tape:
        loss = ef.reduce_sum(model(ef.ones([3, 4])))
    grads = tape.gradient(loss, model.trainable_variables)
    np.testing.assert_allclose(grads[0].numpy(), np.full((4, 2), 3.0))
    assert model.units == 2

    strategy = ef.distribute.MultiWorkerMirroredStrategy()
    assert not ef.distribute.in_replica_context()

    def step():
        assert ef.distribute.in_replica_context()
        with ef.GradientTape() as tape:
            loss = ef.nn.compute_average_loss(ef.square(w) * 1.0)
        return tape.gradient(loss, w)

    np.testing.assert_allclose(strategy.run(step).numpy(), [1.0, 2.0])  # (2 w / (2 n)) summed over n


@needs_build
def test_keras_fit_under_the_strategy_in_one_process():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 3)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)

    def compiled():
        model = ef.keras.Sequential([ef.keras.layers.Dense(4, activation="tanh"), ef.keras.layers.Dense(2)])
        model.compile(optimizer=ef.optimizers.SGD(0.1), metrics=["accuracy"],
                      loss=ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        model(x[:1])
        return model

    strategy = ef.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope() as entered:
        assert entered is strategy
        replicated = compiled()
    plain = compiled()
    plain.set_weights(replicated.get_weights())
    assert replicated.distribute_strategy is strategy and plain.distribute_strategy is None
    options = dict(batch_size=8 * strategy.num_replicas_in_sync, epochs=2, verbose=0, shuffle=False,
                   validation_split=0.2)
    got, want = replicated.fit(x, y, **options).history, plain.fit(x, y, **options).history
    for name in ("loss", "accuracy", "val_loss", "val_accuracy"):
        np.testing.assert_allclose(got[name], want[name], rtol=1e-6, err_msg=name)
    batches = ef.data.Dataset.from_tensor_slices((x, y)).batch(8 * strategy.num_replicas_in_sync)
    got = replicated.fit(batches, epochs=1, verbose=0).history
    want = plain.fit(batches, epochs=1, verbose=0).history
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-6)


def test_compute_average_loss():
    np.testing.assert_allclose(float(ef.nn.compute_average_loss([1.0, 2.0, 3.0], sample_weight=[1.0, 0.0, 2.0])),
                               7.0 / 3)
    np.testing.assert_allclose(float(ef.nn.compute_average_loss(np.ones((2, 3)), global_batch_size=4)), 1.5)
    with pytest.raises(ef.errors.InvalidArgumentError, match="scalar; give global_batch_size"):
        ef.nn.compute_average_loss(ef.constant(1.0))
    with pytest.raises(ef.errors.InvalidArgumentError, match="must be a float tensor"):
        ef.nn.compute_average_loss([1, 2])
    with pytest.raises(ef.errors.InvalidArgumentError, match="global_batch_size must be positive"):
        ef.nn.compute_average_loss([1.0], global_batch_size=0)


def _mpirun(ranks, *args):
    mpirun = shutil.which("mpirun")
    if mpirun is None or not BUILT:
        pytest.skip("mpirun or eagerflow's MPI library is missing (install openmpi-bin, libopenmpi-dev)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    command = [mpirun, "--oversubscribe", "--allow-run-as-root", "-np", str(ranks), "-x", "PYTHONPATH",
               sys.executable, os.path.join(HERE, "distribute_worker.py"), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("ranks", [2, 4])
def test_ranks_agree_with_one_process(ranks):
    result = _mpirun(ranks)
    assert result.returncode == 0, result.stdout + result.stderr
    # mpirun forwards each rank's output as it comes: the lines may interleave.
    assert all(f"rank {r} ok" in result.stdout for r in range(ranks)), result.stdout


def test_an_uncaught_exception_ends_the_job_naming_the_rank():
    result = _mpirun(2, "raise")
    assert result.returncode != 0
    assert "rank 1 of 2: uncaught RuntimeError: rank 1 could not read its shard" in result.stderr, result.stderr

"""Model (a Layer made of layers that trains itself: compile / fit / evaluate / predict)
and Sequential. The training loop is C++'s (eagerflow/nn/model.h); this file turns
Keras' names and arguments into it.

    model = ef.keras.Sequential([ef.keras.layers.Dense(64, activation="relu"),
                                 ef.keras.layers.Dense(10)])
    model.compile(optimizer="adam",
                  loss=ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(x, y, epochs=5, validation_split=0.1)
    print(history.history["val_accuracy"])

fit runs its training step as an ef.function (run_eagerly=True: eagerly); subclasses
customise a step by overriding train_step(data) / test_step(data), which return a dict
of metric results.
"""
import sys

from eagerflow import _core, errors
from eagerflow import module as _module  # noqa: F401  (installs attribute tracking)
from eagerflow import optimizers as _optimizers
from eagerflow.keras import losses as _losses
from eagerflow.keras import metrics as _metrics

_OPTIMIZERS = {"sgd": _optimizers.SGD, "adam": _optimizers.Adam, "adamw": _optimizers.AdamW,
               "rmsprop": _optimizers.RMSprop, "adagrad": _optimizers.Adagrad}
_LOSSES = {
    "mse": _losses.MeanSquaredError, "mean_squared_error": _losses.MeanSquaredError,
    "mae": _losses.MeanAbsoluteError, "mean_absolute_error": _losses.MeanAbsoluteError,
    "binary_crossentropy": _losses.BinaryCrossentropy,
    "categorical_crossentropy": _losses.CategoricalCrossentropy,
    "sparse_categorical_crossentropy": _losses.SparseCategoricalCrossentropy,
    "huber": _losses.Huber, "kl_divergence": _losses.KLDivergence, "kld": _losses.KLDivergence,
    "poisson": _losses.Poisson, "log_cosh": _losses.LogCosh, "cosine_similarity": _losses.CosineSimilarity,
}


def _by_name(table, name, what):
    try:
        return table[name.lower()]()
    except KeyError:
        raise errors.InvalidArgumentError(
            f"compile: unknown {what} {name!r}; known: {', '.join(sorted(table))}") from None


def _optimizer_of(optimizer):
    if isinstance(optimizer, str):
        return _by_name(_OPTIMIZERS, optimizer, "optimizer")
    if not isinstance(optimizer, _core.Optimizer):
        raise TypeError(f"compile: optimizer must be a name or an ef.optimizers optimizer, got {type(optimizer).__name__}")
    return optimizer


def _loss_of(loss):
    if isinstance(loss, _core.keras.losses.Loss):
        return loss
    if isinstance(loss, str):
        return _by_name(_LOSSES, loss, "loss")
    if callable(loss):  # a function (y_true, y_pred) -> per-example losses
        return _core.keras.losses._FunctionLoss(getattr(loss, "__name__", "loss"), loss)
    raise TypeError(f"compile: loss must be a name, a Loss or a function, got {type(loss).__name__}")


def _metric_of(metric, loss):
    if isinstance(metric, _core.keras.metrics.Metric):
        return metric
    if metric in ("accuracy", "acc"):
        # Keras picks the accuracy that fits the loss, and names it as the user did.
        if isinstance(loss, _losses.SparseCategoricalCrossentropy):
            return _metrics.SparseCategoricalAccuracy(name=metric)
        if isinstance(loss, _losses.CategoricalCrossentropy):
            return _metrics.CategoricalAccuracy(name=metric)
        if isinstance(loss, _losses.BinaryCrossentropy):
            return _metrics.BinaryAccuracy(name=metric)
        return _metrics.Accuracy(name=metric)
    named = {"sparse_categorical_accuracy": _metrics.SparseCategoricalAccuracy,
             "categorical_accuracy": _metrics.CategoricalAccuracy,
             "binary_accuracy": _metrics.BinaryAccuracy,
             "mse": _metrics.MeanSquaredError, "mean_squared_error": _metrics.MeanSquaredError,
             "mae": _metrics.MeanAbsoluteError, "mean_absolute_error": _metrics.MeanAbsoluteError,
             "top_k_categorical_accuracy": _metrics.TopKCategoricalAccuracy,
             "sparse_top_k_categorical_accuracy": _metrics.SparseTopKCategoricalAccuracy,
             "rmse": _metrics.RootMeanSquaredError, "root_mean_squared_error": _metrics.RootMeanSquaredError,
             "precision": _metrics.Precision, "recall": _metrics.Recall, "auc": _metrics.AUC}
    if isinstance(metric, str) and metric in named:
        return named[metric](name=metric)
    raise errors.InvalidArgumentError(
        f"compile: unknown metric {metric!r}; give 'accuracy', a metric name such as "
        "'sparse_categorical_accuracy', or a metric object")


class History:
    """What fit returns: `history` maps each log name to its value per epoch."""

    def __init__(self, core, model):
        self.history = {k: list(v) for k, v in core.history.items()}
        self.epoch = list(core.epoch)
        self.model = model


def _dataset_parts(x):
    """The raw C++ dataset of an ef.data.Dataset, else None."""
    from eagerflow import data
    return x._raw if isinstance(x, data.Dataset) else None


def _per_output(value, names, what):
    """A compile argument given per output (a list in order, or a dict by output name)
    as a list; None when it is one value for every output."""
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise errors.InvalidArgumentError(f"compile: {what} for unknown outputs {unknown}; the outputs are {names}")
        missing = [n for n in names if n not in value]
        if missing and what == "losses":
            raise errors.InvalidArgumentError(f"compile: no loss for the outputs {missing}")
        return [value.get(n) for n in names]
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise errors.InvalidArgumentError(
                f"compile: {len(value)} {what} for the {len(names)} outputs {names}")
        return list(value)
    return None


def _output_metrics(metrics, losses, names):
    """The metrics of each output: a dict by output name or a list of lists as given; a flat
    list of names applies to every output (a fresh metric each, as Keras)."""
    if not metrics:
        return [[] for _ in names]
    if isinstance(metrics, dict) or any(isinstance(m, (list, tuple)) for m in metrics):
        per = _per_output(metrics, names, "metric lists")
        lists = [[] if m is None else list(m) if isinstance(m, (list, tuple)) else [m] for m in per]
    else:
        for m in metrics:
            if isinstance(m, _core.keras.metrics.Metric):
                raise errors.InvalidArgumentError(
                    "compile: a metric object cannot serve several outputs (it keeps one state); give "
                    "metrics by name, or per output as a dict {output_name: [...]} or a list of lists")
        lists = [list(metrics) for _ in names]
    return [[_metric_of(m, loss) for m in ms] for ms, loss in zip(lists, losses)]


class _Training:
    """compile / fit / evaluate / predict for Model and Sequential."""

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, weighted_metrics=None,
                run_eagerly=None, jit_compile=None):
        """Sets the optimizer, loss and metrics (names or objects). The training step runs
        as an ef.function unless run_eagerly.

        As in Keras, `metrics` ignore sample_weight and class_weight; `weighted_metrics`
        are weighted by them (logged as "weighted_<name>" where a metric has the name).

        A model of several outputs takes a loss for all or one per output (a list, or a
        dict by output name: model.output_names), loss_weights the same way, and metrics
        and weighted_metrics as a list for every output or per output (a dict or a list of
        lists); its logs name them "<output>_loss", "<output>_<metric>"."""
        if loss is None:
            raise errors.InvalidArgumentError("compile: no loss given")
        from eagerflow import distribute
        # Compiled under MultiWorkerMirroredStrategy.scope(): fit trains the replicas as one.
        self._distribute_strategy = distribute._current_strategy()
        names = self.output_names if self._output_count > 1 else None
        per_output = names is not None or isinstance(loss, (list, tuple, dict)) or isinstance(metrics, dict) \
            or isinstance(weighted_metrics, dict) or loss_weights is not None
        if not per_output:
            loss = _loss_of(loss)
            self._compile(_optimizer_of(optimizer), loss, [_metric_of(m, loss) for m in (metrics or [])],
                          bool(run_eagerly), bool(jit_compile), [], [], [],
                          [_metric_of(m, loss) for m in (weighted_metrics or [])], [])
            return
        names = self.output_names
        losses = _per_output(loss, names, "losses")
        losses = [_loss_of(x) for x in losses] if losses is not None else [_loss_of(loss)] * len(names)
        weights = _per_output(loss_weights, names, "loss weights") if loss_weights is not None else []
        if weights is None:
            raise errors.InvalidArgumentError("compile: loss_weights must be a list or a dict by output name")
        weights = [1.0 if w is None else float(w) for w in weights]
        output_metrics = _output_metrics(metrics, losses, names)
        output_weighted_metrics = _output_metrics(weighted_metrics, losses, names)
        if len(names) == 1:  # one output: its metrics keep their own names
            self._compile(_optimizer_of(optimizer), losses[0], output_metrics[0], bool(run_eagerly),
                          bool(jit_compile), [], weights, [], output_weighted_metrics[0], [])
            return
        self._compile(_optimizer_of(optimizer), None, [], bool(run_eagerly), bool(jit_compile), losses, weights,
                      output_metrics, [], output_weighted_metrics)

    def _flat(self, value, count, names, what):
        """x or y as the list of tensors the C++ model takes: one value for a model of one
        input (output), else a list in order or a dict by name."""
        if count == 1:
            if isinstance(value, dict) and len(value) == 1:
                return list(value.values())
            # [x] with x an array or tensor (Keras takes it); any other list is the data itself.
            if isinstance(value, (list, tuple)) and len(value) == 1 and hasattr(value[0], "shape"):
                return [value[0]]
            return [value]
        if isinstance(value, dict):
            unknown = sorted(set(value) - set(names))
            if unknown or len(value) != len(names):
                raise errors.InvalidArgumentError(
                    f"model '{self.name}': {what} by name must give exactly {names}, got {sorted(value)}")
            return [value[n] for n in names]
        if not isinstance(value, (list, tuple)) or len(value) != count:
            got = len(value) if isinstance(value, (list, tuple)) else 1
            raise errors.InvalidArgumentError(
                f"model '{self.name}' takes {count} {what} tensors (a list, or a dict by {names}), got {got}")
        return list(value)

    def _input_names(self):
        return [t.name for t in self._inputs] if hasattr(self, "_inputs") else ["input"]

    def _flat_xy(self, x, y):
        return (self._flat(x, self._input_count, self._input_names(), "x"),
                self._flat(y, self._output_count, self.output_names, "y"))

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None, sample_weight=None,
            initial_epoch=0, steps_per_epoch=None, seed=None):
        """Trains on arrays or tensors x, y (batches of batch_size, 32 by default) or on an
        ef.data.Dataset of (x, y) / (x, y, sample_weight) batches. Returns a History."""
        dataset = _dataset_parts(x)
        if dataset is None and (x is None or y is None):
            raise errors.InvalidArgumentError("fit: give x and y, or a Dataset as x")
        validation_dataset = _dataset_parts(validation_data)
        if validation_dataset is not None:
            validation_data = None
        elif validation_data is not None:
            parts = list(validation_data)
            if len(parts) not in (2, 3):
                raise errors.InvalidArgumentError(
                    f"fit: validation_data must be (x, y) or (x, y, sample_weight), got {len(parts)} items")
            vx, vy = self._flat_xy(parts[0], parts[1])
            validation_data = vx + vy + parts[2:]
        if dataset is None:
            x, y = self._flat_xy(x, y)
        elif self.distribute_strategy is not None and not self.variables:
            with self.distribute_strategy.scope():  # built from rank 0's weights
                for element in x:
                    self(element[0] if isinstance(element, (tuple, list)) else element)
                    break
        sys.stdout.flush()
        core = self._fit(x if dataset is None else None, y if dataset is None else None, dataset,
                         32 if batch_size is None else batch_size, epochs, -1 if verbose == "auto" else int(verbose),
                         list(callbacks or []), validation_split, validation_data, validation_dataset, shuffle, seed,
                         initial_epoch, steps_per_epoch, sample_weight, dict(class_weight or {}),
                         self.distribute_strategy is not None)
        self.history = History(core, self)
        return self.history

    @property
    def distribute_strategy(self):
        """The MultiWorkerMirroredStrategy whose scope() the model was compiled in, or None.

        Under one, fit trains the replicas (one per process) as one model: each takes its
        share of x and y (batch_size is the global batch, a multiple of the replicas),
        gradients are averaged while the backward pass runs, and the logs are those of
        all replicas together."""
        return getattr(self, "_distribute_strategy", None)

    def evaluate(self, x=None, y=None, batch_size=None, verbose=0, sample_weight=None, callbacks=None,
                 return_dict=False):
        """The loss and metrics over the data; a list [loss, metric, ...] in compile's order,
        or a dict with return_dict. sample_weight (per example, with arrays; a Dataset gives
        (x, y, sample_weight) elements) weighs the loss and the weighted metrics."""
        dataset = _dataset_parts(x)
        if dataset is None:
            if x is None or y is None:
                raise errors.InvalidArgumentError("evaluate: give x and y, or a Dataset as x")
            x, y = self._flat_xy(x, y)
        sys.stdout.flush()
        logs = self._evaluate(x if dataset is None else None, y if dataset is None else None, dataset,
                              32 if batch_size is None else batch_size, int(verbose), list(callbacks or []),
                              sample_weight)
        return logs if return_dict else self._ordered(logs)

    def predict(self, x, batch_size=None, verbose=0, steps=None, callbacks=None):
        """The model's outputs for x, computed in batches of batch_size (32 by default) and
        concatenated. verbose, steps and callbacks are accepted for Keras' signature; no
        progress is printed."""
        del verbose, steps, callbacks
        batch_size = 32 if batch_size is None else batch_size
        if self._input_count == 1 and self._output_count == 1:
            return _core.keras.Model.predict(self, x, batch_size)
        outputs = self._predict_all(self._flat(x, self._input_count, self._input_names(), "x"), batch_size)
        return outputs[0] if len(outputs) == 1 else outputs

    def train_on_batch(self, x, y, sample_weight=None, return_dict=False):
        """Runs one training step on a single batch (no shuffling, no callbacks).

        Args:
          x: The inputs, a tensor-like.
          y: The targets, a tensor-like.
          sample_weight: None, or per-example weights.
          return_dict: If True, return a dict of name -> float.

        Returns:
          The loss, or [loss, metric, ...] in compile's order (metrics_names), as floats.
        """
        logs = self._on_batch(True, x, y, sample_weight)
        return logs if return_dict else self._ordered(logs)

    def test_on_batch(self, x, y, sample_weight=None, return_dict=False):
        """Computes the loss and metrics on a single batch, in inference mode.

        Args:
          x: The inputs, a tensor-like.
          y: The targets, a tensor-like.
          sample_weight: None, or per-example weights.
          return_dict: If True, return a dict of name -> float.

        Returns:
          The loss, or [loss, metric, ...] in compile's order (metrics_names), as floats.
        """
        logs = self._on_batch(False, x, y, sample_weight)
        return logs if return_dict else self._ordered(logs)

    def _ordered(self, logs):
        values = [logs[name] for name in self.metrics_names]
        return values[0] if len(values) == 1 else values

    def save(self, filepath):
        """Writes the architecture, the weights and (compiled) the compile settings and the
        optimizer's state into one checksummed file (Sequential and functional models;
        custom layers are saved with their get_config()). load_model reads it."""
        self._build_from_input()
        _core.keras._save_model(self, str(filepath))

    def _build_from_input(self):
        """A Sequential begun with keras.Input but not called yet: built now by one call on
        zeros, so that its file records the input shape."""
        symbolic = getattr(self, "_symbolic_input", None)
        if symbolic is None or self.built or not self._python_layers:
            return
        shape = [1] + [1 if d is None else d for d in list(symbolic.shape)[1:]]
        self(_core.zeros(shape, dtype=symbolic.dtype))

    def export(self, filepath):
        """Writes a saved model of this model's call (Keras' model.export): a directory
        that ef.saved_model.load, the C++ library and eagerflow-run load without this
        code; its "serving_default" signature takes the keras.Input tensors by name."""
        from eagerflow import saved_model
        saved_model.save(self, filepath)

    def save_weights(self, filepath):
        """The weights alone, as a checkpoint (any model)."""
        from eagerflow import train
        return train.Checkpoint(model=self).save(str(filepath))

    def load_weights(self, filepath):
        """Restores weights written by save_weights into this (built) model."""
        from eagerflow import train
        return train.Checkpoint(model=self).restore(str(filepath))

    def summary(self, line_length=72, print_fn=None):
        """Prints Keras' table of layers, output shapes and parameter counts."""
        self._build_from_input()
        (print_fn or print)(self._summary(line_length).rstrip("\n"))


class _ModelType(type(_core.keras.Model)):
    # Functional and Sequential models are keras.Models too (isinstance), as in Keras,
    # although their C++ classes are not the subclassing trampoline.
    def __instancecheck__(cls, obj):
        return type.__instancecheck__(cls, obj) or (cls is Model and isinstance(obj, (Functional, Sequential)))


class Model(_Training, _core.keras.Model, metaclass=_ModelType):
    """Subclass it: define the layers in __init__ and the computation in call(inputs,
    training=False); compile and fit it. Override train_step / test_step to change one step.

    Or build it from the functional API: Model(inputs, outputs) with keras.Input and
    layers called on it gives a Functional model (see Functional).
    """

    def __new__(cls, *args, **kwargs):
        if cls is Model and (len(args) >= 2 or "inputs" in kwargs or "outputs" in kwargs):
            return Functional(*args, **kwargs)
        return super().__new__(cls)


def _as_list(tensors, what):
    if isinstance(tensors, _core.keras.KerasTensor):
        return [tensors], True
    if isinstance(tensors, (list, tuple)) and tensors:
        for t in tensors:
            if not isinstance(t, _core.keras.KerasTensor):
                raise TypeError(f"Model: {what} must be KerasTensors (from keras.Input and layers called "
                                f"on it), got {type(t).__name__}")
        return list(tensors), False
    raise TypeError(f"Model: {what} must be a KerasTensor or a non-empty list of them, got "
                    f"{type(tensors).__name__}")


class Functional(_Training, _core.keras.Functional):
    """A model made of the layer calls between its inputs and outputs (Keras'
    functional API): keras.Model(inputs, outputs) makes one.

    >>> inputs = ef.keras.Input(shape=(4,))
    >>> hidden = ef.keras.layers.Dense(8, activation="relu")(inputs)
    >>> outputs = ef.keras.layers.Dense(2)(hidden)
    >>> model = ef.keras.Model(inputs, outputs)
    >>> model(ef.ones([3, 4])).shape
    TensorShape([3, 2])

    Several inputs or outputs are lists; calling the model then takes and gives lists.
    Layers may be called several times (shared weights), and models are layers.
    """

    def __init__(self, inputs, outputs, name=None):
        inputs, self._single_input = _as_list(inputs, "inputs")
        outputs, self._single_output = _as_list(outputs, "outputs")
        super().__init__(inputs, outputs, name=name)
        # C++ holds the layers too; this keeps Python subclasses of Layer alive with them.
        self._python_layers = list(self.layers)

    @property
    def inputs(self):
        """The model's keras.Input tensors, as a list."""
        return list(self._inputs)

    @property
    def outputs(self):
        """The model's output KerasTensors, as a list."""
        return list(self._outputs)

    def __call__(self, inputs, training=False):
        if isinstance(inputs, _core.keras.KerasTensor) or (
                isinstance(inputs, (list, tuple)) and any(isinstance(i, _core.keras.KerasTensor) for i in inputs)):
            return _core.Layer.__call__(self, inputs, training)  # a model inside another
        if self._single_input or (not isinstance(inputs, (list, tuple)) and len(self._inputs) == 1):
            inputs = [inputs]
        elif not isinstance(inputs, (list, tuple)):
            raise errors.InvalidArgumentError(
                f"model '{self.name}' takes {len(self._inputs)} inputs: call it with a list of tensors")
        outputs = self._call_all(list(inputs), training)
        return outputs[0] if self._single_output else outputs


class Sequential(_Training, _core.keras.Sequential):
    """Layers applied one after another; each is tracked under its name, made unique
    with a suffix ("dense", "dense_1")."""

    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        # C++ holds the layers too; this list keeps Python subclasses of Layer alive.
        self._python_layers = []
        self._symbolic_output = None  # after a keras.Input: the last layer's KerasTensor
        self._symbolic_input = None
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        """Appends `layer`; adding after the first call raises FailedPreconditionError.

        A keras.Input first (Sequential([keras.Input(shape), ...])) gives the input
        shape: each layer added after it is built at once, as Keras does.
        """
        if isinstance(layer, _core.keras.KerasTensor):
            if self._python_layers or self._symbolic_output is not None:
                raise ValueError(f"Sequential '{self.name}': a keras.Input can only come first")
            self._symbolic_output = self._symbolic_input = layer
            return
        self._add(layer)
        self._python_layers.append(layer)
        if self._symbolic_output is not None:
            self._symbolic_output = layer(self._symbolic_output)


_SERIALIZABLE = {}  # class name -> class, from register_keras_serializable


def register_keras_serializable(package="Custom", name=None):
    """Class decorator: load_model makes layers of this class again without custom_objects."""
    def register(cls):
        _SERIALIZABLE[name or cls.__name__] = cls
        return cls
    return register


def _adopt_compile_settings(model, loaded):
    """Compiles `model` as the C++ model `loaded` was (same optimizer object and state)."""
    settings = loaded._compile_settings
    if settings is None:
        return
    model._compile(*settings)


def load_model(filepath, custom_objects=None, compile=True):
    """The model that Model.save wrote: built and holding its weights, and with compile
    (default) compiled as the saved model was, its optimizer state included, so fit
    continues where it stopped. Custom layers come from custom_objects ({class name:
    class}) or register_keras_serializable; each is made by cls.from_config(config)."""
    classes = {**_SERIALIZABLE, **(custom_objects or {})}
    created = []

    def factory_for(cls):
        def make(config):
            layer = cls.from_config(config)
            created.append(layer)  # alive while C++ holds it, so its Python methods stay
            return layer
        return make

    for class_name, cls in classes.items():
        _core.keras._register_layer(class_name, factory_for(cls))
    try:
        loaded = _core.keras._load_model(str(filepath), bool(compile))
    finally:
        for class_name in classes:
            _core.keras._unregister_layer(class_name)
    if isinstance(loaded, _core.keras.Functional):
        outputs = loaded._outputs
        inputs = loaded._inputs
        model = Functional(inputs[0] if len(inputs) == 1 else inputs, outputs[0] if len(outputs) == 1 else outputs,
                           name=loaded.name)
        model._python_layers += created
        _adopt_compile_settings(model, loaded)
        return model
    model = Sequential(name=loaded.name)
    for layer in loaded.layers:
        model.add(layer)
    _adopt_compile_settings(model, loaded)
    return model

"""Keras callbacks for Model.fit / evaluate: subclass Callback and override on_epoch_end
(epoch, logs) and friends; self.model is the model being trained, and setting
self.model.stop_training = True ends fit after the epoch. The built-in ones run in C++
(eagerflow/nn/callbacks.h)."""
from eagerflow._core.keras.callbacks import (  # noqa: F401
    Callback, CSVLogger, EarlyStopping, LearningRateScheduler, ModelCheckpoint, ReduceLROnPlateau, TensorBoard,
    TerminateOnNaN,
)


class LambdaCallback(Callback):
    """A callback made of functions, one per event.

    >>> printer = ef.keras.callbacks.LambdaCallback(
    ...     on_epoch_end=lambda epoch, logs: print(epoch, round(logs["loss"], 3)))

    Args:
      on_epoch_begin: None, or a function (epoch, logs).
      on_epoch_end: None, or a function (epoch, logs).
      on_batch_begin: None, or a function (batch, logs); the same as
        on_train_batch_begin.
      on_batch_end: None, or a function (batch, logs); the same as on_train_batch_end.
      on_train_begin: None, or a function (logs).
      on_train_end: None, or a function (logs).
      on_train_batch_begin: None, or a function (batch, logs).
      on_train_batch_end: None, or a function (batch, logs).
    """

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None, on_batch_end=None,
                 on_train_begin=None, on_train_end=None, on_train_batch_begin=None, on_train_batch_end=None):
        super().__init__()
        chosen = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
                  "on_train_batch_begin": on_train_batch_begin or on_batch_begin,
                  "on_train_batch_end": on_train_batch_end or on_batch_end,
                  "on_train_begin": on_train_begin, "on_train_end": on_train_end}
        self._functions = {name: f for name, f in chosen.items() if f is not None}


def _calls(event):
    def method(self, *args):
        function = self._functions.get(event)
        if function is not None:
            function(*args)
    method.__name__ = event
    method.__doc__ = f"""Calls the function given for {event}, if any, with the event's arguments.

    Events without a function do nothing.
    """
    return method


for _event in ("on_epoch_begin", "on_epoch_end", "on_train_batch_begin", "on_train_batch_end", "on_train_begin",
               "on_train_end"):
    setattr(LambdaCallback, _event, _calls(_event))
del _event

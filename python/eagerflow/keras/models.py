"""Model (a Layer made of layers, subclassed by users) and Sequential."""
from eagerflow import _core
from eagerflow import module as _module  # noqa: F401  (installs attribute tracking)

Model = _core.Layer


class Sequential(_core.keras.Sequential):
    """Layers applied one after another; each is tracked under its name, made unique
    with a suffix ("dense", "dense_1")."""

    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        # C++ holds the layers too; this list keeps Python subclasses of Layer alive.
        self._python_layers = []
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        """Appends `layer`; adding after the first call raises FailedPreconditionError."""
        self._add(layer)
        self._python_layers.append(layer)

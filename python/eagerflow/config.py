"""Devices, as TensorFlow's tf.config names them.

    ef.config.list_physical_devices("GPU")    # [PhysicalDevice(name='/physical_device:GPU:0', ...)]
    with ef.device("/gpu:0"):
        x = ef.zeros([3])                       # created on the GPU
    x.gpu(), x.cpu()                            # copies between devices
    ef.config.experimental.get_memory_info("GPU:0")   # {'current': ..., 'peak': ...}
"""
import collections
import types

from eagerflow import _core

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
PhysicalDevice.__doc__ = """A device of the machine, as list_physical_devices returns it.

Fields:
  name: TensorFlow's name, e.g. "/physical_device:CPU:0" or "/physical_device:GPU:0".
  device_type: "CPU" or "GPU".
"""
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])
LogicalDevice.__doc__ = """A device ops can be placed on, as list_logical_devices returns it.

Fields:
  name: TensorFlow's name, e.g. "/device:CPU:0"; give it to ef.device.
  device_type: "CPU" or "GPU".
"""


def _devices(prefix, kind, device_type):
    if device_type is not None and device_type.upper() not in ("CPU", "GPU"):
        return []
    found = [kind(f"/{prefix}:CPU:0", "CPU")]
    found += [kind(f"/{prefix}:GPU:{i}", "GPU") for i in range(_core.cuda_device_count())]
    return [d for d in found if device_type is None or d.device_type == device_type.upper()]


def list_physical_devices(device_type=None):
    """Lists the machine's devices: the CPU, and each GPU the CUDA driver sees.

    >>> ef.config.list_physical_devices("CPU")
    [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]

    Args:
      device_type: None (all), "CPU" or "GPU" (any case); other types give [].

    Returns:
      A list of PhysicalDevice.
    """
    return _devices("physical_device", PhysicalDevice, device_type)


def list_logical_devices(device_type=None):
    """Lists the devices ops can be placed on (one per physical device).

    >>> ef.config.list_logical_devices("CPU")
    [LogicalDevice(name='/device:CPU:0', device_type='CPU')]

    Args:
      device_type: None (all), "CPU" or "GPU" (any case); other types give [].

    Returns:
      A list of LogicalDevice.
    """
    return _devices("device", LogicalDevice, device_type)


def _get_memory_info(device):
    """Bytes of a device's memory held by tensors now ('current') and at most since the
    last reset_memory_stats ('peak'), for "GPU:0" ... and, unlike TensorFlow, "CPU:0"."""
    return _core.get_memory_info(device)


experimental = types.SimpleNamespace(
    get_memory_info=_get_memory_info,
    reset_memory_stats=_core.reset_memory_stats,
    empty_cache=_core.empty_cache,
)


def device(device_name):
    """Context manager: ops without tensor inputs (zeros, fill, random, ...) create their
    outputs on `device_name` ("/gpu:0", "GPU:1", "cuda:0", "/cpu:0", or TensorFlow's full
    names); ops with inputs run where their inputs are."""
    return _core.DeviceScope(device_name)

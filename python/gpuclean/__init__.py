"""gpuclean from Python: convert ONNX models; load, run, lint, bisect, compare, fix and split .tflite models.

Everything here is the C++ library (the extension module ``_gpuclean``); this
package only re-exports it. See docs/python.md.
"""
from ._gpuclean import (  # noqa: F401
    DEFAULT_TARGET,
    GpucleanError,
    IoError,
    Model,
    ModelError,
    UnsupportedError,
    UsageError,
    bisect,
    compare,
    convert,
    fix,
    lint,
    load,
    max_memory,
    set_max_memory,
    split,
)

__all__ = [
    "DEFAULT_TARGET",
    "GpucleanError",
    "IoError",
    "Model",
    "ModelError",
    "UnsupportedError",
    "UsageError",
    "bisect",
    "compare",
    "convert",
    "fix",
    "lint",
    "load",
    "max_memory",
    "set_max_memory",
    "split",
]

"""gpuclean from Python: convert ONNX models; load, run, lint, bisect, compare, fix and split .tflite models; run and prove pipelines.

Everything here is the C++ library (the extension module ``_gpuclean``); this
package only re-exports it. See docs/python.md.
"""
from ._gpuclean import (  # noqa: F401
    DEFAULT_TARGET,
    GpucleanError,
    IoError,
    Model,
    ModelError,
    Pipeline,
    UnsupportedError,
    UsageError,
    bisect,
    compare,
    convert,
    fix,
    host_step,
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
    "Pipeline",
    "UnsupportedError",
    "UsageError",
    "bisect",
    "compare",
    "convert",
    "fix",
    "host_step",
    "lint",
    "load",
    "max_memory",
    "set_max_memory",
    "split",
]

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



def from_torch(module, example_inputs, output=None, target=DEFAULT_TARGET, input_names=None, output_names=None,
               opset=17, **convert_options):
    """Export a PyTorch module with ``torch.onnx`` and convert it (``convert``).

    ``example_inputs`` is a tensor or a tuple of tensors: their shapes become
    the model's. The ONNX file lives in a temporary folder only for the
    conversion; the proof runs it on onnxruntime as ``convert`` does. Returns
    ``convert``'s (report, Model or None). Other keyword arguments go to
    ``convert`` (weights, io_layout, input_values, allow_remaining, host_ops="auto" for a pipeline, ...).
    """
    import os
    import tempfile

    import torch  # Debian's python3-torch; imported here so gpuclean loads without it

    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    names = list(input_names) if input_names else [f"input_{i}" for i in range(len(example_inputs))]
    was_training = module.training
    module.eval()
    try:
        with tempfile.TemporaryDirectory(prefix="gpuclean-torch-") as folder:
            path = os.path.join(folder, "model.onnx")
            with torch.no_grad():
                torch.onnx.export(module, example_inputs, path, opset_version=opset, input_names=names,
                                  output_names=list(output_names) if output_names else None, do_constant_folding=True)
            return convert(path, output=output, target=target, **convert_options)
    finally:
        module.train(was_training)


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
    "from_torch",
    "host_step",
    "lint",
    "load",
    "max_memory",
    "set_max_memory",
    "split",
]

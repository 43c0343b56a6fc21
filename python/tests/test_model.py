"""The model object, run parity with the CLI, input forms and errors."""
import json
import subprocess

import numpy as np
import pytest

import gpuclean
from conftest import PARITY_MODELS, model_path


def cli_run(cli, path, out_dir, precision="fp32"):
    subprocess.run([str(cli), "run", str(path), "--seed", "0", "--precision", precision, "--out", str(out_dir)],
                   check=True, capture_output=True)
    meta = json.loads((out_dir / "meta.json").read_text())
    inputs = [np.load(out_dir / f"in{i}.npy") for i in range(len(gpuclean.load(str(path)).inputs))]
    outputs = sorted(out_dir.glob("out*.npy"), key=lambda p: int(p.stem[3:]))
    return meta, inputs, [np.load(p) for p in outputs]


@pytest.mark.parametrize("name", PARITY_MODELS)
@pytest.mark.parametrize("precision", ["fp32", "fp16-compute"])
def test_run_matches_cli_bit_for_bit(cli, tmp_path, name, precision):
    path = model_path(name)
    _, inputs, expected = cli_run(cli, path, tmp_path, precision)
    model = gpuclean.load(str(path))
    by_list = model.run(inputs, precision=precision)
    by_name = model.run({t["name"]: a for t, a in zip(model.inputs, inputs)}, precision=precision)
    by_index = model.run(dict(enumerate(inputs)), precision=precision)
    generated = model.run(precision=precision)  # the CLI's generator, seed 0
    assert len(by_list) == len(expected) == len(model.outputs)
    for got in (by_list, by_name, by_index, generated):
        for out, want, spec in zip(got, expected, model.outputs):
            assert out.dtype == want.dtype and out.shape == want.shape == tuple(spec["shape"])
            np.testing.assert_array_equal(out, want)


def test_model_description_matches_inspect():
    model = gpuclean.load(str(model_path("selfie_segmentation.tflite")))
    summary = model.inspect()
    assert [t["name"] for t in model.inputs] == [t["name"] for t in summary["inputs"]]
    assert [t["name"] for t in model.outputs] == [t["name"] for t in summary["outputs"]]
    assert model.inputs[0]["dtype"] == "float32" and model.inputs[0]["shape"] == (1, 256, 256, 3)
    assert len(model.ops) == summary["op_count"]
    first = model.ops[0]
    assert first["index"] == 0 and isinstance(first["op"], str) and first["outputs"]


def test_inspect_equals_cli_json(cli):
    path = model_path("face_detection_short_range.tflite")
    printed = subprocess.run([str(cli), "inspect", str(path), "--json"], check=True, capture_output=True, text=True)
    assert gpuclean.load(str(path)).inspect() == json.loads(printed.stdout)


def test_taps_hold_every_op_output():
    model = gpuclean.load(str(model_path("selfie_segmentation.tflite")))
    outputs, taps = model.run(taps=True)
    # Ops whose inputs are all constant are folded once at prepare time and
    # not run again, so their outputs are not tapped; every other op's are.
    produced = {t for op in model.ops for t in op["outputs"]}
    assert 0 < len(taps) <= len(produced)
    for spec, out in zip(model.outputs, outputs):
        np.testing.assert_array_equal(taps[spec["name"]], out)


def test_outputs_are_independent_writable_arrays():
    model = gpuclean.load(str(model_path("selfie_segmentation.tflite")))
    first = model.run()[0]
    first[...] = -1  # the caller owns the array: a later run must not see or overwrite it
    second = model.run()[0]
    assert (first == -1).all() and not (second == -1).all()


def test_wrong_dtype_raises_model_error():
    model = gpuclean.load(str(model_path("selfie_segmentation.tflite")))
    with pytest.raises(gpuclean.ModelError, match=r"expects float32 but got float64"):
        model.run([np.zeros((1, 256, 256, 3), np.float64)])


def test_wrong_shape_raises_model_error():
    model = gpuclean.load(str(model_path("selfie_segmentation.tflite")))
    with pytest.raises(gpuclean.ModelError, match=r"expects shape \[1,256,256,3\] but got \[1,128,128,3\]"):
        model.run({0: np.zeros((1, 128, 128, 3), np.float32)})


def test_bad_inputs_raise_usage_errors():
    model = gpuclean.load(str(model_path("selfie_segmentation.tflite")))
    with pytest.raises(gpuclean.UsageError):
        model.run({"no_such_input": np.zeros((1, 256, 256, 3), np.float32)})
    with pytest.raises(gpuclean.UsageError, match="1 input"):
        model.run([])
    with pytest.raises(gpuclean.UsageError):
        model.run(precision="fp8")
    with pytest.raises(gpuclean.ModelError, match="numpy array"):
        model.run([[0.0]])


def test_non_contiguous_and_byteswapped_inputs_are_accepted():
    model = gpuclean.load(str(model_path("selfie_segmentation.tflite")))
    base = np.random.default_rng(0).random((1, 256, 256, 3), dtype=np.float32)
    want = model.run([base])[0]
    strided = np.asfortranarray(base)
    swapped = base.astype(base.dtype.newbyteorder(">"))
    np.testing.assert_array_equal(model.run([strided])[0], want)
    np.testing.assert_array_equal(model.run([swapped])[0], want)


def test_bad_model_file_raises_model_error(tmp_path):
    junk = tmp_path / "junk.tflite"
    junk.write_bytes(b"not a flatbuffer at all")
    with pytest.raises(gpuclean.ModelError, match="junk.tflite"):
        gpuclean.load(str(junk))
    with pytest.raises(gpuclean.GpucleanError):
        gpuclean.load(str(tmp_path / "missing.tflite"))

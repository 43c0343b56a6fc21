"""lint, bisect and compare return the CLI's JSON reports as dicts."""
import json
import subprocess

import numpy as np
import pytest

import gpuclean
from conftest import model_path


def cli_json(cli, *args):
    done = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_lint_equals_cli_json(cli):
    path = model_path("face_detection_short_range.tflite")
    expected = cli_json(cli, "lint", path, "--format", "json")
    assert gpuclean.lint(str(path)) == expected
    assert gpuclean.lint(gpuclean.load(str(path))) == expected


def test_lint_unknown_target_is_a_usage_error():
    with pytest.raises(gpuclean.UsageError, match="no-such-target"):
        gpuclean.lint(str(model_path("selfie_segmentation.tflite")), target="no-such-target")


def test_bisect_equals_cli_json(cli):
    path = model_path("selfie_segmentation.tflite")
    expected = cli_json(cli, "bisect", path, "--json")
    assert gpuclean.bisect(gpuclean.load(str(path))) == expected
    assert gpuclean.bisect(str(path), a="fp32", b="fp16-compute") == expected


def test_bisect_takes_inputs_like_run():
    model = gpuclean.load(str(model_path("selfie_segmentation.tflite")))
    inputs = [np.zeros((1, 256, 256, 3), np.float32)]
    report = gpuclean.bisect(model, inputs, b="fp16-storage")
    assert report["a"] == "fp32" and report["b"] == "fp16-storage"
    with pytest.raises(gpuclean.ModelError):
        gpuclean.bisect(model, [np.zeros((2, 2), np.float32)])


def test_compare_metrics_and_gates():
    # The detector: its outputs vary with random inputs (the segmenter's are ~0).
    model = gpuclean.load(str(model_path("face_detection_short_range.tflite")))
    ref = model.run()[0]
    got = model.run(precision="fp16-compute")[0]
    report = gpuclean.compare(ref, got, gates=["corr>=0.99", "maxabs<=0"])
    assert report["metrics"]["count"] == ref.size
    assert [g["passed"] for g in report["gates"]] == [True, False]
    assert report["passed"] is False
    assert gpuclean.compare(ref, ref)["metrics"]["bit_identical"] is True
    with pytest.raises(gpuclean.UsageError):
        gpuclean.compare(ref, got, gates=["nonsense"])

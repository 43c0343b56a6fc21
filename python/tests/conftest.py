"""Shared fixtures: where the fixture models and the CLI are.

ctest sets GPUCLEAN_BINARY (the CLI of the same build) and
GPUCLEAN_SOURCE_DIR; run by hand, the defaults are the repository's build/.
"""
import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("GPUCLEAN_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MODELS_DIR = SOURCE_DIR / ".cache" / "models"
# Two small fixture models with different graphs (segmentation, detection).
PARITY_MODELS = ["selfie_segmentation.tflite", "face_detection_short_range.tflite"]


@pytest.fixture(scope="session")
def cli():
    binary = pathlib.Path(os.environ.get("GPUCLEAN_BINARY", SOURCE_DIR / "build" / "gpuclean"))
    assert binary.exists(), f"the gpuclean CLI is not built at {binary}"
    return binary


def model_path(name):
    path = MODELS_DIR / name
    # The fixture models are fetched by tools/setup.sh: missing means set-up did not run, not "skip".
    assert path.exists(), f"{path} is missing; run tools/setup.sh"
    return path


@pytest.fixture(scope="session")
def tiny_model(cli, tmp_path_factory):
    """A few-hundred-byte graph (DIV of two inputs) from `gpuclean synth`."""
    out = tmp_path_factory.mktemp("synth")
    subprocess.run([str(cli), "synth", "div-same-tensor.ok", "--out", str(out)], check=True, capture_output=True)
    return out / "div-same-tensor.ok.tflite"

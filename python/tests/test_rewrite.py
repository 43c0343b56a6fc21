"""fix and split from Python: the same proofs as the CLI, models in and out."""
import numpy as np
import pytest

import gpuclean
from conftest import model_path


def test_fix_sparse_model_returns_a_proven_model(tmp_path):
    model = gpuclean.load(str(model_path("face_detection_full_range_sparse.tflite")))
    out = tmp_path / "fixed.tflite"
    report, fixed = gpuclean.fix(model, output=str(out))
    assert report["ok"] is True
    assert report["changed_sites"] == 46
    assert [p["id"] for p in report["passes"]] == ["densify-offline"]
    assert report["lint_after"]["errors"] == 0 < report["lint_before"]["errors"]
    assert report["written"] == [str(out)]
    assert isinstance(fixed, gpuclean.Model)
    assert "DENSIFY" not in {op["op"] for op in fixed.ops}
    # Densifying offline changes storage only: the outputs are bit-identical.
    for a, b in zip(model.run(seed=3), gpuclean.load(str(out)).run(seed=3)):
        np.testing.assert_array_equal(a, b)


def test_fix_unknown_pass_is_a_usage_error():
    with pytest.raises(gpuclean.UsageError, match="unknown pass 'nope'"):
        gpuclean.fix(model_path("selfie_segmentation.tflite"), passes=["nope"])


def test_split_parts_chained_by_hand_reproduce_the_monolith(tmp_path):
    model = gpuclean.load(str(model_path("selfie_segmentation.tflite")))
    chain, parts = gpuclean.split(model, ["conv2d_27", "conv2d_36"], output=str(tmp_path / "selfie"))
    assert chain["format"] == "gpuclean.pipeline" and chain["proof"]["bit_exact"] is True
    assert len(parts) == 3 and all((tmp_path / f"selfie.part{k}.tflite").exists() for k in (1, 2, 3))
    assert (tmp_path / "selfie.pipeline.json").exists()
    # Follow the pipeline spec: feed each stage's graph by value name.
    image = np.random.default_rng(0).random((1, 256, 256, 3), dtype=np.float32)
    values = {model.inputs[0]["name"]: image}
    for part, stage in zip(parts, chain["stages"]):
        outputs = part.run({name: values[name] for name in stage["inputs"]})
        values.update(zip(stage["outputs"], outputs))
    np.testing.assert_array_equal(values[model.outputs[0]["name"]], model.run([image])[0])

"""Pipelines from Python: a split written as a pipeline spec, run and proved;
host steps on numpy arrays."""
import numpy as np
import pytest

import gpuclean
from conftest import model_path


def test_split_pipeline_runs_and_proves_against_the_monolith(tmp_path):
    model = gpuclean.load(str(model_path("selfie_segmentation.tflite")))
    spec, _ = gpuclean.split(model, ["conv2d_27", "conv2d_36"], output=str(tmp_path / "selfie"))
    pipeline = gpuclean.Pipeline(str(tmp_path / "selfie.pipeline.json"))
    assert pipeline.inputs == spec["inputs"] and len(pipeline.spec["stages"]) == 3
    image = np.random.default_rng(0).random((1, 256, 256, 3), dtype=np.float32)
    assert pipeline.last_run is None
    outputs = pipeline.run({pipeline.inputs[0]: image})
    np.testing.assert_array_equal(outputs[pipeline.outputs[0]], model.run([image])[0])
    stages = pipeline.last_run["stages"]
    assert [s["name"] for s in stages] == [s["name"] for s in pipeline.spec["stages"]]
    assert all(s["ms"] >= 0 and s["run_ms"] >= 0 and s["where"] == "ours fp32" for s in stages)
    report = pipeline.prove(str(model_path("selfie_segmentation.tflite")), inputs={pipeline.inputs[0]: image},
                            gates=["mask_iou>=0.99"], mask_threshold=0.5)
    assert report["passed"] is True and report["outputs"][0]["gates"][0]["gate"] == "mask_iou>=0.99"
    assert len(report["stages"]) == 3


def test_host_steps_on_numpy_arrays():
    scores = np.array([[0.1, 0.9, 0.3, 0.9, 0.5]], dtype=np.float32)
    values, indices = gpuclean.host_step("topk", [scores], {"k": 2})
    np.testing.assert_array_equal(indices, [[1, 3]])
    boxes = np.array([[0, 0, 10, 10], [0, 1, 10, 10], [20, 20, 30, 30]], dtype=np.float32)
    (kept,) = gpuclean.host_step("nms", [boxes, np.array([0.9, 0.8, 0.7], dtype=np.float32)], {"iou_threshold": 0.5})
    np.testing.assert_array_equal(kept, [0, 2])
    with pytest.raises(gpuclean.ModelError, match="host step gather: index 7"):
        gpuclean.host_step("gather", [scores, np.array([7], dtype=np.int32)], {"axis": 1})
    with pytest.raises(gpuclean.GpucleanError, match="unknown host step 'sortof'"):
        gpuclean.host_step("sortof", [scores])

"""convert from Python: an ONNX fixture in, a proven Model out."""
import numpy as np
import pytest

import gpuclean
from conftest import SOURCE_DIR

ONNX_DIR = SOURCE_DIR / ".cache" / "onnx"


def onnx_fixture(name):
    path = ONNX_DIR / f"{name}.onnx"
    # Exported by tools/fetch_onnx_fixtures.sh (tools/test.sh runs it): missing means set-up did not run.
    assert path.exists(), f"{path} is missing; run tools/fetch_onnx_fixtures.sh"
    return path


def test_convert_returns_a_proven_model_matching_pytorch(tmp_path):
    out = tmp_path / "mha.tflite"
    report, model = gpuclean.convert(str(onnx_fixture("mha_parity")), output=str(out))
    assert report["proven"] is True and report["written"] is True
    assert out.exists()
    assert isinstance(model, gpuclean.Model)
    assert all(p["ok"] for p in report["proof"])
    # The converted model on eager PyTorch's reference input.
    x = np.load(ONNX_DIR / "mha_parity.input_0.npy")
    expected = np.load(ONNX_DIR / "mha_parity.expected_0.npy")
    (got,) = model.run([x])
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)


def test_convert_fp16_weights_states_its_bound(tmp_path):
    report, model = gpuclean.convert(str(onnx_fixture("mha_parity")), weights="fp16", prove=True)
    assert report["proven"] is True
    assert report["bound"]["atol_scaled"] == pytest.approx(1e-2)
    assert report["ops_out"]["DEQUANTIZE"] > 0


def test_convert_bad_arguments_and_files(tmp_path):
    with pytest.raises(gpuclean.UsageError, match="weights"):
        gpuclean.convert(str(onnx_fixture("mha_parity")), weights="int8")
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"not a protobuf")
    with pytest.raises(gpuclean.ModelError, match="garbage.onnx"):
        gpuclean.convert(str(garbage))


def test_convert_for_a_target_reports_lint_before_and_after(tmp_path):
    out = tmp_path / "resnet18.tflite"
    report, model = gpuclean.convert(str(onnx_fixture("resnet18")), output=str(out), target="mldrift-webgpu@2.5.3")
    target = report["target"]
    assert target["id"] == "mldrift-webgpu@2.5.3"
    assert target["errors_before"] > 0 and target["errors_after"] == 0 and target["clean"] is True
    assert any(p.startswith("conv-winograd-split") for p in target["passes"])
    assert report["proven"] is True and out.exists() and isinstance(model, gpuclean.Model)
    report, _ = gpuclean.convert(str(onnx_fixture("resnet18")), target="none")
    assert "target" not in report
    with pytest.raises(gpuclean.UsageError, match="no-such-gpu"):
        gpuclean.convert(str(onnx_fixture("resnet18")), target="no-such-gpu")


def test_from_torch_exports_converts_and_proves(tmp_path):
    import torch
    torch.manual_seed(0)
    module = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.GELU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
        torch.nn.Linear(8, 4), torch.nn.Softmax(dim=-1))
    module.train()
    x = torch.rand(1, 3, 16, 16)
    out = tmp_path / "tiny.tflite"
    report, model = gpuclean.from_torch(module, x, output=str(out), target="none")
    assert report["proven"] is True and out.exists()
    assert module.training, "from_torch must leave the module's mode as it found it"
    (got,) = model.run([x.numpy()])
    np.testing.assert_allclose(got, module.eval()(x).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_convert_pins_input_values(tmp_path):
    import torch

    class Gate(torch.nn.Module):
        def forward(self, x, scale):
            return x * scale

    report, model = gpuclean.from_torch(Gate(), (torch.rand(1, 4), torch.tensor([2.0])), target="none",
                                        input_names=["x", "scale"], input_values={"scale": [2.0]})
    assert report["proven"] is True
    assert report["pinned_inputs"] == ["scale=2"]
    assert len(model.inputs) == 1


def test_convert_to_a_pipeline_with_a_recipe(tmp_path):
    # RF-DETR-Seg's shape (tools/export_onnx_fixtures.py rfdetr_seg_small): the
    # top-K selection the WebGPU target keeps off the GPU goes to a CPU graph.
    prefix = tmp_path / "rf"
    report, pipeline = gpuclean.convert(str(onnx_fixture("rfdetr_seg_small")), output=str(prefix),
                                        target="mldrift-webgpu@2.5.3", host_ops="auto",
                                        recipe=str(tmp_path / "recipe"))
    assert isinstance(pipeline, gpuclean.Pipeline), report
    assert report["pipeline_written"] is True and report["islands"] == "cpu"
    placements = [s["placement"] for s in report["pipeline"]["stages"]]
    assert placements == ["gpu", "cpu", "gpu"]
    # Proven in fp32 and in the target's arithmetic.
    assert [c["numeric_model"] for c in report["checks"]] == ["fp32", "fp16-fused"]
    assert all(c["proof"]["passed"] for c in report["checks"])
    assert report["recipe"]["passed"] is True
    assert (tmp_path / "recipe" / "run.mjs").exists() and (tmp_path / "recipe" / "README.md").exists()
    x = np.load(ONNX_DIR / "rfdetr_seg_small.input.npy")
    outputs = pipeline.run({"input": x})
    assert set(outputs) >= {"logits", "boxes", "masks"}
    with pytest.raises(gpuclean.UsageError, match="host_ops"):
        gpuclean.convert(str(onnx_fixture("rfdetr_seg_small")), output=str(prefix), host_ops="maybe")

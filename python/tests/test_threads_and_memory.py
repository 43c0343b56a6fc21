"""Runs release the GIL, and repeated runs do not grow the process."""
import threading

import numpy as np

import gpuclean
from conftest import model_path


def test_two_models_run_in_two_threads_give_what_they_give_alone():
    # Whether a run releases the GIL is the next test's question, asked without a
    # clock: a wall-time ratio on two shared CI cores failed a correct build.
    models = [gpuclean.load(str(model_path(name)))
              for name in ("selfie_segmentation.tflite", "face_detection_short_range.tflite")]
    expected = [m.run() for m in models]  # also prepares each model's interpreter
    runs = 20
    results = [[], []]

    def work(slot):
        for _ in range(runs):
            results[slot].append(models[slot].run())

    threads = [threading.Thread(target=work, args=(slot,)) for slot in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    for got_runs, want in zip(results, expected):
        assert len(got_runs) == runs
        for got in got_runs:
            for a, b in zip(got, want):
                np.testing.assert_array_equal(a, b)


def test_a_run_lets_other_python_threads_progress():
    model = gpuclean.load(str(model_path("face_detection_short_range.tflite")))
    model.run()
    stop = threading.Event()
    ticks = 0

    def count():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1  # pure Python: advances only while this thread holds the GIL

    counter = threading.Thread(target=count)
    counter.start()
    during_runs = 0
    try:
        for _ in range(10):
            before = ticks
            model.run()  # one call into C++: had it kept the GIL, `ticks` could not move
            during_runs += ticks - before
    finally:
        stop.set()
        counter.join()
    assert during_runs > 100, during_runs


def rss_bytes():
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    import resource
    return pages * resource.getpagesize()


def test_thousand_runs_do_not_leak(tiny_model):
    model = gpuclean.load(str(tiny_model))
    inputs = [np.full(spec["shape"], 1.5, dtype=spec["dtype"]) for spec in model.inputs]
    for _ in range(100):  # warm-up: allocator pools, the interpreter pool
        model.run(inputs)
    before = rss_bytes()
    for _ in range(1000):
        outputs, taps = model.run(inputs, taps=True)
    grown = rss_bytes() - before
    assert all(np.isfinite(o).all() for o in outputs)
    assert grown < 2 * 1024 * 1024, f"RSS grew {grown} bytes over 1000 runs"


def test_thousand_runs_of_a_fixture_model_do_not_leak():
    # Outputs of 256 KB each: a leaked output would add 250 MB over 1000 runs.
    model = gpuclean.load(str(model_path("selfie_segmentation.tflite")))
    for _ in range(20):
        model.run()
    before = rss_bytes()
    for _ in range(1000):
        model.run()
    grown = rss_bytes() - before
    assert grown < 16 * 1024 * 1024, f"RSS grew {grown} bytes over 1000 runs"


def test_memory_limit_refuses_before_allocating():
    model = gpuclean.load(str(model_path("selfie_segmentation.tflite")))
    default = gpuclean.max_memory()
    assert default > 0
    try:
        gpuclean.set_max_memory("64K")
        assert gpuclean.max_memory() == 64000
        try:
            model.run()
        except gpuclean.UnsupportedError as e:
            assert "memory limit" in str(e) and "\n" not in str(e)
        else:
            raise AssertionError("a run needing megabytes passed a 64 kB limit")
        try:
            gpuclean.set_max_memory("lots")
        except gpuclean.UsageError as e:
            assert "not a memory size" in str(e)
        else:
            raise AssertionError("'lots' was taken as a memory size")
    finally:
        gpuclean.set_max_memory(None)
    assert gpuclean.max_memory() == default
    assert len(model.run()) >= 1

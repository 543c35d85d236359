"""MAX graphs for the math tests, compiled once per process (course §10.3, §10.4).

One graph with symbolic dimensions N, K, M serves every shape. It computes, from float32
inputs, A, Z, Y with MAX's built-in ops; Y again in bfloat16 and float16 (inputs cast inside
the graph, result cast back); and, when Mojo is available, Y with the Mojo custom op
``study_relu`` in place of the built-in relu. A cold compile takes about a minute on two
cores; MAX caches it on disk, so later sessions load it in seconds.
"""
from __future__ import annotations

import concurrent.futures

import numpy as np

_MODELS: dict = {}
LOW_PRECISION = ("bfloat16", "float16")


def _graph(impl, with_mojo: bool):
    from max.driver import CPU
    from max.dtype import DType
    from max.engine import InferenceSession
    from max.graph import DeviceRef, Graph, TensorType, ops

    device = CPU()
    ref = DeviceRef.from_device(device)
    types = [TensorType(DType.float32, dims, device=ref) for dims in (["N", "K"], ["K", "M"], ["M"])]
    extensions = [impl.mojo_package()] if with_mojo else []
    names = ["a", "z", "y"]
    with Graph("stackcheck_math", input_types=types, custom_extensions=extensions) as graph:
        x, w, b = (value.tensor for value in graph.inputs)
        outputs = list(impl.max_steps(x, w, b))
        for dtype in LOW_PRECISION:
            low = getattr(DType, dtype)
            y_low = impl.max_steps(*(ops.cast(v, low) for v in (x, w, b)))[2]
            outputs.append(ops.cast(y_low, DType.float32))
            names.append(f"y_{dtype}")
        if with_mojo:
            outputs.append(impl.mojo_relu(outputs[1]))
            names.append("y_mojo")
        graph.output(*outputs)
    return graph, names, InferenceSession(devices=[device])


def _key(impl, with_mojo: bool):
    return (impl.max_steps, impl.mojo_relu, impl.mojo_package, with_mojo)


def prefetch(impl, with_mojo: bool) -> None:
    """Build the graph now and compile it on a background thread (MAX releases the GIL while it
    compiles), so a cold compile overlaps the tests that run before the first MAX test."""
    key = _key(impl, with_mojo)
    if key in _MODELS:
        return
    graph, names, session = _graph(impl, with_mojo)
    future = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="max-compile").submit(
        session.load, graph)
    _MODELS[key] = (graph, future, names)


def math_model(impl, with_mojo: bool):
    """(graph, compiled model, output names), built from ``impl``'s builders once per process."""
    prefetch(impl, with_mojo)
    graph, model, names = _MODELS[_key(impl, with_mojo)]
    return graph, model.result(), names


def run(impl, x, w, b, with_mojo: bool) -> dict[str, np.ndarray]:
    """Execute the math graph on float32 NumPy inputs; every output as float32 NumPy."""
    from max.driver import Buffer

    _, model, names = math_model(impl, with_mojo)
    buffers = [Buffer.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for v in (x, w, b)]
    return {name: out.to_numpy() for name, out in zip(names, model.execute(*buffers))}

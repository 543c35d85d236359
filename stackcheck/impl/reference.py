"""The course's reference solutions: the implementations under test.

``--impl MODULE`` replaces any of these names with a student's (or a mutant's) version;
a name the module lacks falls back to the one here. The surface:

=========================  ==================================================================
``check_operands(x,w,b)``   raise ValueError naming the shapes/devices unless X[N,K], W[K,M], b[M]
``numpy_steps(x,w,b)``      (A, Z, Y) with NumPy, in the inputs' dtype (§2.2)
``numpy_forward(x,w,b)``    Y = ReLU(X @ W + b) with NumPy
``broadcast_bias(b,n)``     b as an [n, M] view, without copying it n times (§2.3)
``torch_steps(x,w,b)``      (A, Z, Y) with torch eager, on the inputs' device and dtype
``torch_forward(x,w,b)``    Y with torch eager
``torch_broadcast_bias``    b as an [n, M] torch view sharing b's memory (§2.3)
``w_from_linear(linear)``   the course's W[K, M] from a torch.nn.Linear(K, M) (§2.1)
``torch_compiled_forward``  Y through torch.compile (Inductor), same dtype as the inputs (§8.1)
``torch_grads(f,x,w,b)``    (Y, loss=mean(Y²), dX, dW, db) by autograd through forward ``f`` (§8.2)
``jax_steps(x,w,b)``        (A, Z, Y) with jax.jit
``jax_forward(x,w,b)``      Y with jax.jit
``jax_loss_and_grads``      (loss, (dX, dW, db)) of mean(Y²) by jax.value_and_grad (§9.5)
``max_steps(x,w,b)``        graph builder: (A, Z, Y) as MAX graph values, for any dtype (§10.3)
``mojo_relu(z)``            graph builder: ReLU through the Mojo custom op ``study_relu`` (§10.4)
``mojo_package()``          path of the Mojo source package that registers ``study_relu``
``triton_bias_relu(a,b,``  ReLU(A + b) by the Triton kernel, interpreter on CPU (§11.2); ValueError for
``block_size=256,out=)``    inputs it cannot take; empty A returns without a launch; writes ``out`` if given
``triton_forward(x,w,b)``   torch matmul, then ``triton_bias_relu`` (§11.4: two kernels)
``pallas_bias_relu(a,b,``   ReLU(A + b) by a Pallas kernel over blocks of rows, any N (the interpreter on
``block_rows=8)``           CPU; §12.1: Pallas is JAX's way to write a kernel, as Triton is PyTorch's)
``jax_sync(value)``         wait until a JAX result (any pytree) is computed: block_until_ready (§6.3)
``torch_sync(device)``      wait until the device's queued work is done: torch.cuda.synchronize (§6.5)
``timed_call(fn, sync)``    seconds for one ``fn()`` by the host clock, ``sync(result)`` inside (§6.5)
``steady_state(fn, sync,``  ``trials`` timings of ``fn`` after ``warmup`` untimed calls: no compile in
``trials=9, warmup=2)``     them (§6.5, MC09)
``sum_sequential(v)``       float32 sum, left to right, one element at a time (MC13)
``sum_blocked(v, block)``   float32 sum of per-block partial sums (MC13)
=========================  ==================================================================

Every forward validates its operands with ``check_operands`` first, so a K mismatch is a
clear shape error on every stack (course §2.1, experiment A).
"""

from __future__ import annotations

import numpy as np


def _shape(t) -> list[int]:
    return [int(d) for d in t.shape]


def check_operands(x, w, b) -> None:
    """§2.1, §6.2. Return None if X[N, K] @ W[K, M] + b[M] is well formed; otherwise raise
    ValueError naming the operand and its shape: X, W and b must be 2-D, 2-D and 1-D; X's K must
    equal W's K (a shape error, not a device error); b must be exactly [M] (not [1], [] or [N, M],
    even where broadcasting would allow it); operands on different devices are named too."""
    for name, t, rank, form in (("X", x, 2, "[N, K]"), ("W", w, 2, "[K, M]"), ("b", b, 1, "[M]")):
        if len(t.shape) != rank:
            raise ValueError(f"{name} must be {rank}-D {form}, got shape {_shape(t)} (course §2.1)")
    if x.shape[1] != w.shape[0]:
        raise ValueError(
            f"K mismatch: X has shape {_shape(x)} (K={x.shape[1]}) but W has shape {_shape(w)} "
            f"(K={w.shape[0]}); the contraction dimension K must agree. This is a shape error, "
            f"not a device error (course §2.1)"
        )
    if b.shape[0] != w.shape[1]:
        raise ValueError(
            f"b has shape {_shape(b)} but W has shape {_shape(w)}: b must be [M] = [{w.shape[1]}] (course §2.1)"
        )
    devices = {name: str(t.device) for name, t in (("X", x), ("W", w), ("b", b)) if getattr(t, "device", None)}
    if len(set(devices.values())) > 1:
        placed = ", ".join(f"{n} on {d}" for n, d in devices.items())
        raise ValueError(f"operands on different devices ({placed}); move them to one device first (course §6.2)")


def numpy_steps(x, w, b):
    """§2.2. X[N, K], W[K, M], b[M] as NumPy arrays -> (A, Z, Y), three NumPy arrays of shape
    [N, M] in the inputs' dtype: A = X @ W, Z = A + b (b broadcast over the N rows), Y = ReLU(Z)
    = max(Z, 0), exactly 0 where Z < 0, NaN where Z is NaN. Validate first with
    ``check_operands(x, w, b)``: a malformed input raises its ValueError, never a wrong answer."""
    check_operands(x, w, b)
    a = x @ w
    z = a + b
    return a, z, np.maximum(z, 0)


def numpy_forward(x, w, b):
    """§2.2. Y = ReLU(X @ W + b) with NumPy: the Y of ``numpy_steps`` (validated the same way)."""
    return numpy_steps(x, w, b)[2]


def broadcast_bias(b, n: int):
    """§2.3. b[M] (NumPy) seen as an [n, M] array whose rows are all b, without copying b n times:
    a read-only view that shares b's memory (stride 0 over the rows)."""
    return np.broadcast_to(b, (n, b.shape[0]))


def torch_steps(x, w, b):
    """§2.2, §8. (A, Z, Y) as ``numpy_steps``, with torch eager: three tensors of shape [N, M] on
    the inputs' device and in their dtype. Validate first with ``check_operands(x, w, b)``."""
    import torch

    check_operands(x, w, b)
    a = x @ w
    z = a + b
    return a, z, torch.relu(z)


def torch_forward(x, w, b):
    """§8.1. Y = ReLU(X @ W + b) with torch eager, on the inputs' device and dtype (validated first)."""
    return torch_steps(x, w, b)[2]


def torch_broadcast_bias(b, n: int):
    """§2.3. b[M] (torch) as an [n, M] tensor sharing b's memory: a view, not n copies."""
    return b.expand(n, b.shape[0])


def w_from_linear(linear):
    """§2.1. The course's W[K, M] from ``torch.nn.Linear(K, M)``, whose weight is stored [M, K]."""
    return linear.weight.T


_COMPILED = {}


def _compiled(fn):
    import torch

    if fn not in _COMPILED:
        _COMPILED[fn] = torch.compile(fn, dynamic=True)
    return _COMPILED[fn]


def _torch_plain(x, w, b):
    import torch

    return torch.relu(x @ w + b)


def torch_compiled_forward(x, w, b):
    """§8.1. Y through ``torch.compile`` (Inductor): same values, shape, device and dtype as
    ``torch_forward``; it must really compile (Dynamo captures a graph). Validate first."""
    check_operands(x, w, b)
    return _compiled(_torch_plain)(x, w, b)


def torch_grads(forward, x, w, b):
    """§8.2. Autograd through ``forward(x, w, b)`` with loss = mean(Y²): returns the tuple
    (Y, loss, dX, dW, db), all detached tensors; the caller's x, w, b are left unchanged."""
    x, w, b = (t.detach().clone().requires_grad_(True) for t in (x, w, b))
    y = forward(x, w, b)
    loss = y.square().mean()
    loss.backward()
    return y.detach(), loss.detach(), x.grad, w.grad, b.grad


def _jax_steps_traced(x, w, b):
    import jax

    a = x @ w
    z = a + b
    return a, z, jax.nn.relu(z)


def jax_steps(x, w, b):
    """§9. (A, Z, Y) as ``numpy_steps``, computed by one ``jax.jit``-compiled function: three JAX
    arrays on the inputs' device, in their dtype. Validate first with ``check_operands``."""
    import jax

    check_operands(x, w, b)
    return jax.jit(_jax_steps_traced)(x, w, b)


def jax_forward(x, w, b):
    """§9. Y = ReLU(X @ W + b) by ``jax.jit`` (one compiled program, not op by op). Validate first."""
    return jax_steps(x, w, b)[2]


def _jax_loss(x, w, b):
    return (_jax_steps_traced(x, w, b)[2] ** 2).mean()


def jax_loss_and_grads(x, w, b):
    """§9.5. (loss, (dX, dW, db)) of loss = mean(Y²), the gradients by JAX's automatic
    differentiation over all three operands, loss and gradients in one jit-compiled program. Validate
    first with ``check_operands``."""
    import jax

    check_operands(x, w, b)
    return jax.jit(jax.value_and_grad(_jax_loss, argnums=(0, 1, 2)))(x, w, b)


def max_steps(x, w, b):
    """§10.3. Graph builder: given MAX graph values X, W, b, return (A, Z, Y) as graph values:
    A = X @ W, Z = A + b, Y = ReLU(Z), each computed by MAX graph ops (any that compute them). It runs
    while the graph is built, not on data."""
    from max.graph import ops

    a = ops.matmul(x, w)
    z = a + b
    return a, z, ops.relu(z)


def mojo_relu(z):
    """§10.4. Graph builder: ReLU(z) through the Mojo custom op ``study_relu`` (``ops.custom``), one
    output of z's dtype, shape and device."""
    from max.graph import TensorType, ops

    out = TensorType(z.dtype, z.shape, device=z.device)
    return ops.custom(name="study_relu", device=z.device, values=[z], out_types=[out])[0].tensor


def mojo_package():
    """§10.4. Path of the Mojo source package that registers ``study_relu``."""
    from stackcheck.toolchains.mojo_build import source

    return source("study_relu")


def triton_bias_relu(a, b, block_size: int = 256, out=None):
    """§11.2. Y = ReLU(A + b) by a Triton kernel (the interpreter on CPU): a[N, M] and b[M] torch
    tensors on one device, contiguous, same dtype, else a ValueError that names what is wrong (the
    device, the dtype, the shapes, contiguity, gradients: any wording); ``block_size`` a power of
    two, else ValueError; one launch whose programs each take ``block_size`` elements (§11.3: a 1-D
    grid of cdiv(N * M, block_size), or (N, cdiv(M, block_size))); masks the last block, so any
    N * M works; an empty A returns without a launch; writes into ``out`` (a contiguous tensor like
    A) when given, and returns it. A plain ``@triton.jit`` kernel runs on CPU tensors too (the suite
    launches it through the interpreter)."""
    from stackcheck.toolchains.triton_kernels import bias_relu

    return bias_relu(a, b, block_size=block_size, out=out)


def triton_forward(x, w, b):
    """§11.4. torch's matmul for A = X @ W, then ``triton_bias_relu(A, b)``: two kernels. Validate first."""
    check_operands(x, w, b)
    return triton_bias_relu(x @ w, b)


def _pallas_bias_relu_kernel(a_ref, b_ref, y_ref):
    import jax.numpy as jnp

    y_ref[...] = jnp.maximum(a_ref[...] + b_ref[...], 0)


def pallas_bias_relu(a, b, block_rows: int = 8):
    """§12.1. Y = ReLU(A + b) by a Pallas kernel: a[N, M] and b[M] JAX arrays; a grid of
    cdiv(N, block_rows) programs, each taking ``block_rows`` rows of A and all of b, so any N works
    (the last block is partial); Pallas's interpreter on a CPU. Returns Y[N, M], A's dtype."""
    import jax
    from jax.experimental import pallas as pl

    n, m = a.shape
    interpret = all(d.platform == "cpu" for d in a.devices())
    return pl.pallas_call(
        _pallas_bias_relu_kernel,
        out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype),
        grid=(pl.cdiv(n, block_rows),),
        in_specs=[pl.BlockSpec((block_rows, m), lambda i: (i, 0)), pl.BlockSpec((1, m), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((block_rows, m), lambda i: (i, 0)),
        interpret=interpret,
    )(a, b.reshape(1, m))


def sum_sequential(values):
    """MC13. float32 sum of ``values``, left to right, one element at a time, rounding to float32
    after every addition; returns a NumPy float32 scalar (not a pairwise ``np.sum``)."""
    total = np.float32(0)
    for v in np.asarray(values, dtype=np.float32):
        total = np.float32(total + v)
    return total


def sum_blocked(values, block: int):
    """MC13. float32 sum of per-block partial sums: each run of ``block`` elements summed left to
    right, then the partials summed left to right; returns a NumPy float32 scalar."""
    values = np.asarray(values, dtype=np.float32)
    partials = [sum_sequential(values[i : i + block]) for i in range(0, len(values), block)]
    return sum_sequential(partials)


def jax_sync(value):
    """§6.3. Wait until a JAX result is computed: every leaf of a pytree (a tuple, dict, ...), not
    only the first; returns ``value``."""
    import jax

    return jax.block_until_ready(value)


def torch_sync(device):
    """§6.5. Wait until all work queued on ``device`` is done (every stream's, not only the
    current one's, on a CUDA device); return at once on the CPU. Returns None."""
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize(device)


def timed_call(fn, sync=None) -> float:
    """§6.5, checkpoint 2. Seconds (a float) for one ``result = fn()`` by a monotonic wall clock of
    the host, with ``sync(result)`` inside the clock when ``sync`` is given."""
    from stackcheck.evidence.timing import host_timer

    return host_timer(fn, sync)()


def steady_state(fn, sync=None, trials: int = 9, warmup: int = 2) -> list[float]:
    """§6.5, MC09. ``warmup`` untimed calls of ``fn`` (each synced), then a list of ``trials``
    ``timed_call(fn, sync)`` timings: no compile or first-call cost in them."""
    for _ in range(warmup):
        result = fn()
        if sync is not None:
            sync(result)
    return [timed_call(fn, sync) for _ in range(trials)]

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
    """Raise ValueError, naming shapes (or devices), unless X[N, K] @ W[K, M] + b[M] is well formed."""
    for name, t, rank, form in (("X", x, 2, "[N, K]"), ("W", w, 2, "[K, M]"), ("b", b, 1, "[M]")):
        if len(t.shape) != rank:
            raise ValueError(f"{name} must be {rank}-D {form}, got shape {_shape(t)} (course §2.1)")
    if x.shape[1] != w.shape[0]:
        raise ValueError(
            f"K mismatch: X has shape {_shape(x)} (K={x.shape[1]}) but W has shape {_shape(w)} "
            f"(K={w.shape[0]}); the contraction dimension K must agree. This is a shape error, "
            f"not a device error (course §2.1)")
    if b.shape[0] != w.shape[1]:
        raise ValueError(f"b has shape {_shape(b)} but W has shape {_shape(w)}: b must be [M] = [{w.shape[1]}] "
                         f"(course §2.1)")
    devices = {name: str(t.device) for name, t in (("X", x), ("W", w), ("b", b)) if getattr(t, "device", None)}
    if len(set(devices.values())) > 1:
        placed = ", ".join(f"{n} on {d}" for n, d in devices.items())
        raise ValueError(f"operands on different devices ({placed}); move them to one device first "
                         f"(course §6.2)")


def numpy_steps(x, w, b):
    check_operands(x, w, b)
    a = x @ w
    z = a + b
    return a, z, np.maximum(z, 0)


def numpy_forward(x, w, b):
    return numpy_steps(x, w, b)[2]


def broadcast_bias(b, n: int):
    return np.broadcast_to(b, (n, b.shape[0]))


def torch_steps(x, w, b):
    import torch

    check_operands(x, w, b)
    a = x @ w
    z = a + b
    return a, z, torch.relu(z)


def torch_forward(x, w, b):
    return torch_steps(x, w, b)[2]


def torch_broadcast_bias(b, n: int):
    return b.expand(n, b.shape[0])


def w_from_linear(linear):
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
    check_operands(x, w, b)
    return _compiled(_torch_plain)(x, w, b)


def torch_grads(forward, x, w, b):
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
    import jax

    check_operands(x, w, b)
    return jax.jit(_jax_steps_traced)(x, w, b)


def jax_forward(x, w, b):
    return jax_steps(x, w, b)[2]


def _jax_loss(x, w, b):
    return (_jax_steps_traced(x, w, b)[2] ** 2).mean()


def jax_loss_and_grads(x, w, b):
    import jax

    check_operands(x, w, b)
    return jax.jit(jax.value_and_grad(_jax_loss, argnums=(0, 1, 2)))(x, w, b)


def max_steps(x, w, b):
    from max.graph import ops

    a = ops.matmul(x, w)
    z = a + b
    return a, z, ops.relu(z)


def mojo_relu(z):
    from max.graph import TensorType, ops

    out = TensorType(z.dtype, z.shape, device=z.device)
    return ops.custom(name="study_relu", device=z.device, values=[z], out_types=[out])[0].tensor


def mojo_package():
    from stackcheck.mojo_build import source

    return source("study_relu")


def triton_bias_relu(a, b, block_size: int = 256, out=None):
    from stackcheck.triton_kernels import bias_relu

    return bias_relu(a, b, block_size=block_size, out=out)


def triton_forward(x, w, b):
    check_operands(x, w, b)
    return triton_bias_relu(x @ w, b)


def sum_sequential(values):
    total = np.float32(0)
    for v in np.asarray(values, dtype=np.float32):
        total = np.float32(total + v)
    return total


def sum_blocked(values, block: int):
    values = np.asarray(values, dtype=np.float32)
    partials = [sum_sequential(values[i:i + block]) for i in range(0, len(values), block)]
    return sum_sequential(partials)


def jax_sync(value):
    import jax

    return jax.block_until_ready(value)


def torch_sync(device):
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize(device)


def timed_call(fn, sync=None) -> float:
    from stackcheck.timing import host_timer

    return host_timer(fn, sync)()


def steady_state(fn, sync=None, trials: int = 9, warmup: int = 2) -> list[float]:
    for _ in range(warmup):
        result = fn()
        if sync is not None:
            sync(result)
    return [timed_call(fn, sync) for _ in range(trials)]

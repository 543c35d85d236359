"""§9.1: PJRT is the API between JAX and the device: a client that owns devices and compiles, the
buffers results live in, and the loaded executable that runs. Read off what JAX hands back; and the
implementation's forward, called again, runs the executable already loaded (PJRT compiles nothing)."""

import subprocess
import sys

import numpy as np
import pytest

from stackcheck.evidence.compiles import jax_compiles
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.stacks.records import jax_in
from stackcheck.toolchains import ir, pointwise


@pytest.mark.claim("S9.1-pjrt")
@pytest.mark.parametrize("device", device_params("jax"))
def test_client_device_buffer_and_loaded_executable(impl, device, evidence):
    jax = need("jax")
    x, w, b = jax_in(make_inputs(8, 6, 4, seed=91), device, "float32")
    y = impl.jax_forward(x, w, b)
    with jax_compiles() as count:  # the same shapes again: the loaded executable runs, nothing compiles
        jax.block_until_ready(impl.jax_forward(x, w, b))
    assert count.compiles == 0, f"a second call of the forward compiled {count.compiles} programs: nothing was reused"
    (where,) = y.devices()  # the result is a buffer on one PJRT device ...
    client = where.client  # ... of a PJRT client, which owns the devices and compiles
    loaded = jax.jit(impl.jax_forward).lower(x, w, b).compile().runtime_executable()
    found = {
        "client": type(client).__name__,
        "platform": client.platform,
        "device": repr(where),
        "buffer_pointer": y.unsafe_buffer_pointer() != 0,
        "executable": type(loaded).__name__,
    }
    evidence(**found)
    assert where in client.devices(), found
    assert found["buffer_pointer"] and y.addressable_shards[0].device == where, found
    assert loaded.client.platform == client.platform, found
    execute = getattr(loaded, "execute", None)  # PJRT's own call, below jit's dispatch; private, so it may move
    if execute is None:
        pytest.skip(f"jaxlib {jax.__version__} moved LoadedExecutable.execute: the executable is not run here")
    (direct,) = execute([x, w, b])  # the client's executable, run on the client's device buffers
    assert direct.devices() == {where}, f"PJRT ran it on {direct.devices()}, not on {where}"
    assert_matches_reference(np.asarray(direct), np.asarray(y), dtype="float32", k=6, what="Y run through PJRT")
    assert_matches_reference(np.asarray(y), reference_forward(*make_inputs(8, 6, 4, seed=91)), dtype="float32", k=6)


FRESH_RUN = """
import sys
import jax
import numpy as np
from stackcheck.evidence.numerics import make_inputs
exported = jax.export.deserialize(bytearray(open(sys.argv[1], "rb").read()))
y = exported.call(*make_inputs(8, 6, 4, seed=92))
np.save(sys.argv[2], np.asarray(y))
print(sorted(m.split(".")[0] for m in sys.modules if m.startswith(("torch", "max"))))
"""


@pytest.mark.claim("S9.1-pjrt")
@pytest.mark.cpu
def test_stablehlo_carries_the_program_to_a_fresh_process(impl, tmp_path, evidence):
    """§9.1: StableHLO is the portable representation between a framework and a compiler. The
    implementation's jax_forward exported (jax.export: serialized StableHLO) is reloaded by a fresh
    interpreter that never imports the implementation, compiled there by XLA and run to the same Y."""
    jax = need("jax")
    x, w, b = make_inputs(8, 6, 4, seed=92)
    exported = jax.export.export(jax.jit(impl.jax_forward))(x, w, b)
    text = exported.mlir_module()
    (tmp_path / "forward.bin").write_bytes(exported.serialize())
    done = subprocess.run(
        [sys.executable, "-c", FRESH_RUN, str(tmp_path / "forward.bin"), str(tmp_path / "y.npy")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"the fresh process could not run the exported program:\n{done.stderr[-2000:]}"
    evidence(stablehlo_ops=sorted(set(pointwise.families(text, "stablehlo"))), bytes=len(exported.serialize()))
    assert ir.parses_as_mlir(text) and "stablehlo." in text, f"the export is a StableHLO module:\n{text[:2000]}"
    assert_matches_reference(
        np.load(tmp_path / "y.npy"), reference_forward(x, w, b), dtype="float32", k=6, what="Y run from StableHLO"
    )

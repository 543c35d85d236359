"""One stack's run of an implementation's forward in a fresh interpreter of its own, reporting Y and
which graph frameworks the run itself loaded (course MC11: a MAX graph runs without JAX, a JAX
program without MAX), counted from after the implementation's own imports."""

from __future__ import annotations

import json
import subprocess
import sys

FRAMEWORK_RUN = """
import json, sys
import numpy as np
from stackcheck.impl.loader import Impl, load_module
from stackcheck.evidence.numerics import make_inputs
impl = Impl(load_module({spec!r}))
x, w, b = make_inputs(5, 4, 3, seed=46)
before = {{m.split(".")[0] for m in sys.modules}}  # what the implementation's own imports brought
{body}
print(json.dumps({{"y": np.asarray(y, dtype=np.float64).tolist(),
                  "loaded": sorted(({{m.split(".")[0] for m in sys.modules}} - before) & {{"jax", "jaxlib", "max"}})}}))
"""
BODIES = {
    "max": "from stackcheck.run import max_graphs\ny = max_graphs.execute('math', impl, x, w, b)['y']",
    "jax": "y = impl.jax_forward(x, w, b)",
}


def run_alone(impl, stack: str) -> dict:
    """{"y": Y of the seeded 5 x 4 x 3 inputs, "loaded": the frameworks the run loaded} for ``stack``."""
    spec = getattr(impl.module, "__file__", None) or "stackcheck.impl.reference"
    done = subprocess.run(
        [sys.executable, "-c", FRAMEWORK_RUN.format(spec=spec, body=BODIES[stack])],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"the {stack} program failed:\n{done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])

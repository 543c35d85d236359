"""§10.4: "이 선택은 속도를 높이려는 목적이 아니다" ... "기본 MAX ReLU보다 빠르다는 사실" is not what the
example shows. The implementation's Mojo ReLU and MAX's built-in ops.relu, both called from torch
through MAX's own bridge (max.experimental.torch: CustomOpLibrary and graph_op, the same path and
overheads), are timed interleaved on the same input: in at least one regime measured the custom op is
not faster than the built-in. Both compute ReLU."""

import numpy as np
import pytest

from stackcheck.evidence import judged, timing
from stackcheck.evidence.numerics import assert_exact, uniform
from stackcheck.impl import mojo_source
from stackcheck.run import custom_ops
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params

pytestmark = [pytest.mark.max, pytest.mark.mojo]

MARGIN = 1.10  # "not faster" = the custom op takes at least 1/1.10 of the built-in's time
SHAPES = {"cpu": {"large 4M x 16": (1 << 22, 16)}, "cuda": {"tiny 64 x 64": (64, 64), "large 4M x 16": (1 << 22, 16)}}
# CPU, 2 cores: the custom op 60 ms against the built-in's 30 ms at 4M x 16 (and 0.11 against 0.17 ms
# at 64 x 64: faster there, which is why a regime where it is not is what the test asks for). H200:
# 1.43-1.57x the built-in's time at 4M x 16, 1.09-1.18x at 64 x 64 (four runs).


@pytest.mark.claim("S10.4-not-faster")
@pytest.mark.parametrize("device", device_params("torch", devices=("cpu", "cuda")))
def test_the_custom_relu_is_not_faster_than_maxs_everywhere(impl, evidence, device):
    need("torch")
    need("max")
    pytest.importorskip(custom_ops.BRIDGE, reason="MAX's torch bridge (MAX 26.7 or later)")
    shapes = {label: (shape, shape[0] % 97) for label, shape in SHAPES[device].items()}
    found = mojo_source.probe(custom_ops.against_builtin, impl, device, shapes)
    measured, floors, report, lines = {}, {}, {}, []
    for label, (shape, seed) in shapes.items():
        expected = custom_ops.sampled(np.maximum(uniform(shape, seed=seed), 0), seed)
        for name, out in found[label]["outputs"].items():
            assert_exact(out, expected, what=f"the {name} ReLU through MAX's bridge (sampled)", shape=shape)
        runs = {name: timing.Measurement(name, "host-sync", list(s)) for name, s in found[label]["samples"].items()}
        measured[label], floors[label] = runs, found[label]["floor"]
        ratio = timing.ratio(runs["custom"], runs["built-in"])
        report[label] = {"custom_over_builtin": round(ratio, 3), "noise_floor": round(floors[label], 3)}
        lines.append(judged.line(f"{label}: custom over built-in", ratio, at_least=1 / MARGIN))
        report[f"{label}: custom"], report[f"{label}: built-in"] = runs["custom"].summary(), runs["built-in"].summary()
    evidence(device=device, **report, judged=lines)
    slower_somewhere = timing.not_faster_somewhere(measured, "custom", MARGIN, floors)
    if not slower_somewhere and all(f >= MARGIN for f in floors.values()):
        pytest.skip(f"inconclusive: noise floors {floors} exceed {MARGIN}")
    assert slower_somewhere, f"the custom ReLU was clearly faster than MAX's own in every regime measured: {report}"

"""§10.4: "width는 이 원소별 계산의 벡터 폭에 관련된 컴파일 시점 매개변수다". mojo/simd_relu.mojo's
ReLU, generic over ``width`` as the custom op's elementwise function is, built at several widths:
each build's LLVM IR loads, takes the max of and stores vectors of exactly that many float32 lanes,
and each build's program computes the same ReLU (its sum against NumPy's)."""

import subprocess

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference
from stackcheck.toolchains import mojo_build

WIDTHS = (1, 4, 8, 16)  # 1 is scalar code; 16 float32 lanes fill an AVX-512 register
COUNT = 4096  # mojo/simd_relu.mojo's


def built(width: int, emit: str):
    return mojo_build.build(mojo_build.source("simd_relu.mojo"), emit=emit, sizes={"WIDTH": width})


@pytest.mark.claim("S10.4-width")
@pytest.mark.mojo
@pytest.mark.parametrize("width", WIDTHS)
def test_width_sets_the_vector_the_code_works_on(width, evidence):
    found = judges.assert_vector_width(built(width, "llvm").read_text(), "relu_block", width)
    done = subprocess.run([str(built(width, "exe"))], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    values = (np.arange(COUNT) % 17 - 8).astype(np.float32)
    total = float(done.stdout.split("sum")[-1])
    assert_matches_reference(
        np.array([total]), np.array([np.maximum(values, 0).sum()]), dtype="float32", k=COUNT, what="sum of ReLU"
    )
    evidence(width=width, vector_widths=found, relu_sum=total)

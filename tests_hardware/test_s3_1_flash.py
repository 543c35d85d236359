"""§3.1: FlashAttention changes the order of computation so the big intermediate, the
[L, L] score matrix of every head, is never materialized. At a long sequence (16k where the GPU's
memory allows), the math backend's peak memory holds it (L^2 x heads x bytes); the flash backend's
peak is a small fraction of it."""

import pytest

from stackcheck import judges
from stackcheck.evidence import device_profile, per_gpu
from stackcheck.evidence.numerics import assert_matches_reference, uniform
from stackcheck.stacks.available import need

B, H, D = 1, 8, 64


@pytest.mark.claim("S3.1-flash")
@pytest.mark.cuda
@pytest.mark.torch
@pytest.mark.gpu_needs("flash-attention")
def test_flash_attention_never_holds_the_score_matrix(evidence):
    torch = need("torch")
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention

    length = per_gpu.flash_length(device_profile.current(), heads=B * H)
    evidence(sequence_length=length)
    q, k, v = (torch.from_numpy(uniform((B, H, length, D), seed=31 + i)).to("cuda", torch.bfloat16) for i in range(3))

    def peak(backend):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        with sdpa_kernel(backend):
            out = scaled_dot_product_attention(q, k, v)
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base, out

    flash_peak, flash = peak(SDPBackend.FLASH_ATTENTION)
    math_peak, math = peak(SDPBackend.MATH)
    evidence(**judges.assert_flash_saves(flash_peak, math_peak, B * H * length**2 * q.element_size()))
    assert_matches_reference(
        flash[0, :, :256].float().cpu().numpy(),
        math[0, :, :256].float().cpu().numpy(),
        dtype="bfloat16",
        k=D,
        what="flash attention against the math backend",
    )

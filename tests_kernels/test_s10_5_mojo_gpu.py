"""§10.5: a standalone Mojo program launches bias+ReLU on the GPU through DeviceContext.

On any machine its PTX (built for nvidia:90) must hold the bounds check: a `setp` against
element_count - 1 branching past every global load and store. On CUDA the program runs at sizes
no block divides and checks its result on the host (and a canary past the end); the course's own
§10.5 listing, as written, runs and prints its own check; and at a size no block divides its kernel
is guarded the same way and the program still passes its own check."""

import subprocess
from pathlib import Path

import pytest

from stackcheck.toolchains import mojo_build

SIZES = list(mojo_build.GPU_SIZES)


def _ids(sizes):
    return [f"N{s['N']}-M{s['M']}" for s in sizes]


@pytest.mark.claim("S10.5-mojo-gpu")
@pytest.mark.mojo
@pytest.mark.parametrize("sizes", SIZES, ids=_ids(SIZES))
def test_ptx_guards_every_load_and_store(sizes):
    ptx = mojo_build.kernel_ptx(mojo_build.source("bias_relu_gpu.mojo"), "bias_relu", sizes)
    assert mojo_build.guard_problems(ptx, sizes["N"] * sizes["M"]) == []


@pytest.mark.claim("S10.5-mojo-gpu")
@pytest.mark.cuda
@pytest.mark.parametrize("sizes", SIZES, ids=_ids(SIZES))
def test_runs_on_the_gpu_and_checks_itself(mojo_program, sizes):
    program, env = mojo_program(
        mojo_build.prebuilt_name(sizes),
        lambda: mojo_build.build(mojo_build.source("bias_relu_gpu.mojo"), emit="exe", sizes=sizes),
    )
    done = subprocess.run([str(program)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, f"{program.name} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    assert f"bias_relu check passed: N = {sizes['N']} M = {sizes['M']}" in done.stdout, done.stdout


def course_program(tmp_path) -> Path:
    """The course's §10.5 listing, as written, built here into a GPU program."""
    pytest.importorskip("sybil", reason="the course's listings are read with Sybil (pip install sybil)")
    from stackcheck.mojo_build import course_programs

    return mojo_build.build(course_programs(tmp_path)[mojo_build.listing_program_name("10.5")], emit="exe")


@pytest.mark.claim("S10.5-mojo-gpu")
@pytest.mark.cuda
def test_the_courses_program_runs_as_written_and_passes_its_own_check(mojo_program, tmp_path, evidence):
    program, env = mojo_program(mojo_build.listing_program_name("10.5"), lambda: course_program(tmp_path))
    done = subprocess.run([str(program)], capture_output=True, text=True, env=env, timeout=120)
    evidence(stdout=done.stdout[-400:])
    assert done.returncode == 0, f"the §10.5 program failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    assert "bias_relu check passed" in done.stdout and "No compatible GPU found" not in done.stdout, done.stdout


def resized_course_source(tmp_path) -> Path:
    pytest.importorskip("sybil", reason="the course's listings are read with Sybil (pip install sybil)")
    from stackcheck.mojo_build import course_programs

    return course_programs(tmp_path)[mojo_build.resized_name(mojo_build.COURSE_RESIZED)]


@pytest.mark.claim("S10.5-mojo-gpu")
@pytest.mark.mojo
def test_the_courses_kernel_guards_at_a_size_no_block_divides(tmp_path, evidence):
    """The course's program at 33 x 65 (its two size constants changed, nothing else): 2145 elements in
    9 blocks of 256, so 159 threads of the last block have no element. Its kernel's PTX (built for
    nvidia:90 on any machine) compares the thread's index with 2144 and branches past every global
    load and store."""
    sizes = mojo_build.COURSE_RESIZED
    ptx = mojo_build.kernel_ptx(resized_course_source(tmp_path), "bias_relu")
    problems = mojo_build.guard_problems(ptx, sizes["N"] * sizes["M"])
    evidence(sizes=sizes, blocks=-(-sizes["N"] * sizes["M"] // 256), guard_problems=problems)
    assert problems == [], f"the course's kernel at {sizes}: {problems}"


@pytest.mark.claim("S10.5-mojo-gpu")
@pytest.mark.cuda
def test_the_courses_program_runs_where_its_guard_stops_threads(mojo_program, tmp_path, evidence):
    """The same program on the GPU: with 159 threads stopped by the guard, the other 2145 compute Y,
    and the program passes its own check."""
    name = mojo_build.resized_name(mojo_build.COURSE_RESIZED)
    program, env = mojo_program(name, lambda: mojo_build.build(resized_course_source(tmp_path), emit="exe"))
    done = subprocess.run([str(program)], capture_output=True, text=True, env=env, timeout=120)
    evidence(sizes=mojo_build.COURSE_RESIZED, stdout=done.stdout[-400:])
    assert done.returncode == 0 and "bias_relu check passed" in done.stdout, (
        f"{done.stdout[-3000:]}\n{done.stderr[-2000:]}"
    )


@pytest.mark.claim("S10.5-mojo-gpu")
@pytest.mark.mojo
def test_the_compile_time_branch_does_not_rule_out_a_runtime_error(tmp_path, evidence):
    """The course's program built for a GPU target takes its `has_accelerator()` branch at compile
    time; run where no GPU is visible (none here, or CUDA_VISIBLE_DEVICES empty) it does not print
    "No compatible GPU found": it fails at run time, opening a device that is not there."""
    pytest.importorskip("sybil", reason="the course's listings are read with Sybil (pip install sybil)")
    from stackcheck.mojo_build import course_programs

    source = course_programs(tmp_path)[mojo_build.listing_program_name("10.5")]
    program = mojo_build.build(source, emit="exe", target=mojo_build.TARGET)
    env = {**mojo_build.runtime_environment(), "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([str(program)], capture_output=True, text=True, env=env, timeout=120)
    evidence(**mojo_build.runtime_failure(done))

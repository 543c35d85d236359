"""Hardware counters (course §7, checkpoints 3 and 5): run workloads of ``stackcheck.toolchains.workloads``
under Nsight Compute in a subprocess and read their metrics per kernel.

A test names what it profiles as a ``Request`` and lists it in its ``ncu`` marker; the plugin hands
every selected request to ``prefetch`` at collection, which profiles them all in one ncu session per
cache control, reading the union of their metrics, on a background thread, while the other tests run. ``profile``
then waits for its request's kernels (a request nobody prefetched is profiled on its own).

Each session's workloads compile and warm up first; then one cudaProfilerStart/Stop brackets them
all, each led by a marker kernel (torch's ``spin_kernel``) that tells where its kernels begin. ncu
runs with ``--profile-from-start off``, so compiles and autotuning are never replayed. A missing
ncu, or counters this machine does not permit, raise ``Missing`` (a skip; ``--require ncu`` makes it
a failure) carrying ncu's own message.
"""

from __future__ import annotations

import concurrent.futures
import csv
import fcntl
import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass

from stackcheck.paths import data
from stackcheck.paths.tools import tool_path
from stackcheck.stacks import available
from stackcheck.toolchains import background as work_ahead

# Short names for the metrics this suite reads (each verified to read on an H200). A GPU before
# Hopper has no gmma counter: ``usable_metrics`` asks ncu which of them this GPU has.
METRICS = {
    "gmma": "sm__inst_executed_pipe_tensor_op_gmma.sum",  # warpgroup MMA (wgmma): Hopper's Tensor Cores
    "hmma": "sm__inst_executed_pipe_tensor_op_hmma.sum",  # mma.sync on the tensor pipe
    "ffma": "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",  # FP32 fused multiply-add, per thread
    "alu": "sm__inst_executed_pipe_alu.sum",  # the general integer/compare/min-max pipe
    "dram_read": "dram__bytes_read.sum",
    "dram_write": "dram__bytes_write.sum",
    "time_ns": "gpu__time_duration.sum",
    # Global loads looked up in L1 (each SM's own), in 32-byte sectors: found there, or not (§7.2).
    "l1_hit": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "l1_miss": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
    # 32-byte sectors the SMs read from L2 (their L1 misses, their copies into shared memory): what an
    # SM brings in from outside it (§5.3, §7.2).
    "l2_reads": "lts__t_sectors_srcunit_tex_op_read.sum",
    # Speed of light (ncu's first section): each unit's throughput, in % of its peak (course §12.4).
    "sm_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_pct": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
}
SPEED_OF_LIGHT = ["sm_pct", "dram_pct", "time_ns"]
L1 = ["l1_hit", "l1_miss", "time_ns"]
SM_READS = ["l2_reads", "time_ns"]
# read unless a request asks
DEFAULT_METRICS = tuple(m for m in METRICS if m not in SPEED_OF_LIGHT[:2] + L1[:2] + SM_READS[:1])
# the GiB-sized workloads' metrics: one replay pass where a session reads no more (the cache="none" one)
TRAFFIC = ["dram_read", "dram_write", "time_ns"]
TIMEOUT_S = 120  # one workload; a batch gets this for each workload it holds, up to BATCH_TIMEOUT_S
BATCH_TIMEOUT_S = 540
MARKER = re.compile(r"\bspin_kernel\b")  # torch.cuda._sleep's kernel, launched before each batched workload
INSTALL_HINT = "Nsight Compute comes with the CUDA toolkit; put `ncu` on PATH"
PERMISSION_HINT = (
    "the driver lets only administrators read GPU counters: run as root, or load the driver with "
    "NVreg_RestrictProfilingToAdminUsers=0 (https://developer.nvidia.com/ERR_NVGPUCTRPERM); hosted "
    "notebooks such as Colab do not grant it"
)
PROFILER_UNLOADED = ("Failed to initialize the profiler", "LibraryNotLoaded")  # on gVisor, say
OUT_OF_MEMORY = re.compile(r"out of memory|OutOfMemoryError|CUDA_ERROR_OUT_OF_MEMORY", re.I)
OPTIONAL = ("gmma",)  # read where the GPU has it (Hopper's warpgroup MMA), else taken as 0


@dataclass
class Kernel:
    """One profiled kernel launch: its (demangled) name and the metrics read, by short name."""

    name: str
    values: dict[str, float]

    @property
    def tensor_pipe(self) -> float:
        """Instructions issued to the Tensor Core pipe. On sm_90 the hmma counter includes the
        warpgroup (gmma) ones (an H200 reads the same number for both on a bf16 GEMM), so the larger;
        a GPU before Hopper has no gmma counter."""
        return max(self.values.get("gmma", 0.0), self.values["hmma"])

    @property
    def dram_bytes(self) -> float:
        return self.values["dram_read"] + self.values["dram_write"]

    def summary(self) -> dict:
        return {"kernel": self.name[:80], **{k: int(v) for k, v in self.values.items()}}


def ncu_missing() -> str | None:
    """Why ncu cannot be used here (None when it is on PATH)."""
    return None if tool_path("ncu") else f"the ncu command is not on PATH ({INSTALL_HINT})"


@dataclass(frozen=True)
class Request:
    """One workload to profile: ``workloads.<workload>(**kwargs)`` under ncu with cache control
    ``cache`` ("all": flushed before each kernel, its own DRAM traffic; "none": what one kernel
    leaves in L2 for the next), reading ``metrics`` (short names of METRICS)."""

    workload: str
    kwargs: tuple = ()
    cache: str = "all"
    metrics: tuple = DEFAULT_METRICS

    def __post_init__(self) -> None:
        unknown = set(self.metrics) - set(METRICS)
        if self.cache not in ("all", "none") or unknown or not self.metrics:
            raise ValueError(f"ncu request {self}: cache must be 'all' or 'none', metrics among {list(METRICS)}")

    def __str__(self) -> str:
        return f"{self.workload}({', '.join(f'{k}={v!r}' for k, v in self.kwargs)})"


def request(workload: str, cache: str = "all", metrics: list[str] | None = None, **kwargs) -> Request:
    return Request(workload, tuple(sorted(kwargs.items())), cache, tuple(metrics or DEFAULT_METRICS))


_USABLE: dict[str, frozenset] = {}


def usable_metrics(metrics: tuple) -> list[str]:
    """``metrics`` less the optional ones this GPU has no counter for, asked of ``ncu --query-metrics``
    once per process (the preflight: no workload runs). ncu's refusal raises Missing with the fix."""
    if "names" not in _USABLE:
        done = subprocess.run(
            [tool_path("ncu") or "ncu", "--query-metrics"], capture_output=True, text=True, timeout=120
        )
        _refused(done.stdout + done.stderr)
        failed = _failure(done.stdout, done.stderr, done.returncode)
        if failed:
            raise AssertionError(f"ncu --query-metrics: {failed}")
        _USABLE["names"] = frozenset(line.split()[0] for line in done.stdout.splitlines() if line.strip())
    return [m for m in metrics if m not in OPTIONAL or METRICS[m].rsplit(".", 1)[0] in _USABLE["names"]]


def _refused(output: str) -> None:
    """ncu cannot read counters on this machine: the driver does not permit them (ERR_NVGPUCTRPERM),
    or the profiler's library does not load. ``Missing``: a skip, a failure under --require ncu."""
    errors = _errors(output)
    if "ERR_NVGPUCTRPERM" in output:
        message = next((e for e in errors if "ERR_NVGPUCTRPERM" in e), "ERR_NVGPUCTRPERM")
        raise available.Missing(f"ncu cannot read counters here: {message} ({PERMISSION_HINT})", "ncu")
    unloaded = [e for e in errors if any(word in e for word in PROFILER_UNLOADED)]
    if unloaded:
        raise available.Missing(f"ncu cannot profile on this machine: {unloaded[0]}", "ncu")


def _errors(output: str) -> list[str]:
    return [line.removeprefix("==ERROR==").strip() for line in output.splitlines() if line.startswith("==ERROR==")]


def _failure(stdout: str, stderr: str, returncode: int) -> str | None:
    """Why an ncu run that was not refused gave no counters, each cause in its own words: the workload
    ran out of GPU memory, the workload crashed (ncu: "The application returned an error code"), ncu
    has no such metric, or ncu's own error; None when nothing went wrong."""
    errors = _errors(stdout + stderr)
    said = stderr.strip() or "\n".join(line for line in stdout.splitlines() if not line.startswith('"'))
    tail = "\n".join(said.strip().splitlines()[-8:])  # the workload's own last words, not ncu's CSV
    crashed = [e for e in errors if e.startswith("The application returned an error code")]
    if (returncode != 0 or crashed) and OUT_OF_MEMORY.search(stdout + stderr):
        return f"the profiled workload ran out of GPU memory (exit {returncode}):\n{tail}"
    if crashed or (returncode != 0 and not errors):
        return f"the profiled workload crashed (exit {returncode}; {(crashed or ['no ncu error'])[0]}):\n{tail}"
    metric = [e for e in errors if "metric" in e.lower()]
    if metric:
        named = [short for short, full in METRICS.items() if full in metric[0]]
        if named:
            raise NoSuchMetric(f"ncu has no such metric on this GPU: {metric[0]}", named[0])
        return f"ncu has no such metric on this GPU: {metric[0]}"
    if errors or returncode != 0:
        return f"ncu failed (exit {returncode}): {(errors or [tail])[0]}"
    return None


def command(workloads: list[tuple[str, dict]], session: tuple) -> list[str]:
    cache, metrics = session
    return [
        tool_path("ncu") or "ncu",
        "--clock-control",
        "none",
        "--profile-from-start",
        "off",
        "--target-processes",  # not the compile workers a workload starts (Inductor's): each one
        "application-only",  # that ncu attached to cost seconds, and none of them is profiled
        "--cache-control",
        cache,
        "--print-units",
        "base",
        "--csv",
        "--metrics",
        ",".join(METRICS[m] for m in metrics),
        sys.executable,
        "-m",
        "stackcheck.toolchains.workloads",
        json.dumps(workloads),
    ]


_PROFILED: dict[Request, concurrent.futures.Future] = {}
LANE = "ncu"  # the background service's lane: one ncu session at a time


def prefetch(requests, shared: str | None = None, background: bool = True) -> None:
    """Profile ``requests``, one ncu session per cache control, one after another (ncu replays
    each kernel alone; two sessions at once would time-slice the GPU). A session reads the union of
    its requests' metrics: a metric more costs a replay pass of each kernel, a session more a process
    that starts Python, CUDA and ncu (about 6 s of an H200's 8 s workload session). In the background,
    requests with cache control "none" are left out: what one kernel leaves in L2 for the next is
    only measured while this process launches nothing else (other tests' kernels evicted the L2 in
    most passes on the H200), so ``profile`` runs them while its caller waits. With ``shared`` (a
    folder of this test run, for xdist workers), the first process to get there profiles and writes
    what it read, and the others read that instead of profiling again."""
    todo = sorted({r for r in requests if r not in _PROFILED and not (background and r.cache == "none")}, key=str)
    sessions: dict[str, list[Request]] = {}
    for r in todo:
        sessions.setdefault(r.cache, []).append(r)
    service = work_ahead.service()
    service.forget_on_close(_PROFILED)
    for cache, members in sorted(sessions.items()):
        metrics = tuple(m for m in METRICS if any(m in r.metrics for r in members))
        results = service.submit(LANE, _shared_session, members, (cache, metrics), shared)
        for i, r in enumerate(members):
            _PROFILED[r] = _member(results, i)


def _member(results: concurrent.futures.Future, i: int) -> concurrent.futures.Future:
    """A future of the i-th member's kernels, done when the session's ``results`` are."""
    member: concurrent.futures.Future = concurrent.futures.Future()

    def done(future):
        try:
            member.set_result(_outcome(future.result()[i]))
        except BaseException as error:  # Missing, AssertionError, or the session's own failure
            member.set_exception(error)

    results.add_done_callback(done)
    return member


def profile(req: Request) -> list[Kernel]:
    """The kernels ``req``'s workload launches in its measured region, with their counters."""
    if req not in _PROFILED:
        prefetch([req], background=False)
    return _PROFILED[req].result()


def _outcome(result: dict) -> list[Kernel]:
    if "missing" in result:
        raise available.Missing(result["missing"], "ncu")
    if "error" in result:
        raise AssertionError(result["error"])
    return [Kernel(name, values) for name, values in result["kernels"]]


def _shared_session(members: list[Request], session: tuple, shared: str | None) -> list[dict]:
    if shared is None:
        return _session(members, session)
    os.makedirs(shared, exist_ok=True)
    key = json.dumps([session, [str(r) for r in members]])
    name = os.path.join(shared, "ncu-" + hashlib.sha256(key.encode()).hexdigest()[:16])
    with open(name + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(name + ".json"):
            results = _session(members, session)
            with open(name + ".tmp", "w") as out:
                json.dump(results, out)
            os.replace(name + ".tmp", name + ".json")
        with open(name + ".json") as f:
            return json.load(f)


def _session(members: list[Request], session: tuple) -> list[dict]:
    """One ncu run of ``members``: a result dict per member ("kernels", or "missing"/"error"). A
    metric this GPU lacks fails only the members that read it: the session runs again without it."""
    reason = ncu_missing()
    if reason:
        return [{"missing": reason}] * len(members)
    path = os.pathsep.join(filter(None, [str(data.ROOT), os.environ.get("PYTHONPATH")]))
    environ = {**os.environ, "PYTHONPATH": path}
    timeout = min(BATCH_TIMEOUT_S, TIMEOUT_S * len(members))
    lacked: dict[str, str] = {}  # a metric this GPU lacks: ncu's words
    try:
        metrics = usable_metrics(session[1])
        while True:
            reading = [r for r in members if not lacked.keys() & set(r.metrics)]
            asked = [m for m in metrics if m not in lacked and any(m in r.metrics for r in reading)]
            if not reading:
                break
            workloads = [(r.workload, dict(r.kwargs)) for r in reading]
            done = subprocess.run(
                command(workloads, (session[0], asked)), capture_output=True, text=True, timeout=timeout, env=environ
            )
            try:
                kernels = parse(done.stdout, done.stderr, done.returncode, asked)
            except NoSuchMetric as error:
                lacked[error.metric] = str(error)
                continue
            break
    except subprocess.TimeoutExpired:
        return [{"error": f"ncu on {', '.join(map(str, members))} ran past {timeout} s"}] * len(members)
    except available.Missing as missing:
        return [{"missing": missing.msg}] * len(members)
    except AssertionError as error:
        return [{"error": str(error)}] * len(members)
    read = iter(split(kernels, reading, done.stdout) if reading else [])
    return [{"error": lacked[min(lacked.keys() & set(r.metrics))]} if r not in reading else next(read) for r in members]


class NoSuchMetric(AssertionError):
    """ncu has no ``metric`` (a short name of METRICS) on this GPU."""

    def __init__(self, message: str, metric: str):
        super().__init__(message)
        self.metric = metric


def split(kernels: list[Kernel], members: list[Request], stdout: str) -> list[dict]:
    """Each member's kernels: those after its marker kernel, up to the next. A workload that could
    not be built printed ``stackcheck-workload-failed INDEX MESSAGE`` and launched its marker only."""
    failed = dict(re.findall(r"^stackcheck-workload-failed (\d+) (.*)$", stdout, re.M))
    groups: list[list[Kernel]] = []
    for kernel in kernels:
        if MARKER.search(kernel.name):
            groups.append([])
        elif groups:
            groups[-1].append(kernel)
    if len(groups) != len(members):
        names = [k.name[:40] for k in kernels]
        return [{"error": f"ncu profiled {len(groups)} marker kernels for {len(members)} workloads: {names}"}] * len(
            members
        )
    return [
        {"error": f"workload {r} failed: {failed[str(i)]}"}
        if str(i) in failed
        else {"kernels": [(k.name, k.values) for k in group]}
        for i, (r, group) in enumerate(zip(members, groups))
    ]


def parse(stdout: str, stderr: str, returncode: int, metrics: list[str]) -> list[Kernel]:
    """ncu's CSV (one row per kernel and metric) as Kernels in launch order. ncu's refusal (no
    permission for the counters, a profiler library that does not load) raises Missing with its
    message; a workload that crashed or ran out of memory, a metric this GPU lacks, or ncu's own
    error raises AssertionError saying which."""
    _refused(stdout + stderr)
    failed = _failure(stdout, stderr, returncode)
    if failed:
        raise AssertionError(failed)
    lines = stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    names = {full: short for short, full in METRICS.items()}
    kernels: dict[str, Kernel] = {}
    for row in csv.DictReader(lines[start:]):
        if row.get("Metric Name") not in names:
            continue
        value = row["Metric Value"].replace(",", "")
        if value == "n/a" and not row.get("Metric Unit"):  # how ncu 2025.3 answers a name it does not know
            raise NoSuchMetric(
                f"ncu has no metric {row['Metric Name']} on this GPU (compute capability {row.get('CC')}): it read n/a",
                names[row["Metric Name"]],
            )
        kernel = kernels.setdefault(row["ID"], Kernel(row["Kernel Name"], {}))
        kernel.values[names[row["Metric Name"]]] = float(value) if value not in ("", "n/a") else float("nan")
    found = list(kernels.values())
    for kernel in found:
        absent = set(metrics) - set(kernel.values)
        if absent:
            raise AssertionError(f"ncu gave no {sorted(absent)} for kernel {kernel.name[:60]}")
    return found


def total(kernels: list[Kernel], metric: str) -> float:
    return sum(k.values[metric] for k in kernels)


# ---- the claims, judged from counters (each fails with the readings it judged) ---------------


def _readings(kernels: list[Kernel]) -> str:
    return "\n".join(f"  {k.summary()}" for k in kernels) or "  (no kernel was profiled)"


def compulsory_bytes(n: int, m: int, k: int, itemsize: int = 4) -> int:
    """What ReLU(X @ W + b) must move however it runs: read X, W and b once, write Y once."""
    return (n * k + k * m + m + n * m) * itemsize


def l1_hit_rate(kernels: list[Kernel]) -> float:
    """The share of global-load sectors looked up in L1 that were found there."""
    hits = total(kernels, "l1_hit")
    return hits / max(hits + total(kernels, "l1_miss"), 1.0)


LIBRARY = re.compile(r"xmma|nvjet|cutlass|gemm|cublas", re.I)  # cuBLAS / CUTLASS kernel names
GENERATED = re.compile(r"^triton_|_kernel$")  # what a compiler (Inductor, a Triton @jit) names

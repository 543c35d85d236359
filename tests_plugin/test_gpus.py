"""One GPU per xdist worker: the pinning logic, with fake device lists."""

import pytest

from stackcheck.evidence.gpus import ENV_LIST, gpu_for_worker, pin, shares_its_gpu, visible_gpus

pytestmark = pytest.mark.meta


def test_workers_get_distinct_gpus_then_share_round_robin():
    assert [gpu_for_worker(f"gw{i}", ["0", "1"]) for i in range(4)] == ["0", "1", "0", "1"]
    assert gpu_for_worker("gw0", []) is None
    assert gpu_for_worker("master", ["0"]) is None


def test_visible_gpus_respects_cuda_visible_devices():
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "2,3"}) == ["2", "3"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": ""}) == []
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "-1"}) == []


def test_controller_records_gpus_and_each_worker_pins_its_own():
    controller = {"CUDA_VISIBLE_DEVICES": "4,5"}
    assert pin(controller) is None and controller[ENV_LIST] == "4,5"
    pinned = []
    for worker in ("gw0", "gw1"):
        env = {**controller, "PYTEST_XDIST_WORKER": worker}
        pinned.append(pin(env))
        assert env["CUDA_VISIBLE_DEVICES"] == pinned[-1]
    assert pinned == ["4", "5"]


def test_worker_without_gpus_changes_nothing():
    env = {"PYTEST_XDIST_WORKER": "gw1", ENV_LIST: ""}
    assert pin(env) is None and "CUDA_VISIBLE_DEVICES" not in env


def test_nvidia_smi_rows_are_parsed_into_fields(tmp_path, monkeypatch):
    """Every reading of nvidia-smi (visible GPUs, the fingerprint, each worker's GPUs) goes through
    gpus.query; a fake nvidia-smi on PATH stands in for two GPUs."""
    from stackcheck.evidence import gpus

    fake = tmp_path / "nvidia-smi"
    fake.write_text(
        '#!/bin/sh\ncase "$1" in\n'
        "  --query-gpu=index) printf '0\\n1\\n' ;;\n"
        "  --query-gpu=index,pci.bus_id,name) printf '0, 00000000:00:06.0, NVIDIA H200\\n"
        "1, 00000000:00:07.0, NVIDIA H200\\n' ;;\nesac\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path), prepend=":")
    assert visible_gpus({}) == ["0", "1"]
    assert gpus.smi_rows()["1"] == {"pci_bus_id": "00000000:00:07.0", "name": "NVIDIA H200"}
    described = gpus.describe({"PYTEST_XDIST_WORKER": "gw1", "CUDA_VISIBLE_DEVICES": "1"})
    assert described["gpus"] == [{"id": "1", "pci_bus_id": "00000000:00:07.0", "name": "NVIDIA H200"}]


def test_auto_workers_are_a_few_per_gpu_and_never_more_than_the_cores():
    from stackcheck.evidence.gpus import WORKERS_PER_GPU, auto_workers

    assert auto_workers(16, environ={"CUDA_VISIBLE_DEVICES": "0"}) == WORKERS_PER_GPU
    assert auto_workers(32, environ={"CUDA_VISIBLE_DEVICES": "0,1"}) == 2 * WORKERS_PER_GPU
    assert auto_workers(2, environ={"CUDA_VISIBLE_DEVICES": "0,1"}) == 2
    assert auto_workers(16, per_gpu=1, environ={"CUDA_VISIBLE_DEVICES": "0,1"}) == 2, "an 8 GB card: one a GPU"
    assert auto_workers(16, environ={"CUDA_VISIBLE_DEVICES": ""}) is None, "no GPU: xdist counts the cores"


@pytest.mark.parametrize("override, expected", [("", "5"), ("3", "3")])
def test_n_auto_on_a_gpu_host_starts_a_few_workers_a_gpu(pytester, monkeypatch, override, expected):
    """`-n auto` asks the plugin; xdist's own PYTEST_XDIST_AUTO_NUM_WORKERS still wins."""
    pytest.importorskip("xdist")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # no GPU: auto_workers defers, so fake one below
    fake = lambda cores, per_gpu=4, environ=None: 5  # noqa: E731 - not the core count
    monkeypatch.setattr("stackcheck.evidence.gpus.auto_workers", fake)
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", override)
    pytester.makepyfile("def test_one(): pass")
    config = pytester.parseconfigure("-n", "auto", "-p", "no:cacheprovider")
    # the hook xdist's pytest_cmdline_main asks for -n auto's count (no workers started for it)
    assert config.hook.pytest_xdist_auto_num_workers(config=config) == int(expected)


def test_a_worker_shares_its_gpu_when_workers_outnumber_gpus():
    one_gpu = {ENV_LIST: "0", "PYTEST_XDIST_WORKER": "gw1"}
    assert shares_its_gpu({**one_gpu, "PYTEST_XDIST_WORKER_COUNT": "4"})
    assert not shares_its_gpu({**one_gpu, "PYTEST_XDIST_WORKER_COUNT": "1"})
    assert not shares_its_gpu({ENV_LIST: "0,1", "PYTEST_XDIST_WORKER_COUNT": "2"})
    assert not shares_its_gpu({})  # no xdist
    assert not shares_its_gpu({ENV_LIST: "", "PYTEST_XDIST_WORKER_COUNT": "2"})  # no GPU: nothing shared

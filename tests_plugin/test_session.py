"""Session-wide mechanics: the §14.4 header, hypothesis profiles, and xdist."""

import json

import pytest

pytestmark = pytest.mark.meta


def test_header_has_the_reproducibility_fields(pytester):
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(
        [
            "stackcheck environment (course §14.4): *| Python *",
            "  cpu: * | accelerator: * | driver: *",
            "  versions: numpy *",
            "  backends: * | precision (as tests run): *",
            "  implementations: stackcheck.impl.reference*",
        ]
    )


def test_fingerprint_records_the_precision_the_tests_run_with():
    """§14.4: the fingerprint reads TF32 and JAX's precision inside the pinning, as the tests see them."""
    from stackcheck.evidence import precision
    from stackcheck.stacks import fingerprint

    torch = pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True  # a framework default that tests never run with
    try:
        recorded = fingerprint.fingerprint(precision.pinned)["precision"]
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    assert recorded["torch.backends.cuda.matmul.allow_tf32"] is False
    assert recorded["torch.float32_matmul_precision"] == "highest"
    assert recorded["jax_default_matmul_precision"] == "highest"
    assert torch.backends.cuda.matmul.allow_tf32 is saved and jax is not None


@pytest.mark.parametrize("ci, profile", [("true", "ci"), (None, "dev")])
def test_hypothesis_profile_follows_ci(pytester, monkeypatch, ci, profile):
    from hypothesis import settings

    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    pytester.makepyfile(
        "from hypothesis import settings\n"
        f"def test_profile():\n    assert settings._current_profile == {profile!r}\n"
        f"    assert settings.default.derandomize is {profile == 'ci'}\n"
        "    assert settings.default.deadline is None\n"
    )
    previous = settings._current_profile
    try:
        pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    finally:
        settings.load_profile(previous)


def test_xdist_workers_report_claims_to_the_controller(pytester, suite_file, tmp_path):
    """... and are handed tests one at a time (loadgroup, hooks.balance_workers), not in xdist's runs; the
    workers name each test's xdist_group, so a group stays on one worker in every -n run. Fresh processes:
    xdist's controller and workers are processes of their own."""
    pytest.importorskip("xdist")
    path = tmp_path / "report.json"
    pytester.makepyfile(
        dist_probe="def pytest_configure(config):\n"
        "    if not hasattr(config, 'workerinput'):\n"
        f"        open({str(tmp_path / 'dist.txt')!r}, 'w').write(config.option.dist)\n"
        "def pytest_collection_finish(session):\n"
        "    if hasattr(session.config, 'workerinput'):\n"
        f"        open({str(tmp_path / 'worker.txt')!r}, 'w').write(str(session.config.getvalue('loadgroup')))\n"
    )
    result = pytester.runpytest_subprocess(
        suite_file("tests_math/test_s2_2_hand.py"),
        "-k",
        "numpy-cpu or torch-cpu",
        "-n",
        "2",
        "-p",
        "no:cacheprovider",
        "-p",
        "dist_probe",
        f"--curriculum-report={path}",
    )
    result.assert_outcomes(passed=2)
    assert (tmp_path / "dist.txt").read_text() == "loadgroup"
    assert (tmp_path / "worker.txt").read_text() == "True", "a worker that does not group ignores xdist_group"
    report = json.loads(path.read_text())
    hand = next(c for c in report["claims"] if c["id"] == "S2.2-hand")
    assert hand["status"] == "verified" and len(hand["tests"]) == 2
    workers = report["environment"]["workers"]
    assert [w["worker"] for w in workers] == ["gw0", "gw1"], workers
    assert all("cuda_visible_devices" in w and "gpus" in w and "backends" in w for w in workers), workers
    assert any(w["backends"].get("torch") == "cpu" for w in workers), "the worker that ran torch-cpu reads torch's"
    assert report["environment"]["versions"]["torch_cuda"], "torch's CUDA build, read where torch was loaded"
    ran_with = report["environment"]["precision"]
    assert ran_with["torch.float32_matmul_precision"] == "highest", f"the workers' precision, as tests ran: {ran_with}"
    assert report["environment"]["backends"] == "per worker (see workers)", "the controller starts no backend"
    markdown = path.with_suffix(".md").read_text()
    assert "- **workers**: 2\n  - gw0: CUDA_VISIBLE_DEVICES=" in markdown and "\n  - gw1: " in markdown, markdown


def test_the_xdist_controller_starts_no_framework_backend(monkeypatch):
    """A controller that starts JAX opens a client on every GPU of the host, GPUs it was not given."""
    from stackcheck.evidence import precision
    from stackcheck.stacks import fingerprint

    jax = pytest.importorskip("jax")
    torch = pytest.importorskip("torch")

    def forbidden():
        raise AssertionError("a framework backend was started")

    monkeypatch.setattr(jax, "default_backend", forbidden)
    monkeypatch.setattr(torch.cuda, "is_available", forbidden)
    assert fingerprint.fingerprint(precision.pinned, frameworks=False)["backends"] == "per worker (see workers)"
    with pytest.raises(AssertionError, match="backend was started"):
        fingerprint.fingerprint(precision.pinned)


def test_data_files_resolve_from_an_installed_namespace_package(tmp_path, monkeypatch):
    """Installed, fixtures/ and mojo/ are namespace packages (no __init__.py); their files must come
    back as real paths, not as a MultiplexedPath's text."""
    from stackcheck.paths import data

    (tmp_path / "stackcheck_test_data").mkdir()
    (tmp_path / "stackcheck_test_data" / "claims.toml").write_text("x = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(data.PACKAGES, "not_in_the_checkout", "stackcheck_test_data")
    found = data.path("not_in_the_checkout", "claims.toml")
    assert found == tmp_path / "stackcheck_test_data" / "claims.toml" and found.read_text() == "x = 1\n"


def test_a_moved_private_jax_module_skips_with_a_reason(monkeypatch):
    """MC01 and S2.4 count compiles through a name in jax._src.dispatch; if JAX moves it, skip."""
    import types

    from stackcheck.evidence.compiles import jax_compiles

    pytest.importorskip("jax")
    monkeypatch.setitem(__import__("sys").modules, "jax._src.dispatch", types.ModuleType("jax._src.dispatch"))
    with pytest.raises(pytest.skip.Exception, match=r"JAX .* moved its compile event"):
        with jax_compiles():
            pass


def test_framework_defaults_are_set_before_a_backend_starts_and_keep_the_users_choice():
    from stackcheck.stacks.defaults import framework_defaults

    fresh = {}
    framework_defaults(fresh)
    assert fresh == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false", "XLA_FLAGS": "--xla_gpu_autotune_level=0"}
    mine = {"XLA_PYTHON_CLIENT_PREALLOCATE": "true", "XLA_FLAGS": "--xla_gpu_autotune_level=4"}
    framework_defaults(chosen := dict(mine))
    assert chosen == mine


def test_a_run_whose_tests_use_no_framework_imports_none(pytester):
    """The fingerprint reads torch and JAX where a test loaded them, never imports them itself (seconds
    a process); a test that loads one gets its backend and precision into the report. A fresh process:
    this one has imported both."""
    torch = pytest.importorskip("torch")
    pytester.makeconftest(
        "import sys\n"
        "def pytest_sessionfinish(session):\n"
        "    loaded = sorted(m for m in ('torch', 'jax') if m in sys.modules)\n"
        "    open('loaded.txt', 'w').write(' '.join(loaded))\n"
    )
    plain_test = pytester.makepyfile(test_plain="def test_plain():\n    assert 1 + 1 == 2\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--curriculum-report=plain.json").assert_outcomes(passed=1)
    assert (pytester.path / "loaded.txt").read_text() == "", "a run of plain tests imported a framework"
    plain = json.loads((pytester.path / "plain.json").read_text())["environment"]
    assert plain["backends"] == {} and "torch_cuda" not in plain["versions"], plain
    plain_test.unlink()
    pytester.makepyfile(
        test_torch="import pytest\n"
        "@pytest.mark.torch\n"
        "def test_torch():\n    import torch\n    assert torch.ones(2).sum().item() == 2\n"
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--curriculum-report=torch.json").assert_outcomes(passed=1)
    used = json.loads((pytester.path / "torch.json").read_text())["environment"]
    assert used["backends"]["torch"] in ("cpu", "cuda"), used["backends"]
    assert used["versions"]["torch_cuda"] == (torch.version.cuda or "cpu build"), used["versions"]
    assert used["precision"]["torch.float32_matmul_precision"] == "highest", used["precision"]

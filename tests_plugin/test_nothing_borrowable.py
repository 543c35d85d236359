"""Nothing of the suite that computes an answer is borrowable (issue 74, item 6): every public function
of ``stackcheck`` is called on the inputs a graded function gets (X, W, b; A, b; b, N; in NumPy,
torch and JAX), and one that returns what a graded function must return (any of its arrays, on those
inputs) must be a solution of ``integrity.SOLUTIONS``: stripped in the worker's view and flagged as
borrowed in the student's source. A helper added tomorrow that computes Y, a gradient or a broadcast
is found here, not by a student."""

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.meta

SWEEP = textwrap.dedent(
    """
    import importlib, inspect, json, os, pkgutil, signal, sys, warnings

    import numpy as np

    import stackcheck
    from stackcheck.evidence.numerics import make_inputs
    from stackcheck.impl import contract, integrity, reference

    warnings.simplefilter("ignore")
    N, K, M = 7, 5, 6
    x, w, b = make_inputs(N, K, M, seed=74)
    forms = {"numpy": lambda v: v}
    try:
        import torch

        forms["torch"] = lambda v: torch.from_numpy(np.array(v)) if isinstance(v, np.ndarray) else v
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp

        forms["jax"] = lambda v: jnp.asarray(v) if isinstance(v, np.ndarray) else v
    except ImportError:
        pass
    # torch_grads(forward, x, w, b): its answer is for the course's forward; a helper is called with a
    # decoy (A alone, no answer of any task), so one that only runs the function it is given finds none
    shapes = {"x, w, b": (x, w, b), "a, b": (x @ w, b), "b, n": (b, N), "forward, x, w, b": (None, x, w, b)}
    probes = [
        (f"{s} ({stack})", tuple(map(convert, args))) for s, args in shapes.items() for stack, convert in forms.items()
    ]
    decoys = {p: (lambda x, w, b: x @ w, *a[1:]) for p, a in probes if a[0] is None}
    course = {p: getattr(reference, p.split("(")[1][:-1] + "_forward") for p in decoys}
    probes = [(p, (course[p], *a[1:]) if p in course else a) for p, a in probes]
    if "torch" in forms:
        torch.manual_seed(74)
        probes.append(("linear (torch)", (torch.nn.Linear(K, M),)))


    def leaves(value, depth=0):
        if depth > 6:
            return []
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, (list, tuple)):
            return [leaf for v in value for leaf in leaves(v, depth + 1)]
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            try:
                if hasattr(value, "detach"):
                    value = value.detach().cpu()
                found = np.asarray(value, dtype=np.float64)
            except Exception:
                return []
            return [found] if found.size and np.isfinite(found).all() else []
        return []


    given = [np.asarray(v, np.float64) for v in (x, w, b, x @ w)]
    answers = []
    for name in contract.TASKS:
        solution = getattr(reference, name, None)
        for probe, args in probes:
            try:
                inspect.signature(solution).bind(*args)
                found = leaves(solution(*args))
            except Exception:
                continue
            for leaf in found:
                trivial = np.ptp(leaf) == 0 or any(leaf.shape == g.shape and np.allclose(leaf, g) for g in given)
                if not trivial:
                    answers.append((name, probe, leaf))


    def alarm(*_):
        raise TimeoutError


    signal.signal(signal.SIGALRM, alarm)
    borrowable, called = [], 0
    for info in pkgutil.walk_packages(stackcheck.__path__, "stackcheck."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except BaseException:
            continue
        for name, fn in sorted(vars(module).items()):
            if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != module.__name__:
                continue
            if name == "main":  # a command's entry point: it takes argv and acts on the machine, computing nothing
                continue
            if integrity._solution(f"{module.__name__}.{name}"):
                continue
            for probe, args in probes:
                args = decoys.get(probe, args)
                try:
                    inspect.signature(fn).bind(*args)
                except TypeError:
                    continue
                called += 1
                signal.alarm(10)
                try:
                    found = leaves(fn(*args))
                except BaseException:
                    found = []
                finally:
                    signal.alarm(0)
                for leaf in found:
                    for task, where, answer in answers:
                        if leaf.shape == answer.shape and np.allclose(leaf, answer, rtol=1e-4, atol=1e-6):
                            borrowable.append((f"{module.__name__}.{name}", task))
    grouped = {}
    for where, task in borrowable:
        grouped.setdefault(where, set()).add(task)
    said = [f"{where} returns the answer of {', '.join(sorted(tasks))}" for where, tasks in sorted(grouped.items())]
    found = {"called": called, "answers": sorted({a[0] for a in answers}), "borrowable": said}
    with open(sys.argv[1], "w") as out:
        json.dump(found, out)
    """
)


def test_every_suite_function_that_returns_an_answer_is_a_stripped_solution(tmp_path):
    """The sweep runs in a fresh interpreter, in a folder of its own: it calls the suite's functions
    blind, and whatever they do to a process's state (a cache, a signal handler) dies with it."""
    said = tmp_path / "found.json"
    done = subprocess.run(
        [sys.executable, "-c", SWEEP, str(said)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
        start_new_session=True,
    )
    assert done.returncode == 0 and said.exists(), (done.returncode, done.stdout[-2000:], done.stderr[-3000:])
    found = json.loads(said.read_text())
    assert len(found["answers"]) >= 10 and found["called"] >= 100, found  # it saw answers and called functions
    assert not found["borrowable"], (
        "functions of the suite that compute what a graded function returns, not listed in "
        "stackcheck/impl/integrity.py's SOLUTIONS (so a student could call them, unflagged, and the "
        "worker would run them):\n" + "\n".join(found["borrowable"])
    )

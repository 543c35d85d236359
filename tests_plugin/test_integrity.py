"""Homework integrity (stackcheck.impl.integrity): a submission that imports or re-exports the suite's
solutions borrows them, whatever the import form; the check reads the file and never runs it."""

from pathlib import Path

import numpy as np
import pytest

from stackcheck.homework import assignment
from stackcheck.impl import contract, integrity
from stackcheck.impl.loader import Impl, load_module

pytestmark = pytest.mark.meta

FORMS = {
    "from-import": "from stackcheck.impl.reference import numpy_forward\n",
    "from-import-as": "from stackcheck.impl.reference import numpy_forward as mine\nnumpy_forward = mine\n",
    "module-alias": "from stackcheck.impl import reference as r\n\ndef numpy_forward(x, w, b):\n"
    "    return r.numpy_forward(x, w, b)\n",
    "import-dotted": "import stackcheck.impl.reference\n\ndef numpy_forward(x, w, b):\n"
    "    return stackcheck.impl.reference.numpy_forward(x, w, b)\n",
    "import-as": "import stackcheck.impl.reference as ref\nnumpy_forward = ref.numpy_forward\n",
    "star": "from stackcheck.impl.reference import *  # noqa\n",
    "star-then-call": "from stackcheck.impl.reference import *  # noqa\n\ndef numpy_forward(x, w, b):\n"
    "    return numpy_steps(x, w, b)[2]\n",
    "importlib": "import importlib\n\ndef numpy_forward(x, w, b):\n"
    "    return importlib.import_module('stackcheck.impl.reference').numpy_forward(x, w, b)\n",
    "dunder-import": "ref = __import__('stackcheck.impl.reference', fromlist=['numpy_forward'])\n"
    "numpy_forward = ref.numpy_forward\n",
    "through-a-helper": "from stackcheck.impl import reference\n\ndef _helper(x, w, b):\n"
    "    return reference.numpy_forward(x, w, b)\n\ndef numpy_forward(x, w, b):\n    return _helper(x, w, b)\n",
    "reference-forward": "from stackcheck.evidence.numerics import reference_forward\n\n"
    "def numpy_forward(x, w, b):\n    return reference_forward(x, w, b)\n",
    "mutant": "from tests_meta.mutants.leaky_relu import numpy_forward\n",
    "spelling-generator": "from stackcheck.claims import spellings\n\n"
    "def numpy_forward(x, w, b):\n    return spellings.load_one('numpy').numpy_forward(x, w, b)\n",
    "suite-kernel": "from stackcheck.toolchains import triton_kernels\n\n"
    "def triton_bias_relu(a, b, block_size=256, out=None):\n"
    "    return triton_kernels.bias_relu(a, b, block_size, out)\n",
}


def write(tmp_path, source: str) -> str:
    path = tmp_path / "homework.py"
    path.write_text(source)
    return str(path)


@pytest.mark.parametrize("form", list(FORMS))
def test_every_import_form_of_a_solution_borrows(tmp_path, form):
    found = integrity.borrowed(write(tmp_path, FORMS[form]))
    name = "triton_bias_relu" if form == "suite-kernel" else "numpy_forward"
    assert found.of(name), found


def test_own_work_and_the_suites_helpers_borrow_nothing(tmp_path):
    source = (
        '"""Uses stackcheck.impl.reference\'s contract, mentioned in a docstring only."""\n'
        "import numpy as np\nfrom stackcheck.toolchains.triton_kernels import jit_both\n"
        "from stackcheck.impl.contract import TASKS\n\n"
        "def numpy_steps(x, w, b):\n    '''Not stackcheck.impl.reference: my own.'''\n"
        "    a = x @ w\n    z = a + b\n    return a, z, np.maximum(z, 0)\n\n"
        "def numpy_forward(x, w, b):\n    return numpy_steps(x, w, b)[2]\n"
    )
    found = integrity.borrowed(write(tmp_path, source))
    assert not found and found.of("numpy_forward") is None and found.of("numpy_steps") is None, found


# spellings the source cannot show (issue 38): caught from what the loaded module's functions reach
HIDDEN_FORMS = {
    "import-from-strings": "import importlib\n_r = importlib.import_module('stackcheck.impl.' + 'refer' + 'ence')\n\n"
    "def numpy_forward(x, w, b):\n    return _r.numpy_forward(x, w, b)\n",
    "exec-of-the-source": "import os, stackcheck\n"
    "exec(open(os.path.join(os.path.dirname(stackcheck.__file__), 'impl', 'reference.py')).read())\n",
    "through-a-closure": "import importlib\n\ndef _make():\n    r = importlib.import_module('stackcheck.impl.' + "
    "'reference')\n    def numpy_forward(x, w, b):\n        return r.numpy_forward(x, w, b)\n    return numpy_forward\n"
    "\nnumpy_forward = _make()\n",
}


@pytest.mark.parametrize("form", list(HIDDEN_FORMS))
def test_a_solution_reached_however_spelled_borrows_once_the_file_has_run(tmp_path, form):
    path = write(tmp_path, HIDDEN_FORMS[form])
    found = integrity.with_reached(integrity.borrowed(path), load_module(path), {"numpy_forward"})
    assert found and found.of("numpy_forward"), found


def test_the_solutions_written_out_in_the_file_are_its_own(tmp_path):
    """The suite's own homework fixtures paste the reference's text: compiled from the student's file,
    that is the student's code (the installed reference is what a class gets stripped)."""
    from stackcheck.impl import reference

    path = write(tmp_path, Path(reference.__file__).read_text())
    assert integrity.with_reached(None, load_module(path), {"numpy_forward", "numpy_steps"}) is None


def test_the_check_never_runs_the_file(tmp_path):
    source = "raise SystemExit('ran')\nfrom stackcheck.impl.reference import numpy_forward\n"
    assert integrity.borrowed(write(tmp_path, source)).of("numpy_forward") == "stackcheck.impl.reference"


def test_a_borrowing_homework_earns_nothing_for_what_it_borrows(tmp_path):
    """numpy_steps is the student's own; numpy_forward re-exports the solution and fails when called."""
    path = tmp_path / "homework.py"
    path.write_text(
        "import numpy as np\nfrom stackcheck.impl import reference\n\nASSIGNED = ('math',)\n\n"
        "def numpy_steps(x, w, b):\n    a = x @ w\n    z = a + b\n    return a, z, np.maximum(z, 0)\n\n"
        "numpy_forward = reference.numpy_forward\n"
    )
    borrowing = integrity.borrowed(str(path))  # before the file runs
    impl = Impl(load_module(str(path)), assignment.assigned(["math"]), borrowing)
    assert impl.borrowed == {"numpy_forward": "stackcheck.impl.reference"}
    with pytest.raises(contract.Borrowed, match="borrowed: numpy_forward .* uses stackcheck.impl.reference"):
        impl.numpy_forward(None, None, None)
    a, z, y = impl.numpy_steps(np.ones((1, 2)), np.ones((2, 1)), np.full(1, -3.0))
    assert y.tolist() == [[0.0]], "the student's own function runs"
    assert "borrowed, earning nothing: numpy_forward" in impl.describe()


def test_a_solution_called_while_an_assigned_function_runs_borrows(tmp_path):
    """Issue 38: a module name built only when the function runs hides from every reading; the call
    into the solutions is caught as it happens, and only while an assigned function runs."""
    from stackcheck.impl import reference

    path = write(
        tmp_path,
        "import importlib as _il\n\ndef numpy_steps(x, w, b):\n"
        "    return _il.import_module('stackcheck.impl.' + 'refer' + 'ence').numpy_steps(x, w, b)\n",
    )
    impl = Impl(load_module(path), assignment.assigned(["math"]), integrity.with_reached(None, load_module(path), {}))
    assert not impl.borrowed, "no reading finds it"
    undo = integrity.tripwire(impl)
    try:
        x, w, b = np.ones((1, 2)), np.ones((2, 1)), np.full(1, -3.0)
        assert reference.numpy_steps(x, w, b)[2].tolist() == [[0.0]], "the suite's own calls still run"
        with pytest.raises(contract.Borrowed, match="numpy_steps .* called stackcheck.impl.reference.numpy_steps"):
            impl.numpy_steps(x, w, b)
        assert impl.borrowed == {"numpy_steps": "stackcheck.impl.reference.numpy_steps (called while it ran)"}
    finally:
        undo()
    assert reference.numpy_steps.__module__ == reference.__name__ and not hasattr(reference.numpy_steps, "__wrapped__")

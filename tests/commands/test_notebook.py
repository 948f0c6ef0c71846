"""Grading from a notebook (grader.commands.notebook): a function defined in cells is written out with what it uses
and graded by the command line, with the command line's verdict; the example notebook runs headless.

Cells are made as IPython makes them: each compiled under a file name of its own whose source linecache
holds, and run in one ``__main__`` namespace.
"""

import builtins
import dataclasses
import json
import linecache
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

from conftest import ROOT
from grader.commands.notebook import NotWritable, check, module_source
from grader.core.verdict_report import Report

CORRECT_SHIFT = """
def my_shift(seed, x):
    T = x.shape[0]
    padded = jnp.pad(x, ((0, 0), (1, 0)))
    return padded.reshape(2 * T, T)[1:].reshape(T, 2 * T - 1)[:, :T].reshape(-1)
"""


class Notebook:
    """A notebook's user namespace, filled cell by cell."""

    def __init__(self):
        self.namespace = {"__name__": "__main__", "__builtins__": builtins}
        self.files = []

    def cell(self, source: str) -> "Notebook":
        source = textwrap.dedent(source)
        filename = f"/tmp/ipykernel_0/{zlib.crc32(source.encode())}.py"  # as ipykernel names a cell
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        self.files.append(filename)
        exec(compile(source, filename, "exec"), self.namespace)
        return self

    def __getitem__(self, name: str):
        return self.namespace[name]


@pytest.fixture
def notebook():
    made = Notebook()
    yield made
    for filename in made.files:
        linecache.cache.pop(filename, None)


def command_line(*argv) -> Report:
    done = subprocess.run([sys.executable, "-m", "grader.cli", *map(str, argv), "--json"], cwd=ROOT,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return Report.from_json(done.stdout)


@pytest.mark.grading
def test_a_correct_function_passes_under_the_problems_name(notebook):
    notebook.cell("import jax.numpy as jnp\nunused = jnp.ones(3)  # built at run time, not needed")
    notebook.cell(CORRECT_SHIFT)
    result = check("rel_shift", notebook["my_shift"])
    assert (result.status, result.passed) == ("pass", True), repr(result)
    assert result.verdict.examples_run > 1 and result.verdict.isolation in ("namespaces", "none")
    assert not result.kept and not result.file.exists()  # a passing file is not kept
    assert repr(result).startswith("rel_shift: PASS - ")
    assert "PASS" in result._repr_html_()
    worked = result.example.counterexample  # the worked example, yours beside the reference's, drawn
    assert worked.name.startswith("worked example") and worked.actual == worked.expected
    assert result._repr_html_().count('<img src="data:image/png;base64,') == 1


@pytest.mark.grading
def test_a_wrong_function_fails_as_the_command_line_fails_its_file(notebook):
    notebook.cell("import jax.numpy as jnp").cell("""
        def shift(seed, x):
            T = x.shape[0]
            padded = jnp.pad(x[:, ::-1], ((0, 0), (1, 0)))  # offsets read the other way
            return padded.reshape(2 * T, T)[1:].reshape(T, 2 * T - 1)[:, :T].reshape(-1)
        """)
    result = check("rel_shift", notebook["shift"])
    assert result.status == "fail" and not result.passed
    assert result.verdict.pitfall.id == "reversed_direction"
    assert result.kept and result.file.is_file()  # kept, so that the replay works
    cli = command_line("rel_shift", "--file", result.file)
    for key in ("status", "message", "pitfall", "diagnosis"):
        assert getattr(result.verdict, key) == getattr(cli, key), key
    assert result.verdict.counterexample.call == cli.counterexample.call
    text = repr(result)
    assert text.startswith("rel_shift: FAIL - ") and "Likely mistake (reversed_direction)" in text
    assert str(result.file) in text and result.verdict.counterexample.replay in text
    page = result._repr_html_()
    assert '<b style="color:#cf222e">FAIL</b>' in page and "reversed_direction" in page and "Replay" in page
    assert page.count('<img src="data:image/png;base64,') == 1 and 'alt="expected | yours | where they differ' in page
    assert "<img" not in dataclasses.replace(result, plot=False)._repr_html_()
    replay = result.verdict.counterexample.replay.split()  # it runs from the checkout, on the kept file
    assert replay[replay.index("--file") + 1] == str(result.file) and (ROOT / replay[-1]).is_file()
    result.file.unlink()
    result.file.parent.rmdir()


@pytest.mark.grading
def test_helpers_classes_and_constants_of_other_cells_come_along(notebook):
    notebook.cell("""
        import jax
        import jax.numpy as jnp
        from flax import linen as nn
        from jax.numpy import sqrt as root
        EPS = 1e-6
        """).cell("""
        def mean_square(x):
            return jnp.mean(jnp.square(x), axis=-1, keepdims=True)
        """).cell("""
        class RMSNorm(nn.Module):
            eps: float = EPS

            @nn.compact
            def __call__(self, x: jax.Array) -> jax.Array:
                gamma = self.param("gamma", nn.initializers.ones, (x.shape[-1],))
                return gamma * (x / root(mean_square(x) + self.eps))
        """).cell("""
        table = jnp.zeros(4)  # built at run time, used by nothing graded

        def rmsnorm(seed: int, x: jax.Array, eps: float) -> jax.Array:
            x = jnp.asarray(x, jnp.float32)
            model = RMSNorm(eps=eps)
            params = model.init(jax.random.PRNGKey(seed), x)
            return model.apply(params, x).astype(jnp.float32).reshape(-1)
        """)
    text = module_source(notebook["rmsnorm"], "rmsnorm")
    for line in ("import jax\n", "import jax.numpy as jnp\n", "import flax.linen as nn\n",
                 "from jax.numpy import sqrt as root\n", "EPS = 1e-06\n", "def mean_square(x):",
                 "class RMSNorm(nn.Module):", "    @nn.compact\n", "def rmsnorm(seed: int"):
        assert line in text, line
    assert "table" not in text
    # each definition after what its own definition needs; the entry last
    assert text.index("EPS =") < text.index("class RMSNorm") < text.index("def rmsnorm")
    result = check("rmsnorm", notebook["rmsnorm"])
    assert result.status == "pass", repr(result)


def test_what_cannot_be_written_out_is_named(notebook):
    notebook.cell("""
        import jax
        import jax.numpy as jnp
        KEY = jax.random.PRNGKey(0)
        SIZES = (1, 2.5, "three", None, [float("inf")], {"a": frozenset({1})})

        def helper(x):
            return x + KEY[0] + len(SIZES)

        def shift(seed, x):
            def inner(y):
                return y
            return helper(inner(x))
        """)
    with pytest.raises(NotWritable, match=r"^'KEY', which your function helper uses, is an object of type \w+"):
        module_source(notebook["shift"], "rel_shift")
    result = check("rel_shift", notebook["shift"])
    assert result.status == "error" and not result.passed and result.file is None
    message = result.verdict.message
    assert message.startswith("'KEY', which your function helper uses") and "source=" in message
    assert repr(result) == f"rel_shift: ERROR - {result.verdict.message}"
    notebook.cell("KEY = 3")  # a plain constant instead: now it can be written, with the tuple's odd members
    text = module_source(notebook["shift"], "rel_shift")
    assert "KEY = 3\n" in text and "SIZES = (1, 2.5, 'three', None, [float(\"inf\")], {'a': frozenset({1})})" in text
    namespace = {}
    exec(compile(text, "<written>", "exec"), namespace)  # not called: it compiles, imports and binds
    assert namespace["SIZES"][4][0] == float("inf") and callable(namespace["rel_shift"])


@pytest.mark.grading
def test_calls_that_grade_nothing_say_why(notebook):
    notebook.cell("""
        import flax.linen as nn

        class Norm(nn.Module):
            def __call__(self, x):
                return x

        def outer():
            def nested(seed, x):
                return x
            return nested
        """)
    assert "not the class Norm" in check("rmsnorm", notebook["Norm"]).verdict.message
    with pytest.raises(NotWritable, match="defined inside another function"):
        module_source(notebook["outer"](), "rel_shift")
    assert "neither" in check("rel_shift").verdict.message
    message = check("../rel_shift", notebook["outer"]).verdict.message
    assert message == "'../rel_shift' is not a problem's name (e.g. 'rel_shift')"
    assert check("rel_shift", source="no/such/file.py").verdict.message == "no file at no/such/file.py"
    unknown = check("no_such_problem", source="x = 1\n")  # the command line's usage error
    assert unknown.status == "error" and "no_such_problem" in unknown.verdict.message
    unknown.file.unlink()
    unknown.file.parent.rmdir()


@pytest.mark.grading
def test_a_source_string_is_graded_as_a_module():
    result = check("rel_shift", source="import jax.numpy as jnp\n" + CORRECT_SHIFT + "\nrel_shift = my_shift\n")
    assert result.status == "pass", repr(result)


@pytest.mark.grading
def test_import_grader_stays_light():
    code = "import grader, sys; print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'jax', 'grader')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "['grader']"


@pytest.mark.grading
def test_the_example_notebook_runs_headless(tmp_path, monkeypatch):
    import nbclient
    import nbformat

    # A kernel of this interpreter (the virtual environment's), found before any installed elsewhere.
    spec = tmp_path / "jupyter" / "kernels" / "katas-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "flax-katas test", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    path = ROOT / "docs" / "notebook.ipynb"
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells), "the committed notebook keeps no outputs"
    nbclient.NotebookClient(nb, timeout=50, kernel_name="katas-test",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    checks = {c.source: c.outputs for c in nb.cells if c.source.startswith("check(")}
    assert list(checks) == ['check("rel_shift", rel_shift)', 'check("rel_shift", rel_shift_padded_after)']
    good, bad = (outputs for outputs in checks.values())
    for outputs in (good, bad):  # the result, displayed; nothing printed
        assert [o.output_type for o in outputs] == ["execute_result"], outputs
    assert good[0].data["text/plain"].startswith("rel_shift: PASS - ")
    assert "PASS</b>" in good[0].data["text/html"]
    for outputs in (good, bad):  # a figure under each report: the worked example, and the failure
        assert outputs[0].data["text/html"].count('<img src="data:image/png;base64,') == 1
    text = bad[0].data["text/plain"]
    assert text.startswith("rel_shift: FAIL - ") and "Likely mistake (pad_wrong_side)" in text
    assert "FAIL</b>" in bad[0].data["text/html"] and "pad_wrong_side" in bad[0].data["text/html"]
    kept = Path(text.split("Your code as graded is kept in ")[1].splitlines()[0])
    assert kept.read_text().rstrip().endswith("rel_shift = rel_shift_padded_after")
    kept.unlink()
    kept.parent.rmdir()


def test_writing_out_a_function_runs_none_of_the_notebooks_code(notebook, tmp_path):
    """The learner's globals are read as they are: an object whose attribute lookups run code (a
    ``__getattr__``, a ``__class__`` property, a metaclass's ``__getattribute__``) runs nothing in the
    notebook's process; it is named as what it is."""
    marker = tmp_path / "ran"
    notebook.cell(f"""
        import jax.numpy as jnp

        def _ran(*_):
            open({str(marker)!r}, "a").write("ran")

        class Trap:
            def __getattr__(self, name):
                _ran()
                return lambda *a: None

            @property
            def __class__(self):
                _ran()
                return type

        class Meta(type):
            def __getattribute__(cls, name):
                _ran()
                return type.__getattribute__(cls, name)

        class Shifter(metaclass=Meta):
            def shift(self, x):
                return x

        TRAP = Trap()
        """)
    notebook.cell(CORRECT_SHIFT.replace("return padded", "TRAP.x\n    return padded"))
    with pytest.raises(NotWritable, match=r"^'TRAP', which your function my_shift uses, is an object of type Trap"):
        module_source(notebook["my_shift"], "rel_shift")
    notebook.cell(CORRECT_SHIFT.replace("return padded", "Shifter().shift(x)\n    return padded"))
    text = module_source(notebook["my_shift"], "rel_shift")
    assert "class Shifter(metaclass=Meta):" in text and "class Meta(type):" in text
    assert not marker.exists()

"""An instructor's mistake in a problem's files is one sentence naming the file and the key (or what
importing the file raised), never a traceback: `grade` exits 2 on it and `grade list` shows the broken
problem on its own row among the others.

Each case copies a problem into a temporary checkout and breaks one thing in it.
"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT
from grader import cli
from grader.problem import problems
from grader.instructor import check

TOML = "problems/rmsnorm/problem.toml"
STRATEGIES = "problems/rmsnorm/strategies.py"
PROPERTIES = "problems/rmsnorm/properties.py"
HOOKS = "solutions/rmsnorm/grading.py"


def copy_problem(root, slug):
    for side in ("problems", "solutions"):
        shutil.copytree(ROOT / side / slug, root / side / slug)


@pytest.fixture
def checkout(tmp_path):
    """A temporary checkout holding a copy of rmsnorm."""
    copy_problem(tmp_path, "rmsnorm")
    return tmp_path


def edit(root, rel, old, new):
    """Replace ``old`` by ``new`` in one file, failing if ``old`` is not there (so the case breaks what it says)."""
    path = root / rel
    text = path.read_text()
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1))


def assert_one_clean_sentence(message):
    assert message.strip() and "\n" not in message
    assert "Traceback" not in message and 'File "' not in message


def load_error(root, slug="rmsnorm"):
    with pytest.raises(problems.ProblemError) as info:
        problems.load(root, slug)
    message = str(info.value)
    assert_one_clean_sentence(message)
    return message


def problem_error(call):
    with pytest.raises(problems.ProblemError) as info:
        call()
    message = str(info.value)
    assert_one_clean_sentence(message)
    return message


# (what is wrong, text in problem.toml, what replaces it, the key the message must name)
TOML_MISTAKES = [
    ("an unknown argument kind", 'eps = "float"', 'eps = "double"', "args.eps"),
    ("an argument kind that is not a string", 'eps = "float"', "eps = 3", "args.eps"),
    ("a string kind whose choices are malformed", 'eps = "float"', 'eps = "str:a||b"', "args.eps"),
    ("call_seconds that is not a number", "call_seconds = 20", 'call_seconds = "abc"', "limits.call_seconds"),
    ("a zero problem_seconds", "problem_seconds = 90", "problem_seconds = 0", "limits.problem_seconds"),
    ("a fractional memory_mib", "memory_mib = 3072", "memory_mib = 3072.5", "limits.memory_mib"),
    ("a max_examples that is not positive", "max_examples = 20", "max_examples = -1", "hypothesis.max_examples"),
    ("no [output] table", '[output]\ndtype = "float32"\nshape = ["x.shape"]\n', "", "[output]"),
    ("an output dtype numpy does not know", 'dtype = "float32"', 'dtype = "floaty"', "output.dtype"),
    ("an output dtype that is not a kind of array", 'dtype = "float32"', 'dtype = "complex64"', "output.dtype"),
    ("an output shape that is not a list of strings", 'shape = ["x.shape"]', "shape = 3", "output.shape"),
    ("an output shape naming no argument", 'shape = ["x.shape"]', 'shape = ["y.shape"]', "output.shape"),
    ("an output shape using a float as a size", 'shape = ["x.shape"]', 'shape = ["eps"]', "output.shape"),
    ("output axes that are not strings", 'shape = ["x.shape"]', 'shape = ["x.shape"]\naxes = [1, 2]', "output.axes"),
    ("output axes not matching the shape's rank", 'shape = ["x.shape"]', 'shape = ["x.shape"]\naxes = ["i"]', "output.axes"),
    ("a negative rtol", "rtol = 1e-5", "rtol = -1e-5", "tolerance.rtol"),
    ("an atol that is a string", "atol = 1e-6", 'atol = "tiny"', "tolerance.atol"),
    ("neither exact nor atol", "atol = 1e-6\n", "", "tolerance.atol"),
    ("exact as well as rtol and atol", "rtol = 1e-5", "exact = true\nrtol = 1e-5", "tolerance.exact"),
    ("exact that is not a bool", "rtol = 1e-5\natol = 1e-6", 'exact = "yes"', "tolerance.exact"),
    ("a title that is not a string", 'title = "RMSNorm (T5 layer norm) as a Flax linen module"', "title = 3", "title"),
    ("an entry other than the folder name", 'entry = "rmsnorm"', 'entry = "rms_norm"', "entry"),
    ("an example whose args miss a key", "args = { seed = 2, x = [3.0, 4.0, 0.0, 0.0], eps = 1e-6 }",
     "args = { seed = 2, x = [3.0, 4.0, 0.0, 0.0] }", "examples[2].args.eps"),
    ("an example with an argument the problem does not have", "eps = 1e-6 }", "eps = 1e-6, gamma = 1.0 }",
     "examples[1].args.gamma"),
    ("an example argument of the wrong kind", "args = { seed = 0,", 'args = { seed = "zero",', "examples[0].args.seed"),
    ("an example without a name", 'name = "rank-1 input"\n', "", "examples[2].name"),
    ("an example's expected with the wrong shape", "expected = [[0.5763904, -1.1527808, 1.1527808], ",
     "expected = [", "examples[0].expected"),
    ("an example's expected that is ragged", "expected = [[0.5763904, -1.1527808, 1.1527808], ",
     "expected = [[0.5763904], ", "examples[0].expected"),
    ("an example's expected that holds strings", "expected = [[0.5763904,", 'expected = [["a",', "examples[0].expected"),
    ("an unknown key", "call_seconds = 20", "call_seconds = 20\ncall_second = 20", "limits.call_second"),
    ("an unknown top-level table", "[hypothesis]", "[hypothesis]\nmax_examples = 20\n[hypotheses]", "hypotheses"),
    ("an unknown key in an example", 'name = "rank-1 input"', 'name = "rank-1 input"\nexpect = [1.0]', "examples[2].expect"),
    ("positions naming an argument that is no array", "order = 40", "order = 40\npositions = { eps = 0 }",
     "positions.eps"),
    ("positions naming no argument", "order = 40", "order = 40\npositions = { y = 0 }", "positions.y"),
    ("a position axis that is negative", "order = 40", "order = 40\npositions = { x = -1 }", "positions.x"),
    ("positions that are no table", "order = 40", "order = 40\npositions = 0", "positions"),
]


@pytest.mark.parametrize("old, new, key", [case[1:] for case in TOML_MISTAKES],
                         ids=[case[0] for case in TOML_MISTAKES])
def test_a_mistake_in_problem_toml_names_the_file_and_the_key(checkout, old, new, key):
    edit(checkout, TOML, old, new)
    message = load_error(checkout)
    assert message.startswith(f"{TOML}: ") and key in message


def test_problem_toml_that_is_not_toml_names_the_file_and_the_line(checkout):
    edit(checkout, TOML, "call_seconds = 20", "call_seconds = ")
    message = load_error(checkout)
    assert TOML in message and "line" in message


def test_the_unchanged_copy_loads(checkout):
    problem = problems.load(checkout, "rmsnorm")
    assert len(problem.examples) == 3 and problem.validate_strategy()
    assert problem.properties() is not None and problem.hooks() is None


def test_check_args_keeps_python_scalars_and_contiguous_arrays_of_the_declared_dtype(checkout):
    problem = problems.load(checkout, "rmsnorm")
    args = problem.check_args({"seed": np.int64(3), "x": np.ones((3, 2))[:, ::2], "eps": np.float32(0.5)})
    assert type(args["seed"]) is int and type(args["eps"]) is float
    assert args["x"].dtype == np.float32 and args["x"].flags.c_contiguous


def test_check_args_names_the_argument_that_does_not_fit(checkout):
    problem = problems.load(checkout, "rmsnorm")
    message = problem_error(lambda: problem.check_args({"seed": 0.5, "x": np.ones(3, np.float32), "eps": 0.1}))
    assert "seed" in message and "int" in message


def test_call_text_writes_the_call_with_arrays_summarised(checkout):
    problem = problems.load(checkout, "rmsnorm")
    args = problem.check_args({"seed": 0, "x": np.zeros((2, 3), np.float32), "eps": 0.01})
    assert problem.call_text(args) == "rmsnorm(seed=0, x=<float32 array of shape (2, 3)>, eps=0.01)"


def test_a_strategies_file_with_a_syntax_error_names_the_file_and_the_error(checkout):
    edit(checkout, STRATEGIES, "@st.composite", "def broken(:\n    pass\n\n\n@st.composite")
    message = problem_error(problems.load(checkout, "rmsnorm").strategy)
    assert message.startswith(f"{STRATEGIES}: ") and "SyntaxError" in message


def test_a_strategies_file_that_fails_to_import_names_the_file_and_the_error(checkout):
    edit(checkout, STRATEGIES, "import numpy as np", "import numpy as np\nimport no_such_module")
    message = problem_error(problems.load(checkout, "rmsnorm").strategy)
    assert message.startswith(f"{STRATEGIES}: ") and "no_such_module" in message


def test_a_strategies_file_without_inputs_names_inputs(checkout):
    edit(checkout, STRATEGIES, "def inputs(draw)", "def generate(draw)")
    message = problem_error(problems.load(checkout, "rmsnorm").strategy)
    assert message.startswith(f"{STRATEGIES}: ") and "inputs" in message


def test_inputs_that_returns_no_strategy_says_so(checkout):
    edit(checkout, STRATEGIES, "@st.composite\ndef inputs(draw):", "def inputs():\n    return {}\n\n\ndef unused(draw):")
    message = problem_error(problems.load(checkout, "rmsnorm").strategy)
    assert message.startswith(f"{STRATEGIES}: ") and "not a Hypothesis strategy" in message


def test_inputs_that_raises_when_drawn_names_the_file_and_the_error(checkout):
    edit(checkout, STRATEGIES, "eps = draw(EPS)", "eps = draw(EPS) / 0")
    message = problem_error(problems.load(checkout, "rmsnorm").validate_strategy)
    assert message.startswith(f"{STRATEGIES}: ") and "ZeroDivisionError" in message and "line" in message


def test_inputs_that_draws_nothing_says_so(checkout):
    edit(checkout, STRATEGIES, "SEEDS = st.sampled_from([0, 1, 2])", "SEEDS = st.nothing()")
    message = problem_error(problems.load(checkout, "rmsnorm").validate_strategy)
    assert message.startswith(f"{STRATEGIES}: ") and "draws nothing" in message


def test_a_strategy_drawing_a_wrong_typed_argument_names_the_argument(checkout):
    edit(checkout, STRATEGIES, "seed = draw(SEEDS)", "seed = str(draw(SEEDS))")
    message = problem_error(problems.load(checkout, "rmsnorm").validate_strategy)
    assert message.startswith(f"{STRATEGIES}: ") and "seed" in message and "must be an int" in message


def test_a_strategy_drawing_a_missing_argument_names_the_argument(checkout):
    edit(checkout, STRATEGIES, '"eps": eps}', "}")
    message = problem_error(problems.load(checkout, "rmsnorm").validate_strategy)
    assert message.startswith(f"{STRATEGIES}: ") and "eps" in message and "missing" in message


def test_a_properties_file_without_PROPERTIES_names_PROPERTIES(checkout):
    edit(checkout, PROPERTIES, "PROPERTIES = [", "CHECKS = [")
    message = problem_error(problems.load(checkout, "rmsnorm").properties)
    assert message.startswith(f"{PROPERTIES}: ") and "PROPERTIES" in message


def test_PROPERTIES_that_are_not_functions_name_PROPERTIES(checkout):
    edit(checkout, PROPERTIES, "PROPERTIES = [unit_rms_per_row,", 'PROPERTIES = ["unit_rms_per_row",')
    message = problem_error(problems.load(checkout, "rmsnorm").properties)
    assert message.startswith(f"{PROPERTIES}: ") and "PROPERTIES" in message


def test_a_grading_hooks_file_that_raises_on_import_names_the_file_and_the_error(checkout):
    (checkout / HOOKS).write_text('"""Hooks."""\n\nraise RuntimeError("hook tables not built")\n')
    message = problem_error(problems.load(checkout, "rmsnorm").hooks)
    assert message.startswith(f"{HOOKS}: ") and "RuntimeError at line 3: hook tables not built" in message


def test_a_hooks_file_that_exits_on_import_is_a_problem_error_too(checkout):
    (checkout / HOOKS).write_text("import sys\nsys.exit(3)\n")
    message = problem_error(problems.load(checkout, "rmsnorm").hooks)
    assert message.startswith(f"{HOOKS}: ") and "SystemExit" in message


@pytest.mark.grading
def test_grade_on_a_malformed_problem_exits_2_with_one_json_error_and_no_traceback(checkout, tmp_path_factory):
    edit(checkout, TOML, "call_seconds = 20", 'call_seconds = "abc"')
    env = dict(os.environ, GRADE_CACHE_DIR=str(tmp_path_factory.mktemp("cache")), GRADE_WARM_SECONDS="0")
    done = subprocess.run([sys.executable, "-m", "grader.cli", "rmsnorm", "--json"], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)  # exactly one JSON document
    assert report["status"] == "error"
    assert TOML in report["message"] and "limits.call_seconds" in report["message"]


def test_grade_list_shows_a_broken_problem_on_its_own_row_and_lists_the_others(checkout, monkeypatch, capsys):
    copy_problem(checkout, "t5_relative_pos")
    edit(checkout, "problems/t5_relative_pos/problem.toml", "call_seconds = 20", 'call_seconds = "abc"')
    monkeypatch.chdir(checkout)
    code = cli.cmd_list([])
    out = capsys.readouterr().out
    assert code == 0
    *lines, progress = out.splitlines()
    rows = dict(line.split(None, 1) for line in lines)
    assert set(rows) == {"rmsnorm", "t5_relative_pos"} and progress == "0 of 2 passed"
    assert "RMSNorm" in rows["rmsnorm"] and "not graded yet" in rows["rmsnorm"]
    assert rows["t5_relative_pos"].strip().startswith("broken: problems/t5_relative_pos/problem.toml: ")
    assert "limits.call_seconds" in rows["t5_relative_pos"]


def test_grade_list_exits_2_when_every_problem_is_broken(checkout, monkeypatch, capsys):
    edit(checkout, TOML, "call_seconds = 20", 'call_seconds = "abc"')
    monkeypatch.chdir(checkout)
    assert cli.cmd_list([]) == 2
    assert "broken: " in capsys.readouterr().out


@pytest.mark.parametrize("rel, old, new, named", [
    ("problems/mini_t5_forward/mini_t5_forward.py", "self.query = nn.Dense(self.d_model, use_bias=False)",
     "self.query = nn.Dense(self.d_model)", "MultiHeadAttention.setup"),
    ("problems/mini_t5_forward/mini_t5_forward.py", "    d_ff: int", "    d_ff: int = 8", "FeedForward"),
    ("solutions/mini_t5_forward/mini_t5_forward.py", "class FeedForward(nn.Module):", "class FFN(nn.Module):",
     "FeedForward is not in the reference"),
])
def test_check_flags_a_stub_that_gives_other_code_than_the_reference(tmp_path, rel, old, new, named):
    """What a stub gives the learner (its classes, fields, setup, signatures) must be the reference's: a
    drifted setup() would hand learners a module tree they cannot match."""
    copy_problem(tmp_path, "mini_t5_forward")
    problem = problems.load(tmp_path, "mini_t5_forward")
    assert check.stub_drift(problem.stub, problem.reference) == []
    edit(tmp_path, rel, old, new)
    rows = {row.item: row for row in check.check_metadata(problem)}
    assert not rows["stub"].ok and named in rows["stub"].detail, rows["stub"].detail

"""``grade new <slug>``: a new problem's two folders, every file in place, ready for ``grade check``.

The files form a small working problem (the entry returns its array argument unchanged), so that
``grade check <slug>`` runs at once; every place the author still has to write is marked
``TODO(author)``, and ``grade check`` lists those places on its ``authoring`` row until none is left.
"""

from __future__ import annotations

import argparse
import keyword

from grader.core.exits import Exit, usage_error
from grader.problem import problems
from grader.problem import checkout

MARKER = "TODO(author)"

STATEMENT = '''# {title}

<!-- {marker}: replace every section below; `grade check {slug}` lists what is left. -->

## Why it matters
{marker}: where this primitive is used, and what goes wrong without it.

## What to compute
{marker}: the algorithm, with every convention the grader holds the learner to (shapes, dtype,
flattening, which axis is which).

## Worked example
{marker}: a small input and its output, with the numbers (the first `[[examples]]` entry of
`problem.toml`, whose `expected` the grader checks against the reference).

## Pitfalls
{marker}: every known mistake the grader names (one per entry of `solutions/{slug}/pitfalls.toml`),
in the learner's terms.

## Hints
{marker}: a few hints, the last one close to the answer but never the code.

## Input domain
{marker}: exactly what the grader generates (`strategies.py`): sizes, value ranges, special cases.
'''

DOCSTRING = '''"""{marker}: one line saying what the function computes.

    Args:
        seed: int, seeds jax.random.PRNGKey for any parameters.
        x: (N, D) float32. {marker}: what it holds.

    Returns:
        (N * D,) float32: {marker}: the natural-shape output, flattened row by row.
    """'''

STUB = '''"""{marker}: one line naming the primitive."""

import jax.numpy as jnp  # noqa: F401


def {slug}(seed, x):
    {docstring}
    # TODO: {marker}: say the task in one or two lines, as the learner should read it.
    raise NotImplementedError
'''

REFERENCE = '''"""{marker}: one line naming the primitive."""

import jax.numpy as jnp


def {slug}(seed, x):
    {docstring}
    del seed  # {marker}: use it where parameters are built: jax.random.PRNGKey(seed)
    return jnp.asarray(x, jnp.float32).reshape(-1)  # {marker}: the reference solution
'''

METADATA = '''title = "{marker}: a short title"
entry = "{slug}"
order = 1000  # {marker}: where the problem comes in the learning order (`grade list` sorts by it)

[args]  # in signature order; kinds: "int", "bool", "float", "str", "str:<a>|<b>...", "array:<dtype>"
seed = "int"
x = "array:float32"

[output]
dtype = "float32"
shape = ["x.shape"]  # the natural shape, as expressions over the arguments
axes = ["n", "d"]  # names of its axes in reports

[tolerance]
rtol = 1e-5  # {marker}: what correct float32 rewrites need, far below what any known mistake is off by
atol = 1e-6

[limits]
call_seconds = 20
problem_seconds = 90
memory_mib = 3072

[hypothesis]
max_examples = 20

[[examples]]
name = "worked example from the statement"  # {marker}: the statement's example
args = {{ seed = 0, x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] }}
expected = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
'''

STRATEGIES = '''"""Generated inputs for {slug}.

{marker}: say what the strategy draws and why those sizes and values catch the known mistakes.
Every distinct combination of integer arguments and array shapes compiles once: draw shapes from
a short menu, values freely.
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

SHAPES = st.sampled_from([(2, 3), (1, 4), (3, 1), (4, 2)])  # (N, D); {marker}: vary every size
VALUES = st.floats(min_value=-10.0, max_value=10.0, width=32)


@st.composite
def _case(draw):
    shape = draw(SHAPES)
    return {{"seed": 0, "x": draw(hnp.arrays(np.float32, shape, elements=VALUES))}}


def inputs():
    """Strategy of argument dicts {{"seed", "x"}}."""
    return _case()
'''

PROPERTIES = '''"""Reference-free properties of an output, checked on a failing output to say what is off.

Each check takes the inputs and the output in its natural shape and returns None when the property
holds, or one sentence saying where it breaks. {marker}: write the checks, or delete this file.
"""

import numpy as np


def finite(args, out):
    """Every value is finite."""
    bad = np.argwhere(~np.isfinite(out))
    if bad.size:
        return f"the output holds {{out[tuple(bad[0])]}} at {{tuple(int(i) for i in bad[0])}}; every value must be finite"
    return None


PROPERTIES = [finite]
'''

PITFALLS = '''# Known-wrong variants of {slug}: each is the reference with its replacements applied (every `old`
# must occur exactly once). For a model, a mistake that changes a whole part can instead be a file
# pitfalls/<id>.py that overrides that part (see docs/authoring.md).

[[pitfall]]
id = "doubled"  # {marker}: one entry per known mistake; this one shows the format
doc = "{marker}: one line naming the mistake, for instructors."
message = """{marker}: what the learner reads when their output matches this mistake: what it is, how to
recognise it in the output, how to fix it, without handing over the code."""
replace = [
  {{ old = ".reshape(-1)  #", new = ".reshape(-1) * 2  # MISTAKE:" }},
]
'''

HINTS = '''# Hints for `grade hint {slug}`, shown one at a time: gentlest first, the last close to the answer,
# never code.

[[hint]]
text = "{marker}: what the learner should look at first."

[[hint]]
text = "{marker}: the step most learners get wrong, and how to check it."

[[hint]]
text = "{marker}: close to the answer, in words."
'''

ALTERNATIVE = '''"""A correct solution in plain NumPy, in float64. {marker}: write the reference another way."""

import numpy as np


def {slug}(seed, x):
    {docstring}
    return np.asarray(x, np.float64).astype(np.float32).reshape(-1)
'''


def files(slug: str) -> dict[str, str]:
    """Relative path -> text of every file of the new problem."""
    fill = {"slug": slug, "marker": MARKER, "title": f"{slug}: {MARKER}",
            "docstring": DOCSTRING.format(marker=MARKER)}
    return {
        f"problems/{slug}/README.md": STATEMENT.format(**fill),
        f"problems/{slug}/{slug}.py": STUB.format(**fill),
        f"problems/{slug}/problem.toml": METADATA.format(**fill),
        f"problems/{slug}/strategies.py": STRATEGIES.format(**fill),
        f"problems/{slug}/properties.py": PROPERTIES.format(**fill),
        f"problems/{slug}/hints.toml": HINTS.format(**fill),
        f"solutions/{slug}/{slug}.py": REFERENCE.format(**fill),
        f"solutions/{slug}/pitfalls.toml": PITFALLS.format(**fill),
        f"solutions/{slug}/alternatives/numpy_float64.py": ALTERNATIVE.format(**fill),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grade new", description=__doc__.splitlines()[0])
    parser.add_argument("slug", help="the new problem's name: lower case, digits and _, e.g. alibi_bias")
    args = parser.parse_args(argv)
    slug = args.slug
    if not (slug.isidentifier() and slug == slug.lower() and not keyword.iskeyword(slug)):
        return usage_error(f"{slug!r} cannot be a problem's name: use lower case letters, digits and _, "
                           "starting with a letter (it is also the module's and the function's name)")
    try:
        root = checkout.find_root()
    except problems.UsageError as exc:
        return usage_error(str(exc))
    taken = [f"{part}/{slug}" for part in ("problems", "solutions") if (root / part / slug).exists()]
    if taken:
        return usage_error(f"{' and '.join(taken)} already exist{'s' if len(taken) == 1 else ''}; "
                           "nothing was written (choose another name, or remove them first)")
    written = files(slug)
    for rel, text in written.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    print(f"Wrote a working skeleton of {slug}:")
    for rel in written:
        print(f"  {rel}")
    print(f"\nEvery place left to write is marked {MARKER}. The problem grades already:\n"
          f"  grade check {slug}        lists what is left (its `authoring` row) and checks everything else\n"
          f"  grade check {slug} --update-golden   once the reference is right\n"
          "docs/authoring.md explains every file.")
    return Exit.OK

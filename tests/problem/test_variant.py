"""Known-wrong variants and alternatives that override parts of the reference, alone: a private copy of the
reference, the parts put in place, the reference itself untouched, constants read without importing."""

from __future__ import annotations

import pytest

from conftest import ROOT
from grader.problem import variant

FOLDER = ROOT / "solutions" / "mini_t5_forward" / "pitfalls"


def test_override_puts_classes_and_functions_in_a_private_copy():
    reference = variant.reference_of(str(FOLDER / "anything.py"))
    other = variant.reference_of(str(FOLDER / "another.py"))
    assert reference is not other and reference.RMSNorm is not other.RMSNorm  # each variant its own copy

    class RMSNorm(reference.RMSNorm):
        pass

    def helper():
        return "mine"

    reference.helper = lambda: "theirs"  # a function of the copy, as a reference's module-level helper
    entry = variant.override(reference, RMSNorm, helper)
    assert entry is reference.mini_t5_forward and reference.RMSNorm is RMSNorm and reference.helper is helper
    assert other.RMSNorm is not RMSNorm  # nothing leaks into another copy


@pytest.mark.parametrize("part", ["class", "function"])
def test_override_refuses_a_part_the_reference_does_not_have(part):
    reference = variant.reference_of(str(FOLDER / "anything.py"))
    if part == "class":
        class NoSuchPart:
            pass
        thing = NoSuchPart
    else:
        def RMSNorm():  # a function where the reference has a class
            pass
        thing = RMSNorm
    with pytest.raises(ValueError, match="has no class or function named"):
        variant.override(reference, thing)


def test_a_variants_constants_are_read_without_importing_it(tmp_path):
    path = tmp_path / "mistake.py"
    path.write_text('raise SystemExit("imported")\nMESSAGE = "You forgot it."\nSTAGE = "finite"\n')
    assert variant.notes(path) == ("You forgot it.", None, "finite")
    path.write_text("MESSAGE = 'a' + 'b'\n")
    with pytest.raises(ValueError):
        variant.read_constant(path, "MESSAGE")

"""The numeric-aware output comparator used by nbval and the doctests."""

import doctest

import pytest

from numeric_text import (
    NumericOutputChecker,
    Tolerance,
    compare_text,
    parse_tolerance,
    split_numbers,
)


def agree(a, b, tol=None):
    return compare_text(a, b, parse_tolerance(tol)) == []


@pytest.mark.parametrize("ref, new", [
    ("0.6553", "0.6554"),             # last-digit rounding flip
    ("x = -0.0", "x = 0.0"),           # signed zero
    ("6e-05", "7e-05"),                # scientific: one unit is 1e-05
    ("1.25e+03", "1.26e+03"),          # one unit is 10
    ("211,277 parameters", "211,278 parameters"),
    ("12.5%", "12.6%"),
    ("nan", "nan"),
    ("-inf", "-inf"),
    ("error=0.12,", "error=0.13,"),    # glued to text
    ("| 0.000 |", "|-0.000 |"),        # a column shifted by the sign
    ("n  =  12", "n = 12"),            # runs of spaces count as one
])
def test_default_tolerance_is_one_unit_in_the_last_digit(ref, new):
    assert agree(ref, new)


@pytest.mark.parametrize("ref, new", [
    ("0.6553", "0.6555"),
    ("6e-05", "4e-05"),                # the reader's solver residual of issue 9
    ("36.7109", "36.7114"),
    ("211,277", "211,279"),
    ("12.5%", "12.7%"),
    ("nan", "0.0"),
    ("inf", "-inf"),
    ("1", "3"),
])
def test_numbers_beyond_one_unit_fail(ref, new):
    assert not agree(ref, new)


@pytest.mark.parametrize("ref, new", [
    ("error 0.12", "errors 0.12"),          # a changed word
    ("a 1 b 2", "a 1 b"),                    # a changed count of numbers
    ("a 1, b 2", "a 1; b 2"),                # punctuation is text
    ("line\nline", "line"),                  # a missing line
    ("x0 = 1", "x1 = 1"),                    # digits inside identifiers are text
    ("size 640x400", "size 960x570"),        # digits glued to letters are text
])
def test_text_must_match_exactly(ref, new):
    assert not agree(ref, new)


def test_split_numbers_tokens():
    segments, tokens = split_numbers("float64 U4(n)=-3.5e-2; 1,234,567 and .5 or 7.")
    assert tokens == ["-3.5e-2", "1,234,567", ".5", "7."]
    assert segments[0] == "float64 U4(n)="


def test_declared_tolerance_applies_to_matching_lines_only():
    tol = [{"lines": "rate", "abs": 0.02, "reason": "PCD is chaotic; SE 0.005 over 8 seeds"}]
    ref = "rate 0.152 +- 0.005\ncount 12"
    assert agree(ref, "rate 0.140 +- 0.006\ncount 12", tol)
    assert not agree(ref, "rate 0.140 +- 0.006\ncount 14", tol)   # other lines: default
    assert not agree(ref, "rate 0.100 +- 0.006\ncount 12", tol)   # beyond the declared bound


def test_relative_tolerance_and_first_matching_rule():
    tol = [{"lines": "^a", "rel": 0.1, "reason": "r"}, {"abs": 5, "reason": "s"}]
    assert agree("a 100\nb 10", "a 109\nb 14", tol)
    assert not agree("a 100\nb 10", "a 111\nb 10", tol)


def test_mismatch_report_names_number_reference_value_and_tolerance():
    tol = parse_tolerance({"abs": 0.01, "reason": "standard error 0.002 over 20 seeds"})
    (m,) = compare_text("gap 0.50 and 0.70", "gap 0.50 and 0.75", tol)
    text = str(m)
    assert "line 1" in text and "number 2" in text and "0.75" in text and "0.70" in text
    assert "0.01" in text and "standard error 0.002 over 20 seeds" in text


@pytest.mark.parametrize("spec, error", [
    ({"abs": 0.1}, ValueError),                          # no reason
    ({"abs": 0.1, "reason": "  "}, ValueError),          # empty reason
    ({"reason": "x"}, ValueError),                       # neither abs nor rel
    ({"abs": -1, "reason": "x"}, ValueError),
    ({"abs": float("nan"), "reason": "x"}, ValueError),
    ({"abs": "0.1", "reason": "x"}, TypeError),
    ({"abs": 0.1, "reason": "x", "bogus": 1}, ValueError),
    ({"abs": 0.1, "reason": "x", "lines": "("}, ValueError),
    ("0.1", TypeError),
])
def test_bad_tolerance_metadata_is_rejected(spec, error):
    with pytest.raises(error):
        parse_tolerance(spec)


def test_compare_text_validates_its_arguments():
    with pytest.raises(TypeError, match="reference"):
        compare_text(1.0, "1.0")
    with pytest.raises(TypeError, match="tolerances"):
        compare_text("1", "1", [{"abs": 1}])
    assert isinstance(parse_tolerance({"abs": 1, "reason": "x"})[0], Tolerance)


def test_doctest_checker_accepts_last_digit_differences_only():
    checker = NumericOutputChecker()
    assert checker.check_output("0.0\n", "-0.0\n", 0)
    assert checker.check_output("[0.1234 0.5]\n", "[0.1235 0.5]\n", 0)
    assert not checker.check_output("0.12\n", "0.15\n", 0)
    assert not checker.check_output("True\n", "False\n", 0)
    assert checker.check_output("a ...\n", "a b c\n", doctest.ELLIPSIS)

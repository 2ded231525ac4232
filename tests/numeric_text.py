"""Numeric-aware comparison of printed output, for nbval and doctests.

A notebook's committed output was printed on one machine; a reader re-runs it
on another CPU (other BLAS kernels, other last bits) or, in the realisation
check, with other seeds. Comparing the text character by character then fails
for reasons that say nothing about the book. This module compares *text
exactly* and *numbers within a tolerance*:

* the printed text is split into text segments and numbers (integers,
  decimals, scientific notation, thousands separators, signs, ``nan``,
  ``inf``); the text segments must be identical and the count of numbers must
  agree (runs of spaces count as one space, and spaces next to a number do not
  count, so a table column that shifts for a minus sign or an extra digit still
  matches);
* each number must agree with its reference within one unit in the last
  printed digit (the coarser of the two), or within a looser tolerance that a
  notebook cell declares in its metadata together with the statistical reason.

A cell declares a tolerance under the metadata key ``"tolerance"``: one rule,
or a list of rules, each a mapping with ``"abs"`` and/or ``"rel"``, a
mandatory one-line ``"reason"``, and an optional ``"lines"`` regular
expression restricting the rule to output lines that match it. The first rule
that matches a line applies to all numbers on that line; numbers on other lines
keep the default of one unit in the last digit::

    "tolerance": [{"lines": "relaxation rate", "abs": 0.02,
                   "reason": "8 PCD runs, SE 0.003: < 6 SE apart"}]

Used by ``notebooks/conftest.py`` (nbval) and ``tests/test_doctests.py``; a test tool, not part
of the library.
"""

from __future__ import annotations

import dataclasses
import doctest
import math
import re

__all__ = [
    "Tolerance",
    "Mismatch",
    "split_numbers",
    "parse_tolerance",
    "compare_text",
    "NumericOutputChecker",
    "run_doctests",
]

# A number: optional sign, then thousands-grouped digits, plain digits or a
# leading-dot fraction, optional exponent; or nan/inf. It must not continue an
# identifier (``x0``, ``float64``, ``U4`` stay text) or another number.
_NUMBER = re.compile(
    r"""
    (?<![A-Za-z0-9_.])
    (?P<num>
        [-+]?
        (?:
            (?:\d{1,3}(?:,\d{3})+(?![\d]))(?:\.\d+)?
          | \d+(?:\.\d*)?
          | \.\d+
        )
        (?:[eE][-+]?\d+)?
      | [-+]?(?:nan|inf|infinity)
    )
    (?![A-Za-z0-9_])
    """,
    re.VERBOSE | re.IGNORECASE,
)
_SPACES = re.compile(r"[ \t]+")
_REL_EPS = 1e-9  # slack for the binary representation of the printed decimals


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """A declared tolerance: ``|value - reference| <= max(abs, rel * |reference|)``.

    Parameters
    ----------
    abs, rel : float
        Absolute and relative tolerances (non-negative, finite).
    reason : str
        The statistical reason, one line (mandatory and non-empty).
    lines : str or None
        Regular expression; the rule applies only to output lines matching it.
    """

    abs: float = 0.0
    rel: float = 0.0
    reason: str = ""
    lines: str | None = None

    def __post_init__(self):
        for name in ("abs", "rel"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"tolerance {name} must be a number, got {value!r}")
            if math.isnan(value) or value < 0:
                raise ValueError(f"tolerance {name} must be >= 0, got {value!r}")
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ValueError("tolerance reason must be a non-empty string stating why")
        if self.lines is not None:
            if not isinstance(self.lines, str):
                raise TypeError(f"tolerance lines must be a regular expression, got {self.lines!r}")
            try:
                re.compile(self.lines)
            except re.error as exc:
                raise ValueError(f"tolerance lines is not a valid regular expression: {exc}") from exc

    def applies_to(self, line):
        """Whether this rule covers an output ``line``."""
        if not isinstance(line, str):
            raise TypeError(f"line must be a str, got {type(line).__name__}")
        return self.lines is None or re.search(self.lines, line) is not None

    def bound(self, reference):
        """The allowed absolute difference around ``reference``."""
        if isinstance(reference, bool) or not isinstance(reference, (int, float)):
            raise TypeError(f"reference must be a number, got {type(reference).__name__}")
        if not math.isfinite(reference):
            raise ValueError(f"reference must be finite, got {reference!r}")
        return max(self.abs, self.rel * abs(reference))


@dataclasses.dataclass(frozen=True)
class Mismatch:
    """One difference between a reference output and a new one."""

    line: int
    message: str

    def __str__(self):
        return f"line {self.line}: {self.message}"


def _ulp(token):
    """One unit in the last printed digit of a number token."""
    body = token.lstrip("+-").replace(",", "").lower()
    if body in ("nan", "inf", "infinity"):
        return 0.0
    mantissa, _, exponent = body.partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def _value(token):
    return float(token.replace(",", ""))


def split_numbers(text):
    """Split printed text into its text segments and its number tokens.

    Parameters
    ----------
    text : str

    Returns
    -------
    segments : list of str
        ``len(tokens) + 1`` text pieces around the numbers, runs of spaces and
        tabs collapsed to one space and the spaces next to a number dropped.
    tokens : list of str
        The numbers as printed.

    Examples
    --------
    >>> split_numbers("x0 = -1.5e-03, n = 12,345 (nan)")
    (['x0 =', ', n =', '(', ')'], ['-1.5e-03', '12,345', 'nan'])
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    segments, tokens, start = [], [], 0
    for match in _NUMBER.finditer(text):
        segments.append(_SPACES.sub(" ", text[start:match.start()]))
        tokens.append(match.group("num"))
        start = match.end()
    segments.append(_SPACES.sub(" ", text[start:]))
    for k in range(len(tokens)):  # spaces next to a number do not count
        segments[k] = segments[k].rstrip(" ")
        segments[k + 1] = segments[k + 1].lstrip(" ")
    return segments, tokens


def parse_tolerance(tolerance):
    """Read a cell's ``"tolerance"`` metadata into a list of :class:`Tolerance`.

    Parameters
    ----------
    tolerance : None, mapping or list of mappings
        Keys ``abs``, ``rel``, ``reason`` (required) and ``lines`` (optional).

    Returns
    -------
    list of Tolerance
    """
    if tolerance is None:
        return []
    rules = [tolerance] if isinstance(tolerance, dict) else tolerance
    if not isinstance(rules, (list, tuple)):
        raise TypeError("tolerance must be a mapping or a list of mappings, "
                        f"got {type(tolerance).__name__}")
    allowed = {"abs", "rel", "reason", "lines"}
    parsed = []
    for rule in rules:
        if not isinstance(rule, dict):
            raise TypeError(f"each tolerance rule must be a mapping, got {rule!r}")
        if "reason" not in rule:
            raise ValueError(f"tolerance rule {rule!r} has no reason: say why it is needed")
        unknown = set(rule) - allowed
        if unknown:
            raise ValueError(f"tolerance has unknown keys {sorted(unknown)}; allowed: {sorted(allowed)}")
        if "abs" not in rule and "rel" not in rule:
            raise ValueError(f"tolerance rule {rule!r} sets neither abs nor rel")
        parsed.append(Tolerance(**rule))
    return parsed


def _line_numbers(text):
    """Line number (1-based) of each character offset's line, as a lookup function."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(offset):
        lo, hi = 0, len(starts)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid
        return lo

    return line_of, text.split("\n")


def _numbers_agree(ref_tok, new_tok, rule):
    ref, new = _value(ref_tok), _value(new_tok)
    if math.isnan(ref) or math.isnan(new):
        return math.isnan(ref) and math.isnan(new), 0.0
    if math.isinf(ref) or math.isinf(new):
        return ref == new, 0.0
    bound = max(_ulp(ref_tok), _ulp(new_tok))
    if rule is not None:
        bound = max(bound, rule.bound(ref))
    return abs(new - ref) <= bound * (1 + _REL_EPS) + _REL_EPS * abs(ref), bound


def compare_text(reference, actual, tolerances=()):
    """Compare two printed outputs: text exactly, numbers within tolerance.

    Parameters
    ----------
    reference, actual : str
        The committed output and the new one.
    tolerances : sequence of Tolerance, optional
        Declared rules (see :func:`parse_tolerance`); numbers on lines that no
        rule matches must agree to one unit in their last printed digit.

    Returns
    -------
    list of Mismatch
        Empty when the outputs agree. Each entry names the line, the number,
        its reference, its new value and the tolerance in force.

    Examples
    --------
    >>> compare_text("error 0.6553 (-0.0)", "error 0.6554 (0.0)")
    []
    >>> [str(m) for m in compare_text("error 0.655", "error 0.660")]
    ['line 1: number 1 is 0.660, reference 0.655, tolerance 0.001 (one unit in the last digit)']
    """
    for name, value in (("reference", reference), ("actual", actual)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    rules = list(tolerances)
    for rule in rules:
        if not isinstance(rule, Tolerance):
            raise TypeError(f"tolerances must hold Tolerance objects, got {type(rule).__name__}")
    ref_segments, ref_tokens = split_numbers(reference)
    new_segments, new_tokens = split_numbers(actual)
    line_of, ref_lines = _line_numbers(reference)
    if len(ref_tokens) != len(new_tokens) or ref_segments != new_segments:
        return [_first_text_difference(ref_segments, new_segments, reference, actual)]
    mismatches = []
    offsets = [m.start("num") for m in _NUMBER.finditer(reference)]
    for k, (ref_tok, new_tok, offset) in enumerate(zip(ref_tokens, new_tokens, offsets)):
        line = line_of(offset)
        rule = next((r for r in rules if r.applies_to(ref_lines[line])), None)
        ok, bound = _numbers_agree(ref_tok, new_tok, rule)
        if not ok:
            if rule is None or bound > rule.bound(_value(ref_tok)):
                why = "one unit in the last digit"
            else:
                why = f"declared: {rule.reason}"
            index = sum(1 for o in offsets[:k] if line_of(o) == line) + 1
            mismatches.append(Mismatch(
                line + 1,
                f"number {index} is {new_tok}, reference {ref_tok}, tolerance {bound:.3g} ({why})",
            ))
    return mismatches


def _first_text_difference(ref_segments, new_segments, reference, actual):
    ref_lines, new_lines = reference.split("\n"), actual.split("\n")
    for i, (a, b) in enumerate(zip(ref_lines, new_lines)):
        sa, ta = split_numbers(a)
        sb, tb = split_numbers(b)
        if sa != sb or len(ta) != len(tb):
            what = "count of numbers" if sa == sb or len(ta) != len(tb) else "text"
            return Mismatch(i + 1, f"{what} differs: reference {a!r}, new {b!r}")
    return Mismatch(min(len(ref_lines), len(new_lines)) + 1,
                    f"number of lines differs: reference {len(ref_lines)}, new {len(new_lines)}")


class NumericOutputChecker(doctest.OutputChecker):
    """A doctest checker that compares numbers to one unit in the last printed digit.

    So ``-0.0`` matches ``0.0`` and ``0.6553`` matches ``0.6554``: doctests stay
    exact in everything but the last bit of floating-point arithmetic, which
    differs between CPUs.
    """

    def check_output(self, want, got, optionflags):
        if super().check_output(want, got, optionflags):
            return True
        if optionflags & doctest.ELLIPSIS and "..." in want:
            return False
        return not compare_text(want.rstrip("\n"), got.rstrip("\n"))


def run_doctests(module, extraglobs=None, optionflags=doctest.ELLIPSIS):
    """Run ``module``'s docstring examples with :class:`NumericOutputChecker`.

    Parameters
    ----------
    module : module
    extraglobs : dict, optional
        Extra globals for the examples (e.g. ``{"np": numpy}``).
    optionflags : int
        doctest option flags.

    Returns
    -------
    doctest.TestResults
        ``(failed, attempted)``.
    """
    import types

    if not isinstance(module, types.ModuleType):
        raise TypeError(f"module must be a module, got {type(module).__name__}")
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(checker=NumericOutputChecker(), optionflags=optionflags)
    globs = dict(module.__dict__)
    globs.update(extraglobs or {})
    for test in finder.find(module, module.__name__, globs=globs):
        runner.run(test)
    return doctest.TestResults(runner.failures, runner.tries)

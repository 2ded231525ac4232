r"""The max-margin classifier of a two-class Gaussian mixture, in the proportional limit.

Labels :math:`y=\pm1` with probability one half, inputs :math:`x=y\mu+z` with
:math:`z\sim\mathcal N(0,I_d)` and :math:`\|\mu\|=r`, :math:`n` samples with :math:`n/d\to\delta`.
With :math:`H\sim\mathcal N(0,1)` and :math:`M(t)=\operatorname E(t-H)_+^2`, let :math:`t(\rho)` solve
:math:`\delta M(t)=1-\rho^2`; the max-margin direction :math:`\hat w` has margin
:math:`\kappa^*=\max_\rho\,[r\rho+t(\rho)]`, overlap :math:`\hat w^\top\mu/r\to\rho^*` and test error
:math:`\Phi(-r\rho^*)` (Deng, Kammoun and Thrampoulidis 2022; Chapter 3.2 sketches the proof).

:math:`M` is increasing and convex, so :math:`t(\rho)` is concave and the maximum is the stationary
point. Differentiating :math:`\delta M(t(\rho))=1-\rho^2` with :math:`M'(t)=2\operatorname E(t-H)_+`
gives :math:`t'=-\rho/(\delta\operatorname E(t-H)_+)`, and :math:`r+t'=0` reads
:math:`\rho=r\delta\operatorname E(t-H)_+`. The optimum is therefore one root in :math:`t`,

.. math:: \delta M(t)+\big(r\delta\operatorname E(t-H)_+\big)^2=1,

whose left side increases from 0 to infinity; Chapter 3.2's notebook maximises over :math:`\rho`
directly, which the tests compare with this root.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special

from .._validation import ConvergenceError, check_nonnegative, check_positive, check_size

__all__ = ["mixture_svm_asymptotics"]

_SQRT_HALF_PI = np.sqrt(np.pi / 2)


def _positive_part_moments(t):
    r"""``(E(t-H)_+, E(t-H)_+^2)`` for a standard normal ``H``, accurate for very negative ``t`` too."""
    if t >= 0:  # Phi(t) >= 1/2: no cancellation
        cdf, pdf = special.ndtr(t), np.exp(-t * t / 2) / np.sqrt(2 * np.pi)
        return t * cdf + pdf, (t * t + 1) * cdf + t * pdf
    # t = -s < 0: Phi(-s) = phi(s) R(s) with the Mills ratio R(s) = sqrt(pi/2) erfcx(s/sqrt 2),
    # so that the large terms cancel inside the brackets (relative error ~ eps s^4, not eps / phi(s))
    s = -t
    pdf, mills = np.exp(-s * s / 2) / np.sqrt(2 * np.pi), _SQRT_HALF_PI * special.erfcx(s / np.sqrt(2))
    return pdf * (1 - s * mills), pdf * ((s * s + 1) * mills - s)


def mixture_svm_asymptotics(r, delta, tol=1e-13, max_iter=200):
    r"""Margin, overlap and test error of the max-margin classifier of a Gaussian mixture.

    The limits as :math:`n,d\to\infty` with :math:`n/d\to\delta` (see the module docstring).

    Parameters
    ----------
    r : float
        Signal strength :math:`\|\mu\|\ge0`.
    delta : float
        Samples per dimension :math:`\delta=n/d>0`.
    tol : float
        Absolute tolerance of the root :math:`t^*` (Brent's method).
    max_iter : int
        Iterations allowed to the root finder.

    Returns
    -------
    kappa : float
        The limiting margin :math:`\kappa^*=\min_iy_ix_i^\top\hat w`. If it is negative the data
        are not separable, and the other two values describe no classifier.
    rho : float
        The overlap :math:`\rho^*=\lim\hat w^\top\mu/r` (0 when ``r = 0``).
    test_error : float
        :math:`\Phi(-r\rho^*)`, the probability that :math:`y\,x^\top\hat w<0` on a fresh sample.

    Raises
    ------
    seqrmt.ConvergenceError
        If the root is not found within ``max_iter`` iterations.

    Examples
    --------
    >>> kappa, rho, err = mixture_svm_asymptotics(2.0, 0.5)
    >>> round(kappa, 4), round(rho, 4), round(err, 4)
    (1.8854, 0.6948, 0.0823)
    >>> abs(mixture_svm_asymptotics(0.0, 2.0)[0]) < 1e-12  # Gardner: capacity 2 without signal
    True
    """
    r = check_nonnegative(r, "r")
    delta = check_positive(delta, "delta")
    tol = check_positive(tol, "tol")
    max_iter = check_size(max_iter, "max_iter")

    def excess(t):  # delta M(t) + (r delta E(t - H)_+)^2 - 1, increasing in t
        first, second = _positive_part_moments(t)
        return delta * second + (r * delta * first) ** 2 - 1

    # at t = -40 both moments vanish (excess = -1); double the upper end until the sign changes
    lo, hi = -40.0, 1.0
    while excess(hi) <= 0:
        lo, hi = hi, 2 * hi
        if hi > 1e150:  # excess grows like delta t^2: only an absurd delta gets here
            raise ConvergenceError(f"no root of the margin equation below t = {hi:g} (delta = {delta:g})")
    try:
        t, info = optimize.brentq(excess, lo, hi, xtol=tol, rtol=4 * np.finfo(float).eps,
                                  maxiter=max_iter, full_output=True, disp=False)
    except (RuntimeError, ValueError) as exc:  # pragma: no cover - brentq's own failures
        raise ConvergenceError(f"the margin equation did not converge: {exc}") from exc
    if not info.converged:
        raise ConvergenceError(f"the margin equation did not converge in {max_iter} iterations")
    rho = r * delta * _positive_part_moments(t)[0]  # stationarity in rho
    # a fresh sample has y x^T w = r rho + N(0, 1): it is misclassified with probability Phi(-r rho)
    return float(r * rho + t), float(rho), float(special.ndtr(-r * rho))

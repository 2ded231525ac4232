r"""alpha-LoRA on a Gaussian mixture: the moments of the fine-tuned score, with the corrected :math:`T_3`.

Source :math:`x=y\mu+z` (:math:`N` samples, :math:`\tilde\eta=p/N`), ridge classifier :math:`\tilde w`
with penalty :math:`\gamma_{\rm pre}`; target :math:`x=y\mu_\beta+z` (:math:`n` samples, :math:`\eta=p/n`),
:math:`\mu_\beta=\beta\mu+\sqrt{1-\beta^2}\mu_\perp`, fine-tuned by ridge :math:`\gamma` towards
:math:`\alpha\tilde w`. The score :math:`g=w^\top x` of a test point has :math:`\mathbb E[yg]\to m_0+\alpha m_1`
and :math:`\mathbb E[g^2]\to T_1+\alpha T_2+\alpha^2T_3`. :math:`m_0,m_1,T_1,T_2` follow the authors'
public code (``elfirdoussilab1/alpha-LoRA``, ``rmt_results.py``); :math:`T_3` is re-derived in
Chapter 5.4 (``prop-alpha-lora-t3``), and the code's version is kept as ``variant="repository"``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ... import rmt
from ..._validation import check_array, check_choice, check_nonnegative, check_positive, check_size

_VARIANTS = ("corrected", "repository")


@dataclass(frozen=True)
class AlphaLoRAMoments:
    r"""Limits of the mean and second moment of the alpha-LoRA score (see :func:`alpha_lora_moments`).

    The mean is :math:`\mathbb E[yg]=m_0+\alpha m_1` and the second moment
    :math:`\mathbb E[g^2]=T_1+\alpha T_2+\alpha^2T_3`; the score is asymptotically Gaussian given the
    class, so the accuracy of :math:`\operatorname{sign}(g)` is :math:`\Phi(\text{mean}/\text{std})`.

    Attributes
    ----------
    m0, m1, T1, T2, T3 : float
    """

    m0: float
    m1: float
    T1: float
    T2: float
    T3: float

    def mean(self, alpha):
        r""":math:`\mathbb E[yg]=m_0+\alpha m_1` at ``alpha`` (float or array)."""
        alpha = _real(alpha, "alpha")
        return self.m0 + alpha * self.m1

    def second_moment(self, alpha):
        r""":math:`\mathbb E[g^2]=T_1+\alpha T_2+\alpha^2T_3` at ``alpha`` (float or array)."""
        alpha = _real(alpha, "alpha")
        return self.T1 + alpha * self.T2 + alpha**2 * self.T3

    def accuracy(self, alpha):
        r"""Signed accuracy :math:`\Phi\big(\mathbb E[yg]/\sqrt{\mathbb E[g^2]-\mathbb E[yg]^2}\big)` at ``alpha``.

        It falls below 1/2 when the rescaled source points the wrong way (the authors' code
        reports :math:`\max(\mathrm{acc},1-\mathrm{acc})` instead).

        Examples
        --------
        >>> mom = alpha_lora_moments(1000, 200, 100, 1.0, 1.5, 0.3, 1.0, 1.0)
        >>> round(mom.accuracy(0.0), 4)
        0.8946
        """
        mean = self.mean(alpha)
        var = self.second_moment(alpha) - mean**2
        if np.any(var <= 0):
            raise ValueError("the moments give a non-positive variance at this alpha")
        out = special.ndtr(mean / np.sqrt(var))
        return float(out) if np.ndim(out) == 0 else out

    def optimal_alpha(self):
        r"""The accuracy-maximising rescaling :math:`\alpha^*=\frac{m_1v_0-m_0v_1/2}{m_0v_2-m_1v_1/2}`.

        With variance :math:`v_0+v_1\alpha+v_2\alpha^2` (:math:`v_0=T_1-m_0^2`,
        :math:`v_1=T_2-2m_0m_1`, :math:`v_2=T_3-m_1^2`), the stationary point of mean/std.

        Examples
        --------
        >>> round(alpha_lora_moments(2000, 50, 200, 1.5, 1.5, 0.9, 1.0, 1.0).optimal_alpha(), 4)
        1.6405
        """
        v0 = self.T1 - self.m0**2
        v1 = self.T2 - 2 * self.m0 * self.m1
        v2 = self.T3 - self.m1**2
        # d/dalpha [(m0 + alpha m1)^2 / (v0 + v1 alpha + v2 alpha^2)] = 0, the root that is a maximum
        den = self.m0 * v2 - self.m1 * v1 / 2
        if den == 0:
            raise ValueError("alpha* is undefined for these moments")
        return float((self.m1 * v0 - self.m0 * v1 / 2) / den)


def _real(x, name):
    """A real float or array (validated)."""
    x = check_array(x, name)
    return float(x) if x.ndim == 0 else x


def _ratios(N, n, p):
    """p/N and p/n from validated sizes."""
    N, n, p = check_size(N, "N"), check_size(n, "n"), check_size(p, "p")
    return p / N, p / n


def alpha_lora_source_norm_sq(N, p, mu, gamma_pre, variant="corrected"):
    r"""Limit :math:`W_2` of :math:`\|\tilde w\|^2` for the ridge source classifier of alpha-LoRA.

    With :math:`\tilde Q=(X_s^\top X_s/N+\gamma_{\rm pre}I_N)^{-1}` (samples as the columns of
    :math:`X_s`), the push-through identity gives :math:`\tilde w=X_s\tilde Qy_s/N` and
    :math:`\|\tilde w\|^2=\frac1Ny_s^\top(\tilde Q-\gamma_{\rm pre}\tilde Q^2)y_s`, so by the ridge
    memorisation theorem of Chapter 5.2 (:func:`seqrmt.rmt.ridge_memorisation_error` with
    :math:`c=p/N`, :math:`s=\mu^2` and ridge :math:`\gamma_{\rm pre}`)

    .. math::
        W_2=h(m)-E_{RR}/\gamma_{\rm pre},\qquad h(m)=\frac{m(1+m)}{1+(1+\mu^2)m},

    with :math:`m` from :func:`seqrmt.rmt.coresolvent_stieltjes`. ``variant="repository"`` returns
    the closed form that the authors' code uses in its ridge-specific :math:`T_3`,
    :math:`\mu^2/\lambda_R^2+(1-\tilde h)(1-2\mu^2/\lambda_R)`: that closed form is the code's error.

    Parameters
    ----------
    N, p : int
        Source sample size and dimension (only :math:`p/N` enters).
    mu : float
        :math:`\|\mu\|>0`.
    gamma_pre : float
        Source ridge :math:`\gamma_{\rm pre}>0`.
    variant : {"corrected", "repository"}

    Returns
    -------
    float

    Examples
    --------
    >>> round(alpha_lora_source_norm_sq(1000, 800, 1.0, 0.3), 4)
    0.3873
    >>> round(alpha_lora_source_norm_sq(1000, 800, 1.0, 0.3, variant="repository"), 4)
    0.2203
    """
    N, p = check_size(N, "N"), check_size(p, "p")
    mu = check_positive(mu, "mu")
    gamma_pre = check_positive(gamma_pre, "gamma_pre")
    variant = check_choice(variant, "variant", _VARIANTS)
    c = p / N
    if variant == "repository":
        # the authors' closed form (rmt_results.py): not the limit of |w_tilde|^2 (Chapter 5.4, erratum)
        dR = rmt.ridge_delta(c, gamma_pre)
        lam_R = mu**2 + 1.0 + gamma_pre * (1.0 + dR)
        h_s = 1.0 - c / (1.0 + gamma_pre * (1.0 + dR)) ** 2
        return float(mu**2 / lam_R**2 + (1.0 - h_s) * (1.0 - 2.0 * mu**2 / lam_R))
    # |w|^2 = (1/N) y^T Q y - (1/gamma) (gamma^2/N) y^T Q^2 y -> h(m) - E_RR / gamma
    m = rmt.coresolvent_stieltjes(c, gamma_pre)
    h = m * (1.0 + m) / (1.0 + (1.0 + mu**2) * m)
    return float(h - rmt.ridge_memorisation_error(c, mu**2, gamma_pre) / gamma_pre)


def alpha_lora_moments(N, n, p, mu, mu_orth, beta, gamma_pre, gamma, variant="corrected"):
    r"""Deterministic equivalents of the mean and second moment of the alpha-LoRA score.

    With :math:`\delta_Q=\Delta(p/n,\gamma)`, :math:`\delta_R=\Delta(p/N,\gamma_{\rm pre})`
    (:func:`seqrmt.rmt.ridge_delta`), :math:`h=1-\eta/(1+\gamma(1+\delta_Q))^2`,
    :math:`\mu_\beta^2=\beta^2\mu^2+(1-\beta^2)\mu_\perp^2`,
    :math:`\lambda_R=\mu^2+1+\gamma_{\rm pre}(1+\delta_R)`, :math:`\lambda_Q=\mu_\beta^2+1+\gamma(1+\delta_Q)`:

    .. math::
        m_0=\frac{\mu_\beta^2}{\lambda_Q},\quad m_1=\frac{\gamma(1+\delta_Q)\beta\mu^2}{\lambda_R\lambda_Q},\quad
        T_1=\frac{\mu_\beta^2}{h\lambda_Q}\Big[\frac{\mu_\beta^2+1}{\lambda_Q}-2(1-h)\Big]+\frac{1-h}h,\quad
        T_2=\frac{2\gamma\beta(1+\delta_Q)\mu^2}{\lambda_R\lambda_Q}\Big[1-\frac{\gamma(1+\delta_Q)}{h\lambda_Q}\Big],

    as in the authors' code, and the :math:`\alpha^2` coefficient (Chapter 5.4, ``prop-alpha-lora-t3``)

    .. math::
        T_3=\gamma^2\Big[\frac{r^2}h\Big(W_2-\frac{s_\beta^2}{\lambda_Q}\Big)
        -\frac{r\,s_\beta^2\,(1+\delta_Q+\gamma\delta_Q')}{\lambda_Q^2}\Big]
        +\Big(\frac{\gamma(1+\delta_Q)s_\beta}{\lambda_Q}\Big)^2,

    with :math:`r=\frac{1+\delta_Q}{1+\gamma(1+\delta_Q)}`, :math:`\delta_Q'=-\eta r^2/h`,
    :math:`s_\beta=\beta\mu^2/\lambda_R` and :math:`W_2` from :func:`alpha_lora_source_norm_sq`.
    ``variant="repository"`` evaluates the code's :math:`T_3` instead (for the erratum).

    Parameters
    ----------
    N, n, p : int
        Source and target sample sizes, dimension (only the ratios :math:`p/N`, :math:`p/n` enter).
    mu, mu_orth : float
        :math:`\|\mu\|>0` and :math:`\|\mu_\perp\|\ge0`.
    beta : float
        Source-target alignment in :math:`[-1,1]`.
    gamma_pre, gamma : float
        Source and fine-tuning ridges :math:`>0`.
    variant : {"corrected", "repository"}

    Returns
    -------
    AlphaLoRAMoments

    Examples
    --------
    >>> mom = alpha_lora_moments(8000, 200, 800, 1.5, 1.5, 0.9, 1.0, 1.0)
    >>> round(mom.T3, 4), round(alpha_lora_moments(8000, 200, 800, 1.5, 1.5, 0.9, 1.0, 1.0,
    ...                                             variant="repository").T3, 4)
    (0.1442, 0.1369)
    """
    eta_s, eta = _ratios(N, n, p)
    mu = check_positive(mu, "mu")
    mu_orth = check_nonnegative(mu_orth, "mu_orth")
    beta = float(check_array(beta, "beta", ndim=0))
    if not -1.0 <= beta <= 1.0:  # beta is a cosine: mu_beta = beta mu + sqrt(1 - beta^2) mu_perp
        raise ValueError(f"beta must lie in [-1, 1], got {beta}")
    gamma_pre = check_positive(gamma_pre, "gamma_pre")
    g = check_positive(gamma, "gamma")
    variant = check_choice(variant, "variant", _VARIANTS)
    # the isotropic ridge fixed points of the target (Q) and source (R) resolvents
    dQ, dR = rmt.ridge_delta(eta, g), rmt.ridge_delta(eta_s, gamma_pre)
    # h = 1 - eta r^2/(1 + dQ)^2: the factor that the derivative in gamma of the resolvent brings
    h = 1.0 - eta / (1.0 + g * (1.0 + dQ)) ** 2
    mb2 = beta**2 * mu**2 + (1.0 - beta**2) * mu_orth**2  # |mu_beta|^2
    # the rank-one corrections of the two resolvents: Qbar = r (I - mu_b mu_b^T / lam_Q)
    lam_R = mu**2 + 1.0 + gamma_pre * (1.0 + dR)
    lam_Q = mb2 + 1.0 + g * (1.0 + dQ)
    # E[yg] = mu_b^T w with w = Q X y/n + alpha gamma Q w_tilde (L2-SP towards alpha w_tilde)
    m0 = mb2 / lam_Q
    m1 = g * (1 + dQ) * beta * mu**2 / (lam_R * lam_Q)
    # E[g^2] = (mu_b^T w)^2 + |w|^2; T1 and T2 are the code's, transcribed term by term
    T1 = mb2 / (h * lam_Q) * ((mb2 + 1) / lam_Q - 2 * (1 - h)) + (1 - h) / h
    T2 = 2 * g * beta * (1 + dQ) * mu**2 / (lam_R * lam_Q) * (1 - g * (1 + dQ) / (h * lam_Q))
    if variant == "repository":
        # the code's ridge-specific T3: the general formula with |w_tilde|^2 in its wrong closed form
        h_s = 1.0 - eta_s / (1.0 + gamma_pre * (1.0 + dR)) ** 2
        bm2 = (beta * mu) ** 2
        first = mu**2 / lam_R**2 * (
            bm2 / lam_Q**2 + (1 - h) / eta * (1 + bm2 * mb2 / lam_Q**2 - 2 * bm2 / lam_Q))
        second = (1 - h) * (1 - h_s) / eta * (1 - 2 * mu**2 / lam_R)
        T3 = (g * (1 + dQ)) ** 2 / h * (first + second)
    else:
        # T3 = (gamma mu_b^T Q w)^2 + gamma^2 w^T Q^2 w, with Q^2 = -dQ/dgamma
        # Qbar = r (I - mu_b mu_b^T / lam_Q); r' = -r^2/h, so -d/dgamma [r (W2 - s^2/lam_Q)] gives both terms
        r = (1 + dQ) / (1 + g * (1 + dQ))
        ddQ = -eta * r**2 / h
        s_b = beta * mu**2 / lam_R  # the limit of mu_b^T w_tilde
        W2 = alpha_lora_source_norm_sq(N, p, mu, gamma_pre)
        T3 = g**2 * (r**2 / h * (W2 - s_b**2 / lam_Q) - r * s_b**2 * ((1 + dQ) + g * ddQ) / lam_Q**2)
        # the squared mean part: gamma mu_b^T Qbar w_tilde = gamma (1 + dQ) s_b / lam_Q
        T3 += (g * (1 + dQ) * s_b / lam_Q) ** 2
    return AlphaLoRAMoments(float(m0), float(m1), float(T1), float(T2), float(T3))

r"""The :math:`2\times2` teacher-student SGD ensemble with a degenerate target (Aarts, Lucini, Park).

A linear student :math:`W_s\in\mathbb R^{2\times2}` learns the teacher :math:`W_t=x_0I_2` from inputs
:math:`x\sim N(0,I_2)` and labels corrupted by per-sample GOE noise of scale :math:`\varepsilon`. One SGD step
on batch :math:`b` is

.. math::
    W_s\leftarrow W_s+\alpha\big[(W_t-W_s)\hat C_b+\bar a_b\big],\qquad
    \hat C_b=\frac1{|\mathcal B|}\sum_{x\in b}xx^\top,

with :math:`\bar a_b` the batch mean of the noise matrices (off-diagonal variance :math:`\varepsilon^2`,
diagonal :math:`2\varepsilon^2`). Data and noise are **quenched**: drawn once per ensemble member and
reused in the same batch order every epoch. The "eigenvalues" are the singular values of :math:`W_s`.

Only the batch statistics enter the update, so they are drawn directly from their exact laws:
:math:`|\mathcal B|\hat C_b` is Wishart :math:`W_2(I,|\mathcal B|)` (Bartlett decomposition) and
:math:`\bar a_b` is GOE of scale :math:`\varepsilon^2/|\mathcal B|`. This is equal in law to drawing the
:math:`|\mathcal B|` inputs and noise matrices and averaging them, at a fraction of the memory.

Stationary prediction: :math:`D=W_s-W_t` follows :math:`D\leftarrow(1-\alpha)D+\alpha\bar a` to leading order,
a GOE of off-diagonal variance :math:`\alpha\varepsilon^2/(|\mathcal B|(2-\alpha))`, hence a two-mode density of width
:math:`\sigma_\rho^2=2\alpha\varepsilon^2/(|\mathcal B|(2-\alpha))\approx\alpha\varepsilon^2/|\mathcal B|`.

Used in: Chapter 4.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_nonnegative, check_positive, check_positive_int, check_size
from .._validation import check_seed
from ..ensemble import spawn_generators
from .._validation import as_generator
from ..stats import mean_se
from ..runtime import single_threaded_blas

__all__ = ["TeacherStudentResult", "teacher_student_ensemble", "teacher_student_width", "teacher_student_scan",
           "plot_singular_value_paths", "plot_width_scan", "plot_width_ratio"]


@dataclass
class TeacherStudentResult:
    """Output of :func:`teacher_student_ensemble`.

    Attributes
    ----------
    steps : numpy.ndarray, shape (n_records,)
        SGD step numbers at which the spectrum was recorded (0 = initialisation).
    trajectory : numpy.ndarray, shape (n_records, n_seeds, 2)
        Singular values of each student, sorted decreasingly, at those steps.
    final : numpy.ndarray, shape (n_seeds, 2)
        Singular values after the last step (equal to ``trajectory[-1]``).
    weights : numpy.ndarray, shape (n_seeds, 2, 2)
        Final student matrices.
    """

    steps: np.ndarray
    trajectory: np.ndarray
    final: np.ndarray
    weights: np.ndarray


def teacher_student_width(lr, batch, eps, method="ar1"):
    r"""Predicted two-mode width :math:`\sigma_\rho` of the stationary teacher-student ensemble.

    Parameters
    ----------
    lr : float
        Learning rate :math:`\alpha\in(0,2)`.
    batch : int
        Batch size :math:`|\mathcal B|`.
    eps : float
        Label-noise scale :math:`\varepsilon`.
    method : {"ar1", "leading", "exact"}
        ``"leading"``: :math:`\sqrt{\alpha\varepsilon^2/|\mathcal B|}` (the SDE limit, linear scaling rule);
        ``"ar1"``: :math:`\sqrt{2\alpha\varepsilon^2/(|\mathcal B|(2-\alpha))}` (the recursion with
        :math:`\hat C_b` replaced by :math:`I`); ``"exact"``: the stationary second moments of the linear
        recursion :math:`D\leftarrow D(I-\alpha\hat C_b)+\alpha\bar a_b` with the Wishart fluctuations of
        :math:`\hat C_b` included (a :math:`16\times16` linear system), converted to
        :math:`\sigma_\rho^2=\frac23\times` the pooled variance of the eigenvalues of the symmetric part of
        :math:`D` (first order in :math:`D`).

    Returns
    -------
    float

    Examples
    --------
    >>> round(teacher_student_width(0.1, 16, 0.1, method="leading"), 5)
    0.00791
    >>> round(teacher_student_width(0.1, 16, 0.1), 5)
    0.00811
    >>> round(teacher_student_width(0.1, 16, 0.1, method="exact"), 5)
    0.00814
    """
    lr, batch, eps = _check_sgd(lr, batch, eps)
    var = lr * eps**2 / batch
    if method == "leading":
        return float(np.sqrt(var))
    if method == "ar1":
        return float(np.sqrt(2.0 * var / (2.0 - lr)))
    if method != "exact":
        raise ValueError(f"method must be 'ar1', 'leading' or 'exact', got {method!r}")
    I = np.eye(2)
    same = np.einsum("kj,rq->kjrq", I, I)
    # E[A_kj A_rq] for A = I - lr C, E C = I, Cov(C_kj, C_rq) = (d_kr d_jq + d_kq d_jr) / batch
    EAA = (1 - lr) ** 2 * same + lr**2 * (np.einsum("kr,jq->kjrq", I, I) + np.einsum("kq,jr->kjrq", I, I)) / batch
    L = np.einsum("ix,py,kjrq->ijpqxkyr", I, I, EAA).reshape(16, 16)
    cov_a = eps**2 / batch * (np.einsum("ip,jq->ijpq", I, I) + np.einsum("iq,jp->ijpq", I, I))
    if np.max(np.abs(np.linalg.eigvals(L))) >= 1:
        raise ValueError(f"the second moments diverge at lr={lr}, batch={batch}")
    S = np.linalg.solve(np.eye(16) - L, lr**2 * cov_a.reshape(16)).reshape(2, 2, 2, 2)
    sym12 = (S[0, 1, 0, 1] + S[1, 0, 1, 0] + 2 * S[0, 1, 1, 0]) / 4
    pooled = 0.5 * (S[0, 0, 0, 0] + S[1, 1, 1, 1] + 2 * sym12)
    return float(np.sqrt(2.0 * pooled / 3.0))


def teacher_student_ensemble(lr, batch, eps, n_seeds, rng=None, n_steps=400, n_batches=500,
                             teacher=2.0, init_scale=0.1, record_every=None):
    r"""Train an ensemble of :math:`2\times2` linear students by SGD on quenched noisy data.

    Parameters
    ----------
    lr, batch, eps
        As in :func:`teacher_student_width`; ``eps`` scales the per-sample GOE label noise.
    n_seeds : int
        Number of independent trainings (ensemble members), vectorised.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the members' generators: member ``i`` draws its data, its label noise and its
        initialisation from the ``i``-th child (:func:`seqrmt.ensemble.spawn_generators`), so the
        first ``k`` members do not depend on ``n_seeds``.
    n_steps : int
        Number of SGD steps (the authors use 10 epochs of 500 batches; 400 steps reach stationarity
        for :math:`\alpha\ge0.05`, where :math:`(1-\alpha)^{400}<10^{-8}`).
    n_batches : int
        Batches per epoch: the data set holds ``n_batches * batch`` samples, reused every epoch.
    teacher : float
        Degenerate teacher eigenvalue :math:`x_0` (:math:`W_t=x_0I_2`).
    init_scale : float
        Standard deviation of the student's initial entries.
    record_every : int, optional
        Record the spectrum every this many steps (default: about 100 records).

    Returns
    -------
    TeacherStudentResult

    Examples
    --------
    >>> res = teacher_student_ensemble(0.1, 16, 0.1, n_seeds=500, rng=0, n_steps=200)
    >>> res.final.shape, res.trajectory.shape[1:]
    ((500, 2), (500, 2))
    >>> round(float(res.final.mean()), 2)
    2.0
    """
    lr, batch, eps = _check_sgd(lr, batch, eps)
    n_seeds = check_size(n_seeds, "n_seeds")
    n_steps = check_size(n_steps, "n_steps")
    n_batches = check_size(n_batches, "n_batches")
    teacher = check_positive(teacher, "teacher")
    init_scale = check_positive(init_scale, "init_scale")
    if record_every is None:
        record_every = max(1, n_steps // 100)
    record_every = check_positive_int(record_every, "record_every")
    gens = spawn_generators(check_seed(rng), n_seeds)

    n_used = min(n_batches, n_steps)  # batches never reached need not be drawn
    C = np.empty((n_seeds, n_used, 2, 2))
    A = np.empty((n_seeds, n_used, 2, 2))
    W = np.empty((n_seeds, 2, 2))
    for i, g in enumerate(gens):  # member i: its data, its noise, its start
        C[i] = _wishart_means(g, (n_used,), batch)
        A[i] = _goe(g, (n_used,), eps**2 / batch)
        W[i] = init_scale * g.normal(size=(2, 2))
    Wt = teacher * np.eye(2)
    steps, traj = [0], [_svals(W)]
    with single_threaded_blas():
        for n in range(n_steps):
            b = n % n_batches
            W = W + lr * (np.matmul(Wt - W, C[:, b]) + A[:, b])
            if (n + 1) % record_every == 0 or n + 1 == n_steps:
                steps.append(n + 1)
                traj.append(_svals(W))
    trajectory = np.stack(traj)
    return TeacherStudentResult(np.array(steps), trajectory, trajectory[-1].copy(), W)


# ---------------------------------------------------------------------------


def _check_sgd(lr, batch, eps):
    """Learning rate in (0, 2) (a stationary state exists), batch size and noise scale."""
    lr = check_positive(lr, "lr")
    if lr >= 2:
        raise ValueError(f"lr must be below 2 (SGD has no stationary state otherwise), got {lr}")
    return lr, check_positive_int(batch, "batch"), check_positive(eps, "eps")


def _svals(W):
    """Singular values of 2x2 matrices, sorted decreasingly (closed form: |q| +- |r|)."""
    a, b, c, d = W[..., 0, 0], W[..., 0, 1], W[..., 1, 0], W[..., 1, 1]
    q = 0.5 * np.hypot(a + d, c - b)
    r = 0.5 * np.hypot(a - d, b + c)
    return np.stack([q + r, np.abs(q - r)], axis=-1)


def _wishart_means(rng, shape, batch):
    """Batch second-moment matrices (1/B) sum x x^T, x ~ N(0, I_2), by the Bartlett decomposition."""
    l11 = np.sqrt(rng.chisquare(batch, size=shape))
    l22 = np.sqrt(rng.chisquare(batch - 1, size=shape)) if batch > 1 else np.zeros(shape)
    l21 = rng.normal(size=shape)
    C = np.empty(shape + (2, 2))
    C[..., 0, 0] = l11 * l11
    C[..., 0, 1] = C[..., 1, 0] = l11 * l21
    C[..., 1, 1] = l21 * l21 + l22 * l22
    return C / batch


def _goe(rng, shape, var):
    """2x2 GOE matrices with off-diagonal variance ``var`` and diagonal variance ``2 var``."""
    g = rng.normal(size=shape + (3,)) * np.sqrt(var)
    A = np.empty(shape + (2, 2))
    A[..., 0, 0] = np.sqrt(2.0) * g[..., 0]
    A[..., 1, 1] = np.sqrt(2.0) * g[..., 1]
    A[..., 0, 1] = A[..., 1, 0] = g[..., 2]
    return A


def teacher_student_scan(settings, n_seeds, rng=None, n_steps=400, **kwargs):
    r"""Measured and predicted two-mode widths and mean spacings over a list of SGD settings.

    For each :math:`(\alpha,|\mathcal B|,\varepsilon)` an ensemble is trained
    (:func:`teacher_student_ensemble`; setting ``k`` from the ``k``-th generator spawned from ``rng``,
    whose children are its students) and summarised by the
    moment width :func:`~seqrmt.dyson.universality.two_mode_width` and the mean spacing
    :math:`\langle S\rangle` of its final singular values, with standard errors, next to the leading
    and exact predicted widths (:func:`teacher_student_width`).

    Parameters
    ----------
    settings : sequence of (lr, batch, eps)
    n_seeds : int
        Ensemble size per setting.
    rng : int, numpy.random.Generator or None
    n_steps : int
        SGD steps per student.
    **kwargs
        Passed to :func:`teacher_student_ensemble`.

    Returns
    -------
    numpy.ndarray, shape (len(settings), 6)
        Columns: width, its SE, :math:`\langle S\rangle`, its SE, leading and exact predicted widths.

    Examples
    --------
    >>> tab = teacher_student_scan([(0.1, 16, 0.1), (0.2, 16, 0.1)], 200, rng=0, n_steps=200)
    >>> tab.shape, bool(np.all(np.abs(tab[:, 0] / tab[:, 5] - 1) < 5 * tab[:, 1] / tab[:, 5]))
    ((2, 6), True)
    """
    from .universality import two_mode_width

    rows = list(settings)
    if not rows:
        raise ValueError("settings must hold at least one (lr, batch, eps)")
    for r in rows:
        if len(r) != 3:
            raise ValueError(f"settings must hold (lr, batch, eps) triples, got {r!r}")
        try:
            _check_sgd(*r)
        except ValueError as exc:
            raise ValueError(f"settings: {exc}") from exc
    gens = spawn_generators(as_generator(rng), len(rows))  # each setting its own generator
    out = []
    for (a, b, e), gen in zip(rows, gens):
        f = teacher_student_ensemble(a, b, e, n_seeds=n_seeds, rng=gen, n_steps=n_steps, **kwargs).final
        S = f[:, 0] - f[:, 1]
        out.append((*two_mode_width(f), *mean_se(S),
                    teacher_student_width(a, b, e, "leading"), teacher_student_width(a, b, e, "exact")))
    return np.array(out)


def plot_singular_value_paths(ax, result, start=100, member=0, teacher=2.0):
    r"""Draw the two singular values, minus the teacher's :math:`x_0`, of one student against the SGD step.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    result : TeacherStudentResult
    start : int
        First step drawn.
    member : int
        Which ensemble member.
    teacher : float
        The teacher eigenvalue :math:`x_0` that is subtracted.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, with the upper and lower singular value.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> run = teacher_student_ensemble(0.1, 16, 0.1, n_seeds=2, rng=0, n_steps=200)
    >>> fig, ax = plt.subplots()
    >>> len(plot_singular_value_paths(ax, run).lines)
    2
    >>> plt.close(fig)
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    if not isinstance(result, TeacherStudentResult):
        raise ValueError(f"result must be a TeacherStudentResult, got {type(result).__name__}")
    start = check_nonnegative(start, "start")
    teacher = check_positive(teacher, "teacher")
    member = check_nonnegative(member, "member")
    if not 0 <= member < result.trajectory.shape[1]:
        raise ValueError(f"member must lie in [0, {result.trajectory.shape[1]}), got {member}")
    late = result.steps >= start
    for j, (mk, lab) in enumerate([("o-", "upper"), ("s-", "lower")]):
        ax.plot(result.steps[late], result.trajectory[late, int(member), j] - teacher, mk, ms=3, lw=1,
                label=lab)
    ax.set_xlabel("SGD step")
    ax.set_ylabel(f"singular value minus {teacher:g}")
    return ax


def plot_width_scan(axes, scan, groups, line_max=None):
    r"""Two panels of a :func:`teacher_student_scan`: measured against predicted width, and the mean spacing.

    Left: the moment width :math:`\hat\sigma` against the leading prediction
    :math:`\sqrt{\alpha\varepsilon^2/|\mathcal B|}` (error bars: two standard errors), the exact widths
    (crosses) and the identity. Right: :math:`\langle S\rangle` against :math:`\sqrt\pi\,\hat\sigma`
    (the two-mode law's relation) and the identity.

    Parameters
    ----------
    axes : sequence of two matplotlib.axes.Axes
    scan : array_like, shape (n_settings, 6)
        Output of :func:`teacher_student_scan`.
    groups : dict
        Maps a legend label to the index (slice or array) of its settings.
    line_max : float, optional
        End of the identity lines (default: 5% beyond the largest width).

    Returns
    -------
    sequence of matplotlib.axes.Axes
        ``axes``, with the width and spacing panels.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> tab = teacher_student_scan([(0.1, 16, 0.1), (0.2, 16, 0.1)], 50, rng=0, n_steps=100)
    >>> fig, axes = plt.subplots(1, 2)
    >>> ax1, ax2 = plot_width_scan(axes, tab, {"scan": slice(0, 2)})
    >>> [len(ax.containers) for ax in (ax1, ax2)], sorted(ax1.get_legend_handles_labels()[1])
    ([1, 1], ['exact width', 'identity', 'scan'])
    >>> plt.close(fig)
    """
    from .._validation import check_axes_list  # noqa: PLC0415
    check_axes_list(axes)
    from .._validation import check_array

    if len(axes) != 2:
        raise ValueError(f"axes must hold two Axes, got {len(axes)}")
    tab = check_array(scan, "scan", ndim=2)
    if tab.shape[1] != 6:
        raise ValueError(f"scan must have 6 columns (teacher_student_scan), got shape {tab.shape}")
    if not isinstance(groups, dict) or not groups:
        raise ValueError("groups must be a non-empty dict {label: index}")
    sig, sig_se, S_mean, S_se, lead, exact = tab.T
    ax1, ax2 = axes
    eb = dict(fmt="o", mfc="white", capsize=3)
    for lab, sl in groups.items():
        ax1.errorbar(lead[sl], sig[sl], 2 * sig_se[sl], label=lab, **eb)
        ax2.errorbar(np.sqrt(np.pi) * sig[sl], S_mean[sl], 2 * S_se[sl], **eb)
    if line_max is None:
        line_max = 1.05 * max(lead.max(), exact.max(), sig.max())
    line = np.array([0, check_positive(line_max, "line_max")])
    ax1.plot(lead, exact, "kx", ms=7, label="exact width")
    ax1.plot(line, line, "k--", lw=1.5, label="identity")
    ax2.plot(line * np.sqrt(np.pi), line * np.sqrt(np.pi), "k--", lw=1.5)
    ax1.set(xlabel=r"$\sqrt{\alpha\varepsilon^2/|\mathcal{B}|}$", ylabel=r"measured width $\hat\sigma$")
    ax2.set(xlabel=r"$\sqrt{\pi}\,\hat\sigma$", ylabel=r"mean spacing $\langle S\rangle$")
    return axes


def plot_width_ratio(ax, lr, ratio, ratio_se, exact, lr_range=(0.02, 0.45)):
    r"""Measured width over the leading prediction against :math:`\alpha`, with the AR(1) and exact predictions.

    The AR(1) correction is :math:`\sqrt{2/(2-\alpha)}` (:func:`teacher_student_width`).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    lr : array_like
        Learning rates :math:`\alpha`.
    ratio, ratio_se : array_like
        Measured :math:`\hat\sigma/\sigma_{\rm leading}` and its standard error (bars: two SE).
    exact : array_like
        Exact predicted ratio per learning rate.
    lr_range : (float, float)
        Range of the AR(1) curve.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, with the data, AR(1) curve and exact widths.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> len(plot_width_ratio(ax, [0.1, 0.2], [1.0, 1.05], [0.01, 0.01], [1.03, 1.06]).lines)
    5
    >>> plt.close(fig)
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    from .._validation import check_array

    lr = check_array(lr, "lr", ndim=1, positive=True)
    ratio = check_array(ratio, "ratio", shape=lr.shape)
    ratio_se = check_array(ratio_se, "ratio_se", shape=lr.shape)
    exact = check_array(exact, "exact", shape=lr.shape)
    lo, hi = (check_positive(v, "lr_range") for v in lr_range)
    if not lo < hi < 2:
        raise ValueError(f"lr_range must satisfy 0 < lo < hi < 2, got {lr_range}")
    ax.errorbar(lr, ratio, 2 * ratio_se, fmt="o", mfc="white", capsize=3, label="simulation")
    a_line = np.linspace(lo, hi, 50)
    ax.plot(a_line, np.sqrt(2 / (2 - a_line)), label=r"AR(1): $\sqrt{2/(2-\alpha)}$")
    ax.plot(lr, exact, "kx", ms=8, label="exact")
    ax.set_ylabel(r"$\hat\sigma/\sqrt{\alpha\varepsilon^2/|\mathcal{B}|}$")
    return ax

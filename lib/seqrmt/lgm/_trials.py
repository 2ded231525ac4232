"""Means and standard errors over the trial axis of the simulation records (Models 1 and 2)."""

import numpy as np

from ..stats import mean_se


def _trial_mean(a):
    """Mean over trials (axis 1)."""
    return a.mean(axis=1)


def _trial_se(a):
    """Standard error of the mean over trials (axis 1); NaN for a single trial."""
    return mean_se(a, axis=1)[1] if a.shape[1] > 1 else np.full(a.shape[0], np.nan)

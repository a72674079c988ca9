"""The report of one solve: everything the CLI's ``--json`` prints, as attributes."""

import json

import numpy as np

# SciPy's codes: 0 converged, > 0 tolerance not met within the iterations (the count),
# < 0 a breakdown. scipy.sparse.linalg's BiCGStab uses -10 and -11 for its breakdowns.
BREAKDOWN_INFO = -10
_BREAKDOWNS = {"breakdown", "non_finite", "not_spd", "diverged"}


class SolveReport:
    """What a solve did and why it stopped.

    Every key of the CLI's JSON report is an attribute (``iterations``, ``converged``,
    ``reason``, ``reason_detail``, ``relative_residual`` (the true ``|b - Ax|/|b|``),
    ``residual_inf``, ``dispatches_per_iteration``, ``transfers_per_iteration``,
    ``reductions_per_iteration``, ``syncs_per_iteration``, ``cycles``, ``syncs_per_cycle``
    (GMRES; ``None`` otherwise), ``device``, ``device_reason``, ``seconds``, ``format``, ``notes``, ``refinement`` ...); ``history`` is
    a NumPy array of the residual norms, ``x`` the solution and ``info`` SciPy's code.
    ``to_dict()`` gives the JSON object itself.
    """

    def __init__(self, fields, x):
        self._fields = fields
        self.x = x
        self.history = np.asarray(fields.get("history") or [], dtype=np.float64)

    @classmethod
    def _from_json(cls, text, x):
        return cls(json.loads(text), x)

    def __getattr__(self, name):
        fields = self.__dict__.get("_fields", {})
        if name in fields:
            return fields[name]
        raise AttributeError(f"SolveReport has no field {name!r} (fields: {', '.join(fields)})")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._fields))

    def to_dict(self):
        """The report as the CLI's ``--json`` object (history as a list)."""
        return dict(self._fields)

    @property
    def reason_name(self):
        """The stop reason's short name: ``converged``, ``max_iterations``, ``breakdown``..."""
        reason = self._fields.get("reason")
        if isinstance(reason, dict):
            return next(iter(reason))
        return str(reason)

    @property
    def info(self):
        """SciPy's ``info``: 0 when converged, the iteration count when the tolerance was
        not met in time, negative (``-10``) for a breakdown."""
        if self._fields.get("converged"):
            return 0
        if self.reason_name in _BREAKDOWNS:
            return BREAKDOWN_INFO
        return max(int(self._fields.get("iterations", 0)), 1)

    def __repr__(self):
        f = self._fields
        device = f.get("device", {})
        name = device.get("name", device) if isinstance(device, dict) else device
        return (
            f"<SolveReport {f.get('variant')} {f.get('method')} {f.get('precision')} on {name}: "
            f"{'converged' if f.get('converged') else 'NOT converged'} after "
            f"{f.get('iterations')} iterations ({self.reason_name}), "
            f"|b - Ax|/|b| = {f.get('relative_residual', float('nan')):.3e}, "
            f"{f.get('seconds', 0.0):.4f} s>"
        )

"""The public functions: SciPy's ``cg``/``bicgstab``/``gmres``/``bicg`` signatures, the rich
``solve``, the ``Matrix`` handle, devices and Matrix Market I/O."""

import json
import os

import numpy as np

from . import _native
from ._convert import native_matrix, vector
from ._errors import InputError, NotConvergedError, UnsupportedError
from ._report import SolveReport

_PRECONDITIONERS = ("none", "jacobi", "ilu0", "ic0", "ilut", "auto")


class Matrix:
    """A sparse matrix converted once to the library's CSR form. Solves of it keep A's upload
    and the preconditioner on the device until the handle is dropped, so repeated solves
    (many right-hand sides, time steps) pay the set-up once.

    ``A``: any SciPy sparse matrix or array, a dense 2-D NumPy array, or another Matrix.
    ``dtype`` (float64 or float32) is the precision solves use by default; it defaults to the
    input's (float64 for integer input).

    >>> import numpy as np, krylov_wgpu as kw
    >>> A = kw.Matrix(np.array([[4.0, 1.0], [1.0, 3.0]]))
    >>> A.shape, A.nnz
    ((2, 2), 4)
    """

    def __init__(self, A, dtype=None):
        if isinstance(A, _native.NativeMatrix):
            self._native, in_dtype = A, np.dtype(np.float64)
        else:
            self._native, in_dtype = native_matrix(A)
        dtype = np.dtype(dtype) if dtype is not None else in_dtype
        self.dtype = np.dtype(np.float32) if dtype == np.float32 else np.dtype(np.float64)

    @property
    def shape(self):
        return self._native.shape

    @property
    def nnz(self):
        return self._native.nnz

    def to_scipy(self):
        """The matrix as a ``scipy.sparse.csr_array`` (float64)."""
        import scipy.sparse

        indptr, indices, data = self._native.csr_arrays()
        return scipy.sparse.csr_array((data, indices, indptr), shape=self.shape)

    def is_symmetric(self, tol=1e-10):
        """Whether A equals its transpose within ``tol`` (relative): CG's input check."""
        return self._native.is_symmetric(tol)

    def __matmul__(self, x):
        return self._native.matvec(vector(x, "x", self.shape[1]))

    def __repr__(self):
        return f"<krylov_wgpu.Matrix {self.shape[0]}x{self.shape[1]}, nnz={self.nnz}, {self.dtype}>"


def _precision(precision, a_dtype, b):
    if precision is not None:
        return str(precision)
    b_dtype = np.asarray(b).dtype
    single = a_dtype == np.float32 and b_dtype == np.float32
    return "f32" if single else "f64"


def _precond(M, precond):
    """``precond`` from SciPy's ``M`` (None or a preconditioner's name) and the keyword."""
    if M is None:
        return precond
    if isinstance(M, str) and M.lower() in _PRECONDITIONERS:
        if precond not in (None, "none", M.lower()):
            raise UnsupportedError(f"M={M!r} and precond={precond!r} disagree", "Unsupported")
        return M.lower()
    raise UnsupportedError(
        "M as a matrix or operator is not supported: the preconditioner is built on the GPU "
        f"from A; pass precond= (or M=) one of {', '.join(_PRECONDITIONERS)}",
        "Unsupported",
    )


def _run(A, b, x0, callback, method, rtol, atol, maxiter, options):
    """The solve behind every public function: inputs converted, options passed to Rust
    (unset ones left to its defaults), the report built, CPU residuals replayed."""
    options = dict(options, method=method, rtol=rtol, atol=atol, maxiter=maxiter)
    native, a_dtype = native_matrix(A)
    n = native.shape[0]
    b_arr = vector(b, "b", n)
    x0_arr = vector(x0, "x0", native.shape[1])
    options = {k: v for k, v in options.items() if v is not None}
    options["precision"] = _precision(options.get("precision"), a_dtype, b_arr)
    live = [0]

    def counted(residual):
        live[0] += 1
        callback(residual)

    x, text = _native.solve(native, b_arr, x0_arr, options, counted if callback else None)
    report = SolveReport._from_json(text, x)
    if callback is not None and live[0] == 0 and report.iterations > 0:
        # The CPU reference keeps its residuals to itself while it runs: replay them, one
        # call per iteration in order, as a GPU solve makes them.
        for residual in report.history[1 : report.iterations + 1]:
            callback(float(residual))
    return report


def solve(
    A,
    b,
    x0=None,
    *,
    method="auto",
    rtol=1e-5,
    atol=0.0,
    maxiter=None,
    restart=30,
    precond=None,
    variant="pipelined",
    precision=None,
    device="auto",
    format="auto",
    callback=None,
    check=True,
    **options,
):
    """Solves ``A x = b`` and returns the full :class:`SolveReport` (the solution is
    ``report.x``).

    ``method``: ``auto`` (the default: CG for a symmetric matrix with a positive diagonal,
    solved again with GMRES if CG finds it indefinite; GMRES for every other; ``report.notes``
    says which and why), ``cg``, ``bicgstab``, ``gmres``, ``cagmres`` (communication-avoiding
    GMRES(s, m): options ``s_step``, ``tsqr``, ``basis``), ``bicg`` or ``jacobi``. ``maxiter`` counts
    iterations (default 10·n), ``restart`` is GMRES's m (for ``cagmres`` a multiple of
    ``s_step``, default 5). ``precision``: ``f64``, ``f32`` or
    ``mixed`` (f32 solves refined to f64 accuracy); default f32 when A and b are both float32,
    else f64. ``device``: ``auto`` (a hardware GPU that can run the request, else the CPU
    reference), ``gpu`` or ``cpu``; ``report.device_reason`` says which ran and why.
    ``precond``: ``none`` (the default), ``jacobi``, ``ilu0``, ``ic0``, ``ilut`` (threshold
    incomplete LU with fill-in: indefinite or badly scaled matrices where ``ilu0`` fails) or
    ``auto``, as the CLI's ``--precond auto``: none first and, when that solve stops without
    converging (stagnation, breakdown, divergence, non-finite values, the default ``maxiter``,
    or a residual falling too slowly to get there, stopped early), solved again with ``ic0``
    (CG) or ``ilut`` (GMRES, BiCGStab); ``report.notes`` says so (``"precond auto: ..."``) and
    ``report.preconditioner`` names the one that ran. ``auto`` solves without a
    preconditioner and never again with an explicit ``maxiter``, ``devices`` or
    ``precision="mixed"``. More options, as the CLI's:
    ``side``, ``trisolve``, ``reorder``, ``equilibrate``, ``gs``, ``s_step``, ``tsqr``, ``basis``, ``check_mode``, ``batch``, ``reduction``,
    ``max_padding``, ``adapter``, ``no_f64``, ``allow_mixed``, ``inner_rtol``, ``max_outer``,
    ``outer_precision``, and ``devices``: split A's rows over several GPUs (``method`` ``cg``,
    ``bicgstab`` or ``gmres``, ``precond`` ``none`` or ``jacobi``; ``method="bicg"`` with two
    devices puts its A- and Aᵀ-recurrences on one each, with any ``precond``): a count, ``"0,1"``
    or a list of adapter indices (one may repeat: logical devices on one adapter);
    ``report.devices`` then has each device's block and the exchange.

    ``callback(residual_norm)`` is called after every iteration. With ``check`` (the
    default) a solve that does not converge raises :class:`NotConvergedError` carrying the
    report; with ``check=False`` it returns it.
    """
    options.update(restart=restart, precond=precond, variant=variant, precision=precision,
                   device=device, format=format)
    report = _run(A, b, x0, callback, method, rtol, atol, maxiter, options)
    if check and not report.converged:
        raise NotConvergedError(f"not converged: {report.reason_detail}", report)
    return report


def _scipy_shaped(method, A, b, x0, rtol, atol, maxiter, M, callback, full_output, options):
    options["precond"] = _precond(M, options.pop("precond", None))
    report = _run(A, b, x0, callback, method, rtol, atol, maxiter, options)
    if full_output:
        return report.x, report.info, report
    return report.x, report.info


_SCIPY_DOC = """
    Same arguments, defaults and return value as ``scipy.sparse.linalg.{name}``: returns
    ``(x, info)``, ``info`` 0 when converged, the iteration count when the tolerance was not
    met within ``maxiter``{maxiter_note}, negative for a breakdown. Stops when
    ``|b - Ax| <= max(rtol*|b|, atol)``, confirmed by the true residual.

    ``M`` may be ``None`` or a preconditioner's name (``"jacobi"``, ``"ilu0"``, ``"ic0"``,
    ``"ilut"``, or ``"auto"``: none, and a solve that stops short solved again with one, as
    in :func:`solve`; or
    ``precond=``): the preconditioner is built from A on the device. ``callback`` receives
    the residual norm after each iteration (x itself stays on the GPU){callback_note}.

    Keyword extensions: ``variant`` (``pipelined``/``classical``; ``fused`` for CG — one
    launch per iteration — and GMRES — two launches per step; ``workgroup`` for CG and
    GMRES on a system of up to a few thousand rows — one workgroup, CG 32 whole iterations
    per launch, GMRES a whole restart cycle per launch; ``cooperative`` for CG — 16 iterations per launch across a grid barrier;
    ``p1`` for GMRES — p(1)-GMRES, one launch and one global reduction per step),
    ``precision``
    (``f64``/``f32``/``mixed``), ``device`` (``auto``/``gpu``/``cpu``), ``format``,
    ``precond`` and every option of :func:`solve`; ``full_output=True`` returns
    ``(x, info, report)`` with the :class:`SolveReport`.
"""


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None,
       full_output=False, **options):
    return _scipy_shaped("cg", A, b, x0, rtol, atol, maxiter, M, callback, full_output, options)


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None,
             full_output=False, **options):
    return _scipy_shaped("bicgstab", A, b, x0, rtol, atol, maxiter, M, callback, full_output,
                         options)


def bicg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None,
         full_output=False, **options):
    return _scipy_shaped("bicg", A, b, x0, rtol, atol, maxiter, M, callback, full_output, options)


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0.0, restart=None, maxiter=None, M=None,
          callback=None, callback_type=None, full_output=False, **options):
    restart = 20 if restart is None else int(restart)
    n = getattr(A, "shape", (0,))[0]
    # SciPy counts GMRES's maxiter in restart cycles. Its default (10·n cycles) goes as the
    # default, not as a limit the user set (which precond="auto" does not retry at).
    if maxiter is None:
        options["_maxiter_default"] = 10 * max(int(n), 1) * restart
        iterations = None
    else:
        iterations = int(maxiter) * restart
    if callback_type not in (None, "legacy", "pr_norm"):
        raise UnsupportedError(
            f"callback_type={callback_type!r}: the iterate x stays on the GPU; use 'pr_norm' "
            "(the residual norm after each iteration)",
            "Unsupported",
        )
    options["restart"] = restart
    return _scipy_shaped("gmres", A, b, x0, rtol, atol, iterations, M, callback,
                         full_output, options)


for _f, _name, _maxiter_note, _callback_note in (
    (cg, "cg", "", ""),
    (bicgstab, "bicgstab", "", ""),
    (bicg, "bicg", "", ""),
    (gmres, "gmres", " (counted in restart cycles, as SciPy does)",
     "; ``callback_type`` ``None``, ``'legacy'`` or ``'pr_norm'``"),
):
    _f.__doc__ = f"Solves ``A x = b`` by {_name} on the GPU.\n" + _SCIPY_DOC.format(
        name=_name, maxiter_note=_maxiter_note, callback_note=_callback_note
    )


def solve_batch(
    matrices,
    rhs,
    *,
    rtol=1e-5,
    atol=0.0,
    maxiter=None,
    precond="none",
    precision=None,
    device="auto",
    adapter=None,
    batch=0,
):
    """Solve many independent symmetric positive definite systems in one batched GPU run.

    ``matrices``: a sequence of matrices (SciPy sparse, dense 2-D arrays or :class:`Matrix`),
    one per system, of any sizes and sparsity patterns — or a single matrix for one system.
    ``rhs``: one entry per matrix: a 1-D array (one right-hand side) or a 2-D array of shape
    (n, k) whose columns are k right-hand sides of that matrix (solved as blocks of four that
    read A once per product). Each right-hand side stops on its own at
    ‖r‖ ≤ max(rtol·‖b‖, atol) or ``maxiter`` (default 10·max n); ``precond`` is ``"none"`` or
    ``"jacobi"``. Batched CG runs one system per GPU workgroup (``batch``: iterations per
    launch, 0 for the default), or on the CPU reference where no GPU can.

    Returns ``(xs, report)``: ``xs[i]`` has the shape of ``rhs[i]`` (for a single matrix, ``xs``
    is its solution); ``report`` is a dict (the
    CLI's ``krylov batch --json``) with one entry per right-hand side in
    ``report["columns"]`` (``converged``, ``iterations``, ``reason``, the true
    ``relative_residual``) and ``report["all_converged"]``.

    >>> import numpy as np, scipy.sparse as sp, krylov_wgpu as kw
    >>> A = [sp.diags([4.0] * n) - sp.eye(n, k=1) - sp.eye(n, k=-1) for n in (5, 8)]
    >>> xs, report = kw.solve_batch(A, [np.ones(5), np.ones((8, 2))], rtol=1e-10)
    >>> report["all_converged"], xs[1].shape
    (True, (8, 2))
    """
    one = not isinstance(matrices, (list, tuple))
    if one:
        matrices, rhs = [matrices], [rhs]
    if not isinstance(rhs, (list, tuple)) or len(rhs) != len(matrices):
        raise InputError(
            "rhs needs one entry (a 1-D or an n x k array) per matrix", "DimensionMismatch"
        )
    natives, columns, dtypes = [], [], []
    for i, (A, b) in enumerate(zip(matrices, rhs)):
        native, a_dtype = native_matrix(A)
        dtypes.append(a_dtype)
        n = native.shape[0]
        b = np.asarray(b)
        if b.ndim == 2:
            cols = [
                vector(np.ascontiguousarray(b[:, j]), f"rhs[{i}][:, {j}]", n)
                for j in range(b.shape[1])
            ]
        else:
            cols = [vector(b, f"rhs[{i}]", n)]
        natives.append(native)
        columns.append(cols)
    if precision is None:
        all_f32 = all(np.dtype(d) == np.float32 for d in dtypes) and all(
            c.dtype == np.float32 for cs in columns for c in cs
        )
        precision = "f32" if all_f32 else "f64"
    options = {
        "rtol": rtol,
        "atol": atol,
        "maxiter": maxiter,
        "precond": precond,
        "precision": str(precision),
        "device": device,
        "adapter": adapter,
        "batch": batch,
    }
    options = {k: v for k, v in options.items() if v is not None}
    xs, text = _native.solve_batch(natives, columns, options)
    out = []
    for b, x in zip(rhs, xs):
        b = np.asarray(b)
        out.append(np.stack(x, axis=1) if b.ndim == 2 else x[0])
    return (out[0] if one else out), json.loads(text)


def devices():
    """The adapters the library sees, ranked (a list of dicts: index, name, backend,
    device_type, software, driver, shader_f64, ...), each with ``auto_f64``/``auto_f32``
    saying whether ``device="auto"`` picks it for that precision."""
    d = json.loads(_native.devices())
    for a in d["adapters"]:
        a["auto_f64"] = d["auto_f64"]["gpu"] == a["index"]
        a["auto_f32"] = d["auto_f32"]["gpu"] == a["index"]
    return d["adapters"]


def auto_device(precision="f64"):
    """What ``device="auto"`` chooses for ``precision``: ``{"gpu": index or None,
    "reason": ...}`` (``None``: the CPU reference)."""
    d = json.loads(_native.devices())
    return d["auto_f64" if str(precision) in ("f64", "mixed") else "auto_f32"]


def read_mtx(path):
    """A Matrix Market matrix file (``.gz`` too) as a :class:`Matrix`."""
    return Matrix(_native.read_mtx(os.fspath(path)))


def write_mtx(path, A):
    """Writes ``A`` (anything :class:`Matrix` accepts) as a Matrix Market coordinate file."""
    native, _ = native_matrix(A)
    _native.write_mtx(os.fspath(path), native)


def read_vector(path):
    """A Matrix Market vector (array format, or an n×1 coordinate matrix), float64."""
    return _native.read_vector(os.fspath(path))


def write_vector(path, x):
    """Writes a 1-D array as a Matrix Market array file."""
    _native.write_vector(os.fspath(path), vector(x, "x"))

"""krylov_wgpu: portable GPU Krylov solvers with SciPy's API.

Switch from SciPy in one line::

    from scipy.sparse.linalg import cg      # before
    from krylov_wgpu import cg              # after: x, info = cg(A, b, rtol=1e-8)

``cg``, ``bicgstab``, ``gmres`` and ``bicg`` take SciPy's arguments and return ``(x, info)``;
``solve`` returns the full :class:`SolveReport`; ``solve_batch`` solves many independent SPD
systems in one batched GPU run. Solves run on a hardware GPU (Vulkan, Metal,
DX12) when one can run them, else on the f64 CPU reference; ``report.device_reason`` says
which and why. The GIL is released while a solve runs and Ctrl-C stops it.
"""

from ._api import (
    Matrix,
    auto_device,
    bicg,
    bicgstab,
    cg,
    devices,
    gmres,
    read_mtx,
    read_vector,
    solve,
    solve_batch,
    write_mtx,
    write_vector,
)
from ._errors import (
    DeviceError,
    InputError,
    KrylovError,
    NotConvergedError,
    UnsupportedError,
)
from ._native import __version__
from ._report import SolveReport

__all__ = [
    "DeviceError",
    "InputError",
    "KrylovError",
    "Matrix",
    "NotConvergedError",
    "SolveReport",
    "UnsupportedError",
    "__version__",
    "auto_device",
    "bicg",
    "bicgstab",
    "cg",
    "devices",
    "gmres",
    "read_mtx",
    "read_vector",
    "solve",
    "solve_batch",
    "write_mtx",
    "write_vector",
]

"""The package's exceptions: one class per kind of failure, each also the built-in exception a
SciPy user already catches, with the library's error variant in ``.kind``."""


class KrylovError(Exception):
    """Any error of krylov_wgpu. ``kind`` is the Rust library's error variant
    (``"NotSquare"``, ``"NonFinite"``, ``"NoUsableAdapter"``, ...)."""

    def __init__(self, message, kind=None):
        super().__init__(message)
        self.kind = kind


class InputError(KrylovError, ValueError):
    """Bad input: a matrix that is not square or not finite, mismatched sizes, an unknown
    option, a method that does not apply to the matrix (CG on a nonsymmetric one), ..."""


class DeviceError(KrylovError, RuntimeError):
    """No adapter can run the request, or the GPU reported an error (out of memory, lost
    device, a buffer over the adapter's limits)."""


class UnsupportedError(KrylovError, NotImplementedError):
    """The combination asked for is not implemented (yet), e.g. ``M`` given as an operator
    instead of ``precond=``, or several right-hand sides at once."""


class NotConvergedError(KrylovError):
    """``kw.solve(..., check=True)`` did not converge; ``.report`` has everything (the
    solution reached in ``.report.x``, the reason, the residual history)."""

    def __init__(self, message, report=None):
        super().__init__(message, "NotConverged")
        self.report = report

"""The GIL is released while a solve runs, and Ctrl-C stops a long solve cleanly (CPU
reference and GPU)."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import scipy.sparse as sp

import krylov_wgpu as kw


def slow_system(n=200):
    """2-D Poisson, 40 000 unknowns: with rtol = 1e-300 a solve runs to maxiter."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    A = sp.csr_array(sp.kron(sp.eye(n), t) + sp.kron(t, sp.eye(n)))
    return A, np.ones(A.shape[0])


def test_the_gil_is_released_during_a_solve(device):
    A, b = slow_system(100)
    ticks = []
    done = threading.Event()

    def solve():
        kw.solve(A, b, rtol=1e-300, maxiter=1500, device=device, check=False)
        done.set()

    worker = threading.Thread(target=solve)
    worker.start()
    while not done.is_set():
        ticks.append(time.perf_counter())  # Python code runs while the solver works
        time.sleep(0.001)
    worker.join()
    assert len(ticks) >= 20, f"the main thread ran {len(ticks)} times during the solve"


def test_ctrl_c_stops_a_long_solve(device):
    script = textwrap.dedent(
        f"""
        import sys, time
        import numpy as np, scipy.sparse as sp
        import krylov_wgpu as kw
        n = 200
        t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
        A = sp.csr_array(sp.kron(sp.eye(n), t) + sp.kron(t, sp.eye(n)))
        kw.cg(A[:10, :10], np.ones(10), device="{device}")  # device open, kernels compiled
        print("solving", flush=True)
        start = time.perf_counter()
        try:
            kw.cg(A, np.ones(A.shape[0]), rtol=1e-300, maxiter=10**6, device="{device}")
        except KeyboardInterrupt:
            print(f"interrupted after {{time.perf_counter() - start:.2f}} s", flush=True)
            sys.exit(0)
        print("finished without interruption", flush=True)
        sys.exit(1)
        """
    )
    # SIGINT back to its default in the child: a suite started in the background by a
    # non-interactive shell inherits it ignored, and Python then never raises
    # KeyboardInterrupt (as a terminal's Ctrl-C would).
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout.readline().strip() == "solving"
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the solve ignored Ctrl-C for 30 s")
    assert proc.returncode == 0, (out, err)
    assert out.startswith("interrupted after"), (out, err)

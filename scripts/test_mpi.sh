#!/usr/bin/env bash
# The MPI build (`--features mpi`) against the single-process solves: `mpirun -np 2` (and 3)
# `krylov solve --mpi` for CG, BiCGStab, GMRES and CA-GMRES on lavapipe must converge, take the same
# iterations as the same blocks on logical devices in one process (`--devices 0,0`) and
# within one of a single device, and meet the tolerance. Needs Open MPI and libclang
# (apt-get install libopenmpi-dev openmpi-bin libclang-dev); .ci/run installs them.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --features mpi --bin krylov
# A separate target dir would rebuild everything; the feature build lands in target/debug,
# so keep a copy before any later build without the feature replaces it.
bin="$(mktemp -d)/krylov-mpi"
cp target/debug/krylov "$bin"
mpi=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)

check() { # method matrix ranks [options]
    local method=$1 matrix=$2 np=$3
    shift 3
    local common=(solve --generate "$matrix" --method "$method" --precond jacobi --rtol 1e-8 --json "$@")
    local one many dist
    one=$("$bin" "${common[@]}")
    many=$("$bin" "${common[@]}" --devices "0$(printf ',0%.0s' $(seq 2 "$np"))")
    dist=$(timeout 600 "${mpi[@]}" -np "$np" "$bin" "${common[@]}" --mpi)
    python3 - "$method" "$matrix" "$np" "$one" "$many" "$dist" <<'PY'
import json, sys
method, matrix, np_, one, many, dist = sys.argv[1:]
one, many, dist = (json.loads(s) for s in (one, many, dist))
tag = f"{method} {matrix} np={np_}"
assert dist["converged"], (tag, dist["reason_detail"])
assert dist["relative_residual"] <= 1e-8 * 1.001, (tag, dist["relative_residual"])
assert dist["iterations"] == many["iterations"], (tag, dist["iterations"], many["iterations"])
assert abs(dist["iterations"] - one["iterations"]) <= 1, (tag, dist["iterations"], one["iterations"])
assert len(dist["devices"]["devices"]) == int(np_), tag
assert dist["devices"]["exchange_values_per_iteration"] == many["devices"]["exchange_values_per_iteration"], tag
assert dist["solution_error"] < 1e-5, (tag, dist["solution_error"])
print(f"mpi: {tag}: {dist['iterations']} iterations (one process: {many['iterations']}, "
      f"one device: {one['iterations']}), |r|/|b| = {dist['relative_residual']:.2e}")
PY
}
check cg poisson2d:32 2
check bicgstab convdiff2d:24 2
# GMRES(60): two cycles (a long run of short cycles is as sensitive to rounding as the
# order of the sums over ranks, and would differ by a few iterations between any two runs).
check gmres convdiff2d:16 2 --restart 60
check gmres convdiff2d:16 3 --restart 60
check cg poisson2d:32 3
# CA-GMRES(5, 30): its matrix powers exchange a depth-5 halo between ranks once per block
# (Péclet 5: 112 iterations; a 500-iteration solve differs by a few between device counts).
check cagmres convdiff2d:24:5 2 --s-step 5 --restart 30
check cagmres convdiff2d:24:5 3 --s-step 5 --restart 30

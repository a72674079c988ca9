#!/usr/bin/env python3
"""Writes a circuit-like SPD matrix in Matrix Market form (python3 standard library only):
n nodes, each tied to a few random others (a sparse netlist), plus a few nets (supply,
ground, clock) tied to many nodes: their rows hold thousands of entries, as in SuiteSparse's
circuit matrices (e.g. the rows of ASIC_* or G3_circuit's rails). Symmetric, strictly
diagonally dominant, so CG runs on it. A held-out matrix for the performance model's
validation (bench/model_matrices_heldout.txt): nothing in the calibration or the validated
list has rows this long.

  circuit_mtx.py OUT.mtx [N] [NETS] [NET_SIZE] [SEED]
"""

import random
import sys


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    nets = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    net_size = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 7)
    off = [dict() for _ in range(n)]

    def tie(i, j, g):
        if i != j:
            off[i][j] = off[i].get(j, 0.0) - g
            off[j][i] = off[j].get(i, 0.0) - g

    for i in range(n):
        for _ in range(2):
            tie(i, rng.randrange(n), rng.uniform(0.1, 1.0))
    for k in range(nets):
        hub = rng.randrange(n)
        for j in rng.sample(range(n), net_size):
            tie(hub, j, rng.uniform(0.01, 0.1))
    entries = []
    for i in range(n):
        # A leak to ground per node, so that A·1 is no eigenvector (CG would stop at once).
        diag = rng.uniform(0.5, 2.0) + sum(-v for v in off[i].values())
        entries.append((i, i, diag))
        entries.extend((i, j, v) for j, v in off[i].items() if j < i)
    with open(out, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real symmetric\n")
        f.write(f"% circuit-like: {n} nodes, {nets} nets of {net_size} (bench/gpu/circuit_mtx.py)\n")
        f.write(f"{n} {n} {len(entries)}\n")
        for i, j, v in entries:
            f.write(f"{i + 1} {j + 1} {v:.17g}\n")


if __name__ == "__main__":
    main()

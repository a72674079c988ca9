"""Time-to-solution table from `krylov bench --tts --json` and `cupy_bench.py --tts`."""
import json
import sys


def rows(path):
    out = []
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            d = json.loads(line)
            if d.get("kind") == "tts":
                out.append(d)
    return out


ours = rows(sys.argv[1])
peer = {(r["problem"], r["n"], r["precision"], r["method"]): r for r in rows(sys.argv[2])}
print("| problem | n | method | prec | ours ms | iterations | converged | CuPy ms | CuPy info | CuPy ‖b−Ax‖/‖b‖ | ours/CuPy |")
print("|---|---:|---|---|---:|---:|---|---:|---:|---:|---:|")
for r in ours:
    c = peer.get((r["problem"], r["n"], r["precision"], r["method"]))
    cs = f"{c['seconds'] * 1e3:.1f} | {c['info']} | {c['relative_residual']:.1e} | {r['seconds'] / c['seconds']:.2f}" if c else "– | – | – | –"
    print(f"| {r['problem']} | {r['n']} | {r['method']} | {r['precision']} | {r['seconds'] * 1e3:.1f} | "
          f"{r['iterations']} | {r['converged']} | {cs} |")

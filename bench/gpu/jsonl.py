"""Reading `krylov bench --json` output: rows, and the adapter/bandwidth line apart."""
import json


def load(path):
    """(rows, meta): every JSON object of the file; the one with `stream_gb_per_s` is meta."""
    rows, meta = [], {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            d = json.loads(line)
            if "stream_gb_per_s" in d:
                meta = d
            else:
                rows.append(d)
    return rows, meta

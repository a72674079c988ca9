#!/usr/bin/env python3
"""Draws assets/icon.png (64x64 RGBA): the sparsity pattern of a small 2D Poisson matrix
(a banded pattern with the two outer diagonals), blue on a rounded dark square.
Standard library only (zlib + struct), so it runs anywhere: python3 scripts/make_icon.py"""
import struct
import zlib
from pathlib import Path

N = 64
K = 4  # Poisson grid k: n = k*k = 16 unknowns, drawn as a 16x16 pattern of 3x3 cells
n = K * K


def nonzero(i, j):
    ri, ci = divmod(i, K)
    rj, cj = divmod(j, K)
    return abs(ri - rj) + abs(ci - cj) <= 1


def pixel(x, y):
    # Rounded square background.
    r = 10
    cx = min(max(x, r), N - 1 - r)
    cy = min(max(y, r), N - 1 - r)
    if (x - cx) ** 2 + (y - cy) ** 2 > r * r:
        return (0, 0, 0, 0)
    bg = (24, 30, 44, 255)
    m = 8  # margin
    cell = (N - 2 * m) // n  # 3 px per entry
    gx, gy = x - m, y - m
    if 0 <= gx < cell * n and 0 <= gy < cell * n:
        i, j = gy // cell, gx // cell
        if nonzero(i, j) and gx % cell < cell - 1 and gy % cell < cell - 1:
            return (250, 170, 40, 255) if i == j else (70, 150, 240, 255)
    return bg


rows = b"".join(
    b"\x00" + bytes(c for x in range(N) for c in pixel(x, y)) for y in range(N)
)


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


png = (
    b"\x89PNG\r\n\x1a\n"
    + chunk(b"IHDR", struct.pack(">IIBBBBB", N, N, 8, 6, 0, 0, 0))
    + chunk(b"IDAT", zlib.compress(rows, 9))
    + chunk(b"IEND", b"")
)
out = Path(__file__).resolve().parent.parent / "assets" / "icon.png"
out.write_bytes(png)
print(f"wrote {out} ({len(png)} bytes)")

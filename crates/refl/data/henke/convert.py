#!/usr/bin/env python3
"""Convert periodictable's Henke/CXRO tables into the compact files that scatterlab-refl embeds.

Run from the repository root with the bench venv (periodictable 2.1.0):
    ~/.cache/scatterlab/bench-venv/bin/python crates/refl/data/henke/convert.py

Writes, next to this script:
  f1f2.txt      every element Z = 1..92: a block header `= Z Symbol N` followed by N rows
                `E_eV f1 f2`, the numbers copied verbatim from periodictable/xsf/<sym>.nff
                (f1 = -9999. where the source has no f1; the loader skips those rows).
  elements.txt  `Z Symbol mass_g_per_mol` (periodictable's standard atomic weights).

One correction is applied and printed: a row whose energy is greater than the next row's energy
is dropped (si.nff lists 1838.80, 1839., 1838.90; the 1839. row is dropped, which is also what
numpy.interp on the unsorted table returns for every E >= 1839 eV). Rows with equal energies
(edge steps, e.g. mg.nff at 10.3 eV) are kept: they are discontinuities.
"""
import os
import sys

import periodictable

HERE = os.path.dirname(os.path.abspath(__file__))
XSF = os.path.join(os.path.dirname(periodictable.__file__), "xsf")


def rows_of(path):
    """(comment, rows) of one .nff file; rows are (E, f1, f2) strings as written there."""
    with open(path, encoding="ascii") as fh:
        lines = fh.read().splitlines()
    comment = lines[0].strip()
    rows = []
    for line in lines[1:]:
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 3:
            sys.exit(f"{path}: unexpected line {line!r}")
        float(fields[0]), float(fields[1]), float(fields[2])  # must parse
        rows.append(tuple(fields))
    return comment, rows


def main():
    out_f = [
        "# Henke/CXRO atomic scattering factors f1, f2 vs photon energy (eV), Z = 1..92.",
        "# B.L. Henke, E.M. Gullikson, J.C. Davis, At. Data Nucl. Data Tables 54, 181 (1993), with CXRO updates;",
        f"# copied from the Python package periodictable {periodictable.__version__} (periodictable/xsf/*.nff) by convert.py.",
        "# Block header: '= Z Symbol N', then N rows 'E_eV f1 f2'; f1 = -9999. means not tabulated.",
    ]
    out_e = [
        f"# Standard atomic weights (g/mol) from periodictable {periodictable.__version__}, Z = 1..92: 'Z Symbol mass'.",
    ]
    for el in periodictable.elements:
        if not 1 <= el.number <= 92:
            continue
        out_e.append(f"{el.number} {el.symbol} {el.mass!r}")
        comment, rows = rows_of(os.path.join(XSF, el.symbol.lower() + ".nff"))
        kept = []
        for i, row in enumerate(rows):
            if i + 1 < len(rows) and float(row[0]) > float(rows[i + 1][0]):
                print(f"{el.symbol}: dropped out-of-order row {' '.join(row)} (next E = {rows[i + 1][0]})")
                continue
            kept.append(row)
        if not comment.startswith("E(eV)"):
            out_f.append("# " + comment.lstrip("# ").strip())
        out_f.append(f"= {el.number} {el.symbol} {len(kept)}")
        out_f.extend(" ".join(r) for r in kept)
    with open(os.path.join(HERE, "f1f2.txt"), "w", encoding="ascii", newline="\n") as fh:
        fh.write("\n".join(out_f) + "\n")
    with open(os.path.join(HERE, "elements.txt"), "w", encoding="ascii", newline="\n") as fh:
        fh.write("\n".join(out_e) + "\n")


if __name__ == "__main__":
    main()

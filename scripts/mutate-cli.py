#!/usr/bin/env python3
"""Adversarial mutation campaign against the `scatterlab` CLI (issue 25). Development tool, not CI.

Seeded mutations of every CLI input kind, each run of the release binary under a 20 s timeout and a
6 GiB address-space cap, classified as

  panic        stderr contains "panicked"
  abort        killed by a signal (allocation failure aborts, OOM, segfault)
  timeout      ran past the timeout
  nonfinite    exit 0 but NaN/inf/null in the JSON or .npy outputs, or Σ I > 1 + 1e-6 for a
               non-absorptive Bloch case
  nomessage    non-zero exit with nothing on stderr (an error the user cannot read)
  error        clean error (non-zero exit with a message, no panic)
  ok           clean success

Kinds: refl-cases (cases files from ../shared/fixtures/refl/reference.json), refl-fit (fit tasks from
fit_task.json), refl-model (crates/refl/tests/data/models/*.json, `refl compute --model`, sometimes a
mutated `--q-grid`), bloch (cases files from ../shared/fixtures/bloch/reference.json: JSON and CIF
mutations; run with `--max-work 20`, the time budget that fits the timeout), stem-master and
stem-data (Dectris dev_small master / data files copied to a temp dir: byte flips, truncation,
absurd size and calibration fields; `stem reduce`, `stem info`, `h5 ls`).

Every non-clean case is saved (input files + cmd.sh + stderr) under the work folder for replay:
`sh <work>/<kind>/<n>/cmd.sh`.

    source scripts/env.sh && cargo build --release -p scatterlab-cli
    python3 scripts/mutate-cli.py --per-kind 300 --seed 1 [--kinds bloch,refl-cases] [--bin PATH]

The issue's acceptance run (TESTING.md § Mutation campaign): `--per-kind 2000 --seed 2026`, ~15 min
on 2 shared cores, one run at a time.
"""

from __future__ import annotations

import argparse
import array
import copy
import json
import math
import os
import random
import re
import resource
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SCATTERLAB_FIXTURES", REPO.parent / "shared" / "fixtures"))
TIMEOUT_S = 20
AS_LIMIT = 6 << 30
CLASSES = ["panic", "abort", "timeout", "nonfinite", "nomessage", "error", "ok"]
KINDS = ["refl-cases", "refl-fit", "refl-model", "bloch", "stem-master", "stem-data"]

HUGE_NUMBERS = [1e308, -1e308, 1e154, 1e200, 1e18, 9e15, -1.0, 0, 1, -0.0, 1e-320, 2**64 - 1, 2**63, 2**40, 2**32 + 1, 1e12, -1e12, 1e5, 1e9]
BLOCH_MAX_WORK = 20  # `bloch simulate --max-work`, in 1e9 complex multiply-adds
NAN_LIKE = ["NaN", "nan", "Infinity", "-Infinity", "inf", "1e999", "", "0x10", "1,5"]


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))
    os.setsid()


# ---------------------------------------------------------------------------------------------
# Generic byte mutations


def byte_mutate(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    b = bytearray(data)
    if not b:
        return bytes(rng.randbytes(16)), "random bytes"
    op = rng.choice(["flip", "flip", "truncate", "insert", "zero_run", "dup"])
    if op == "flip":
        n = rng.choice([1, 1, 2, 4, 8, 32])
        for _ in range(n):
            i = rng.randrange(len(b))
            b[i] = rng.randrange(256) if rng.random() < 0.5 else b[i] ^ (1 << rng.randrange(8))
        return bytes(b), f"flip {n} byte(s)"
    if op == "truncate":
        n = rng.randrange(len(b))
        return bytes(b[:n]), f"truncate at {n}"
    if op == "insert":
        i = rng.randrange(len(b) + 1)
        ins = rng.randbytes(rng.choice([1, 3, 17, 200]))
        return bytes(b[:i] + ins + b[i:]), f"insert {len(ins)} bytes at {i}"
    if op == "zero_run":
        i = rng.randrange(len(b))
        n = rng.choice([4, 8, 64, 512])
        b[i : i + n] = bytes(min(n, len(b) - i))
        return bytes(b), f"zero {n} bytes at {i}"
    i = rng.randrange(len(b))
    n = rng.choice([8, 64, 1024])
    return bytes(b[:i] + b[i : i + n] * rng.choice([2, 10]) + b[i + n :]), f"duplicate {n} bytes at {i}"


# ---------------------------------------------------------------------------------------------
# JSON-aware mutations


def leaf_paths(obj, path=()):
    """Every path in obj (dict keys and list indices), with the value there."""
    out = [(path, obj)]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(leaf_paths(v, path + (k,)))
    elif isinstance(obj, list):
        # Long numeric lists: sample a few indices only.
        idx = range(len(obj)) if len(obj) <= 8 else sorted({0, 1, len(obj) - 1, len(obj) // 2})
        for i in idx:
            out.extend(leaf_paths(obj[i], path + (i,)))
    return out


def get_parent(obj, path):
    for p in path[:-1]:
        obj = obj[p]
    return obj


RAW_TOKENS = {"__NAN__": "NaN", "__INF__": "Infinity", "__NINF__": "-Infinity", "__BIGINT__": "1" + "0" * 400, "__BIGEXP__": "1e400"}


def number_replacement(rng: random.Random, v):
    r = rng.random()
    if r < 0.65:
        return rng.choice(HUGE_NUMBERS)
    if r < 0.75:
        return rng.choice(list(RAW_TOKENS))  # raw non-JSON tokens, written unquoted
    if r < 0.82:
        return rng.choice(NAN_LIKE)  # as strings
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return rng.choice([-v, v * 1e6, v * 1e-6, v * 1000, v + 1e-9, v * rng.uniform(-10, 10)])
    return 0


def json_mutate(rng: random.Random, obj, protect=()) -> tuple[object, str]:
    obj = copy.deepcopy(obj)
    desc = []
    for _ in range(rng.choice([1, 1, 1, 1, 2, 3])):
        try:
            obj = json_mutate_once(rng, obj, protect, desc)
        except (KeyError, IndexError, TypeError):
            pass  # a path an earlier mutation of this round removed
    return obj, "; ".join(desc) or "no-op"


def json_mutate_once(rng: random.Random, obj, protect, desc: list):
    paths = [(p, v) for p, v in leaf_paths(obj) if p and not any(p[: len(q)] == q for q in protect)]
    nums = [(p, v) for p, v in paths if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if True:
        op = rng.choices(["number", "delete", "type", "list", "string"], weights=[6, 2, 2, 2, 1])[0]
        if op == "number" and nums:
            p, v = rng.choice(nums)
            new = number_replacement(rng, v)
            get_parent(obj, p)[p[-1]] = new
            desc.append(f"{'/'.join(map(str, p))}: {v!r} -> {new!r}")
        elif op == "delete":
            keyed = [(p, v) for p, v in paths if isinstance(p[-1], str)]
            if keyed:
                p, _ = rng.choice(keyed)
                try:
                    del get_parent(obj, p)[p[-1]]
                    desc.append(f"delete {'/'.join(map(str, p))}")
                except (KeyError, IndexError, TypeError):
                    pass
        elif op == "type":
            p, v = rng.choice(paths)
            new = rng.choice([None, True, "x", [], {}, [1, 2], {"a": 1}, -1, 1e308])
            try:
                get_parent(obj, p)[p[-1]] = new
                desc.append(f"{'/'.join(map(str, p))}: type -> {json.dumps(new)}")
            except (IndexError, TypeError, KeyError):
                pass
        elif op == "list":
            lists = [(p, v) for p, v in paths if isinstance(v, list)]
            if lists:
                p, v = rng.choice(lists)
                how = rng.choice(["empty", "one", "drop_last", "repeat", "reverse", "huge"])
                if how == "empty":
                    new = []
                elif how == "one":
                    new = v[:1]
                elif how == "drop_last":
                    new = v[:-1]
                elif how == "reverse":
                    new = v[::-1]
                else:
                    # Long lists of numbers (200k), but only a few thousand nested objects (each
                    # may hold hundreds of numbers: the file must stay a few MB).
                    cap = 200_000 if all(not isinstance(x, (list, dict)) for x in v) else 2_000
                    k = rng.choice([2, 10, 100]) if how == "repeat" else cap
                    new = (v or [0]) * max(1, min(k, cap // max(1, len(v))))
                get_parent(obj, p)[p[-1]] = new
                desc.append(f"{'/'.join(map(str, p))}: list {how} (len {len(v)} -> {len(new)})")
        elif op == "string":
            strs = [(p, v) for p, v in paths if isinstance(v, str)]
            if strs:
                p, v = rng.choice(strs)
                new = rng.choice(["", "x" * 100_000, v + "\u00e9\u0000", v[: len(v) // 2], "../../etc/passwd"])
                get_parent(obj, p)[p[-1]] = new
                desc.append(f"{'/'.join(map(str, p))}: string ({len(v)} -> {len(new)} chars)")
    return obj


def dump_json(obj) -> bytes:
    text = json.dumps(obj, allow_nan=True)
    for k, v in RAW_TOKENS.items():
        text = text.replace(json.dumps(k), v)
    return text.encode()


# ---------------------------------------------------------------------------------------------
# CIF-aware mutations


CIF_VALUES = {
    "length": ["0", "-1", "1000", "300", "1e308", "nan", "0.001", "50", "1e-9", "?", ".", "5.4(3)"],
    "angle": ["0", "180", "120", "360", "-90", "1e-9", "179.999", "nan", "1e308", "90.0(1)"],
    "occupancy": ["-1", "2", "0", "1e308", "nan", "1.0000001", "-0.0", "?"],
    "uiso": ["-0.1", "1e308", "0", "nan", "100", "-1e-9", "inf"],
    "coord": ["1e308", "-1e308", "nan", "1e9", "0.5", "?", "inf"],
}


def cif_mutate(rng: random.Random, cif: str) -> tuple[str, str]:
    lines = cif.split("\n")
    op = rng.choice(["length", "angle", "all_angles", "occupancy", "uiso", "coord", "no_symmetry", "symop", "no_atoms", "dup_atoms", "uaniso", "bytes"])
    if op in ("length", "angle"):
        keys = [i for i, l in enumerate(lines) if l.startswith("_cell_length_" if op == "length" else "_cell_angle_")]
        if keys:
            i = rng.choice(keys)
            v = rng.choice(CIF_VALUES[op])
            lines[i] = lines[i].split()[0] + " " + v
            return "\n".join(lines), f"cif {lines[i]}"
    if op == "all_angles":
        v = rng.choice(["120", "60", "0", "180", "179", "150"])
        for i, l in enumerate(lines):
            if l.startswith("_cell_angle_"):
                lines[i] = l.split()[0] + " " + v
        return "\n".join(lines), f"cif all angles {v}"
    atom_rows = [i for i, l in enumerate(lines) if len(l.split()) >= 8 and not l.startswith(("_", "'", "loop_"))]
    aniso_rows = [i for i, l in enumerate(lines) if len(l.split()) == 7 and not l.startswith(("_", "'", "loop_"))]
    if op in ("occupancy", "uiso", "coord") and atom_rows:
        i = rng.choice(atom_rows)
        f = lines[i].split()
        col = {"occupancy": 5, "uiso": 6, "coord": rng.choice([2, 3, 4])}[op]
        f[col] = rng.choice(CIF_VALUES[op])
        lines[i] = " ".join(f)
        return "\n".join(lines), f"cif atom row {lines[i]!r}"
    if op == "uaniso" and aniso_rows:
        i = rng.choice(aniso_rows)
        f = lines[i].split()
        f[rng.randrange(1, 7)] = rng.choice(["-0.1", "1e308", "nan", "10", "0"])
        lines[i] = " ".join(f)
        return "\n".join(lines), f"cif aniso row {lines[i]!r}"
    if op == "no_symmetry":
        out, skip = [], False
        for l in lines:
            if l.startswith("_symmetry_equiv_pos") or l.startswith("_space_group_symop"):
                if out and out[-1] == "loop_":
                    out.pop()
                skip = True
                continue
            if skip and l.startswith("'"):
                continue
            skip = False
            out.append(l)
        return "\n".join(out), "cif symmetry loop removed"
    if op == "symop":
        ops = [i for i, l in enumerate(lines) if l.startswith("'")]
        if ops:
            i = rng.choice(ops)
            lines[i] = rng.choice(["'x,y'", "'q,r,s'", "'2x,y,z'", "'x+1/0,y,z'", "'x,y,z,w'", "''", "'x+1e308,y,z'", "'-x-y-z,y,z'"])
            return "\n".join(lines), f"cif symop -> {lines[i]}"
    if op == "no_atoms" and atom_rows:
        for i in sorted(atom_rows, reverse=True):
            del lines[i]
        return "\n".join(lines), "cif atoms removed"
    if op == "dup_atoms" and atom_rows:
        i = rng.choice(atom_rows)
        n = rng.choice([2, 50, 2000])
        lines[i + 1 : i + 1] = [lines[i]] * n
        return "\n".join(lines), f"cif atom row duplicated {n}x"
    data, d = byte_mutate(rng, cif.encode())
    return data.decode("utf-8", "replace"), "cif " + d


# ---------------------------------------------------------------------------------------------
# Output checks


def nonfinite_in_json(value, path="$", found=None, in_list=False):
    """Paths of NaN/inf numbers and of nulls (inside lists, or under numeric-looking keys)."""
    if found is None:
        found = []
    if isinstance(value, float) and not math.isfinite(value):
        found.append(path)
    elif value is None and in_list:
        found.append(path)
    elif isinstance(value, dict):
        for k, v in value.items():
            # Optional fields that are null by design (an unmutated run has them).
            if v is None and k not in ("error", "note", "samples", "description", "warnings", "message", "region", "scan_from", "mask"):
                found.append(f"{path}.{k}=null")
            nonfinite_in_json(v, f"{path}.{k}", found)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            nonfinite_in_json(v, f"{path}[{i}]", found, True)
    return found


def npy_nonfinite(path: Path) -> str | None:
    raw = path.read_bytes()
    if raw[:6] != b"\x93NUMPY":
        return f"{path.name}: not an npy file"
    major = raw[6]
    if major == 1:
        hlen = struct.unpack("<H", raw[8:10])[0]
        start = 10
    else:
        hlen = struct.unpack("<I", raw[8:12])[0]
        start = 12
    header = raw[start : start + hlen].decode("latin1")
    m = re.search(r"'descr':\s*'([<>|=]?)(\w\d+)'", header)
    if not m:
        return None
    code = m.group(2)
    body = raw[start + hlen :]
    if code in ("f8", "f4"):
        arr = array.array("d" if code == "f8" else "f")
        arr.frombytes(body[: len(body) // arr.itemsize * arr.itemsize])
        bad = sum(1 for x in arr if not math.isfinite(x))
        if bad:
            return f"{path.name}: {bad} of {len(arr)} non-finite"
    elif code in ("c16", "c8"):
        arr = array.array("d" if code == "c16" else "f")
        arr.frombytes(body[: len(body) // arr.itemsize * arr.itemsize])
        bad = sum(1 for x in arr if not math.isfinite(x))
        if bad:
            return f"{path.name}: {bad} non-finite components"
    return None


def bloch_flux(out: dict, cases_in: list, abtem: bool) -> list[str]:
    # diffBloch conventions conserve Σ|ψ|² (1e-6 covers expm's round-off); abTEM's physical
    # amplitudes M·ψ′ do not exactly (its own reference reaches Σ I = 1 + 1.1e-4 on Si 300 kV, and a
    # denser crystal more): 1e-2 there still catches a blow-up.
    tol = 1e-2 if abtem else 1e-6
    problems = []
    for i, c in enumerate(out.get("cases", [])):
        inp = cases_in[i] if i < len(cases_in) and isinstance(cases_in[i], dict) else {}
        if inp.get("absorption") is True or c.get("error"):
            continue
        # A rocking case sums the intensities of its tilts: the flux bound is the tilt count.
        bound = 1.0
        if inp.get("kind") == "rocking":
            if isinstance(inp.get("tilt_angles_deg"), list):
                bound = float(len(inp["tilt_angles_deg"]))
            elif isinstance(inp.get("n_tilts"), int):
                bound = float(inp["n_tilts"])
        for t, row in enumerate(c.get("I") or []):
            if isinstance(row, list) and all(isinstance(x, (int, float)) for x in row):
                s = sum(row)
                if s > bound * (1 + tol):
                    problems.append(f"case {c.get('id')} thickness[{t}]: sum I = {s:.9g}")
    return problems


# ---------------------------------------------------------------------------------------------
# Input kinds: each returns (files {name: bytes}, argv (relative to the case folder), description)


class Kinds:
    def __init__(self, rng: random.Random):
        self.rng = rng
        ref = json.loads((SHARED / "refl" / "reference.json").read_text())
        keep = ["id", "energy_ev", "q_inv_A", "thickness_A", "roughness_A", "delta_o", "beta_o", "delta_e", "beta_e"]
        self.refl_cases = [{k: c[k] for k in keep if k in c} for c in ref["cases"]]
        self.fit_task = json.loads((SHARED / "refl" / "fit_task.json").read_text())
        self.models = [json.loads(p.read_text()) for p in sorted((REPO / "crates/refl/tests/data/models").glob("*.json"))]
        bl = json.loads((SHARED / "bloch" / "reference.json").read_text())
        self.bloch_crystals = {k: {"cif": v["cif"]} for k, v in bl["crystals"].items()}
        drop = {"beams", "intensities", "I_ref", "I_abtem", "I_matrix_exp", "abtem_check", "flux_I_ref"}
        # Small cases only (each mutation runs one case): fewest beams first.
        cases = sorted(bl["cases"], key=lambda c: c.get("n_beams", 999))
        self.bloch_cases = [{k: v for k, v in c.items() if k not in drop} for c in cases[:6]]
        self.stem_dir = SHARED / "stem"

    def refl_cases_input(self):
        rng = self.rng
        cases = [copy.deepcopy(c) for c in rng.sample(self.refl_cases, rng.choice([1, 1, 2, 3]))]
        doc = {"cases": cases}
        r = rng.random()
        if r < 0.15:
            data, d = byte_mutate(rng, dump_json(doc))
        elif r < 0.35:
            # Physical and size extremes, one column at a time (the file stays valid JSON).
            c = cases[0]
            n = len(c["thickness_A"])
            op = rng.choice(["energy", "layer", "q", "many_layers", "many_q", "eps_zero"])
            if op == "energy":
                c["energy_ev"] = rng.choice([1e-3, 1e-300, 1e12, 5e11, 1e6, 30, 1e308])
                d = f"energy_ev = {c['energy_ev']}"
            elif op == "layer":
                col = rng.choice(["thickness_A", "roughness_A", "delta_o", "beta_o", "delta_e", "beta_e"])
                i = rng.randrange(n)
                c[col][i] = rng.choice([1e200, 1e154, 1e308, -1e308, 1e9, 0.99, 1.0, 2.0, -0.5, 1e-300, 5e-324, 1e5])
                d = f"{col}[{i}] = {c[col][i]}"
            elif op == "q":
                i = rng.randrange(len(c["q_inv_A"]))
                c["q_inv_A"][i] = rng.choice([0.0, -0.1, 1e-300, 1e3, 1e308, 5e-324, 2.0])
                d = f"q_inv_A[{i}] = {c['q_inv_A'][i]}"
            elif op == "many_layers":
                k = rng.choice([1000, 100_001, 300_000])
                mid = [1.0] * k
                for col in ["thickness_A", "roughness_A", "delta_o", "beta_o", "delta_e", "beta_e"]:
                    c[col] = c[col][:1] + [c[col][1] if col != "thickness_A" else 1.0] * k + c[col][-1:]
                d = f"{k} middle layers"
            elif op == "many_q":
                k = rng.choice([100_000, 1_000_001, 2_000_000])
                c["q_inv_A"] = [0.01 + 0.2 * i / k for i in range(k)]
                d = f"{k} q points"
            else:
                i = rng.randrange(1, n)
                c["delta_o"][i], c["beta_o"][i] = rng.choice([(0.5, 0.0), (1.0, 0.0), (1.0, 1e-300), (0.5, 1e-17)])
                c["delta_e"][i], c["beta_e"][i] = rng.choice([(0.5, 0.0), (c["delta_o"][i], c["beta_o"][i]), (1.0, 0.0)])
                d = f"layer {i}: delta/beta o = {c['delta_o'][i]}/{c['beta_o'][i]}, e = {c['delta_e'][i]}/{c['beta_e'][i]}"
            data = dump_json(doc)
        else:
            doc, d = json_mutate(rng, doc)
            data = dump_json(doc)
        return {"cases.json": data}, ["refl", "compute", "cases.json", "--device", "cpu", "--out", "out.json"], d, None

    def refl_fit_input(self):
        rng = self.rng
        task = copy.deepcopy(self.fit_task)
        if rng.random() < 0.15:
            data, d = byte_mutate(rng, dump_json(task))
        else:
            task, d = json_mutate(rng, task, protect=(("description",), ("noise",)))
            data = dump_json(task)
        method = rng.choice(["lm", "lm", "lm", "de"])
        return {"task.json": data}, ["refl", "fit", "task.json", "--method", method, "--device", "cpu", "--out", "out.json"], d, None

    def refl_model_input(self):
        rng = self.rng
        model = copy.deepcopy(rng.choice(self.models))
        argv = ["refl", "compute", "--model", "model.json", "--device", "cpu", "--out", "out.json"]
        r = rng.random()
        if r < 0.12:
            data, d = byte_mutate(rng, dump_json(model))
        elif r < 0.25:
            data = dump_json(model)
            n = rng.choice(["18446744073709551615", "1000000000000", "0", "1", "-5", "nan", "100000000", "3"])
            a, b = rng.choice([("0.01", "0.25"), ("0.25", "0.01"), ("nan", "1"), ("0", "1e308"), ("-1", "1"), ("0.1", "0.1"), ("1e-320", "1e-300")])
            argv += ["--q-grid", f"{a}:{b}:{n}"]
            d = f"--q-grid {a}:{b}:{n}"
        else:
            model, d = json_mutate(rng, model)
            data = dump_json(model)
        return {"model.json": data}, argv, d, None

    def bloch_input(self):
        rng = self.rng
        case = copy.deepcopy(rng.choice(self.bloch_cases))
        case["thicknesses_A"] = case["thicknesses_A"][:3]
        doc = {"crystals": {case["crystal"]: copy.deepcopy(self.bloch_crystals[case["crystal"]])}, "cases": [case]}
        # The campaign's time budget: 2e10 complex multiply-adds of solver work per case (~4 s here) keeps a
        # heavy legal case (sg_max 1e9: ~2000 beams) inside the 20 s timeout as a named work-budget error; the
        # default budget (2e13, ~1 h of one core) would let it run for minutes.
        argv = ["bloch", "simulate", "cases.json", "--out", "out.json", "--max-work", str(BLOCH_MAX_WORK)]
        if rng.random() < 0.2:
            argv += ["--solver", "eigen"]
        if rng.random() < 0.15:
            argv += ["--conventions", "abtem"]
        if rng.random() < 0.1:
            case["absorption"] = True
        r = rng.random()
        if r < 0.4:
            cif, d = cif_mutate(rng, doc["crystals"][case["crystal"]]["cif"])
            doc["crystals"][case["crystal"]]["cif"] = cif
            data = dump_json(doc)
        elif r < 0.5:
            # Absurd size / range fields.
            field, vals = rng.choice([
                ("thicknesses_A", [[9e15], [1e18], [1.8e19], [1e308], [-5], [0], [1e6, 1e7]]),
                ("g_solve_invA", [100, 1e9, 0, -1, 20]),
                ("sg_max_invA", [1e9, 0, -1, 100]),
                ("structure_factor_grid_g_max_invA", [1000, 1e9, 0, -1]),
                ("energy_eV", [1, 1e12, 0, -2e5, 1e308, 10]),
                ("n_tilts", [2**64 - 1, 10**9, 0, 100000]),
                ("tilt_semiangle_deg", [1e308, 90, 180, -1]),
                ("tilt_angles_deg", [[1e308], [], [90], list(range(-500, 500))]),
                ("orientation", [[[0, 0, 0]] * 3, [[1, 0, 0], [0, 1, 0], [0, 0, 0]], [[1e308, 0, 0], [0, 1, 0], [0, 0, 1]], [[2, 0, 0], [0, 2, 0], [0, 0, 2]], [[1, 0, 0], [1, 0, 0], [0, 0, 1]], [[1, 0, 0], [0, 1, 0], [0, 0, -1]]]),
            ])
            v = rng.choice(vals)
            case[field] = v
            if field in ("n_tilts", "tilt_semiangle_deg"):
                case["kind"] = "rocking"
                case.pop("tilt_angles_deg", None)
                case.setdefault("n_tilts", 5)
                case.setdefault("tilt_semiangle_deg", 0.5)
            d = f"{field} = {str(v)[:60]}"
            data = dump_json(doc)
        elif r < 0.6:
            data, d = byte_mutate(rng, dump_json(doc))
        else:
            doc, d = json_mutate(rng, doc, protect=(("crystals",),))
            data = dump_json(doc)
        cases_in = doc.get("cases") if isinstance(doc, dict) and isinstance(doc.get("cases"), list) else []
        return {"cases.json": data}, argv, d, cases_in

    # --- STEM ---------------------------------------------------------------------------------

    def _stem_files(self, variant: str) -> dict:
        prefix = f"dev_small{variant}"
        files = {f"{prefix}_master.h5": (self.stem_dir / f"{prefix}_master.h5").read_bytes()}
        for i in (1, 2, 3):
            files[f"{prefix}_data_{i:06d}.h5"] = (self.stem_dir / f"{prefix}_data_{i:06d}.h5").read_bytes()
        return files

    def _size_field_mutate(self, data: bytes, ints: list[int], floats: list[float]) -> tuple[bytes, str]:
        rng = self.rng
        cands = []
        for v in ints:
            for fmt in ("<Q", "<I"):
                pat = struct.pack(fmt, v)
                i = data.find(pat)
                while i >= 0:
                    cands.append((i, fmt, v))
                    i = data.find(pat, i + 1)
        for v in floats:
            for fmt in ("<d", "<f"):
                pat = struct.pack(fmt, v)
                i = data.find(pat)
                while i >= 0:
                    cands.append((i, fmt, v))
                    i = data.find(pat, i + 1)
        if floats:
            # Scalar calibration datasets (wavelength, beam centre, pixel size, detector distance,
            # times, step, voltage, semi-angle) hold "round" f64 values: find them all by value.
            for i in range(len(data) - 8):
                x = struct.unpack_from("<d", data, i)[0]
                if x == x and 1e-7 <= abs(x) <= 1e6 and len(repr(abs(x)).replace("e", "").replace(".", "").lstrip("0")) <= 6:
                    cands.append((i, "<d", x))
        if not cands:
            return byte_mutate(rng, data)
        # Half the time a float field (fewer than the size fields, each matters as much).
        fl = [c for c in cands if c[1] in ("<d", "<f")]
        i, fmt, v = rng.choice(fl if fl and rng.random() < 0.5 else cands)
        if fmt in ("<Q", "<I"):
            top = 2**64 - 1 if fmt == "<Q" else 2**32 - 1
            new = rng.choice([top, 2**40 % (top + 1), 2**31, 0, 1, 3, v * 1000, v + 1, 65535])
        else:
            new = rng.choice([1e308, -1e308, float("nan"), float("inf"), 0.0, -1.0, 1e-300, 5e-324, v * 1e6, v * 1e-6, -v, 3e38])
        b = bytearray(data)
        b[i : i + struct.calcsize(fmt)] = struct.pack(fmt, new)
        return bytes(b), f"{fmt}@{i}: {v} -> {new}"

    def _stem_argv(self, master: str):
        rng = self.rng
        r = rng.random()
        if r < 0.12:
            return ["stem", "info", master]
        if r < 0.2:
            return ["h5", "ls", master, "--attrs", "--json"]
        argv = ["stem", "reduce", master, "--out", "out"]
        if rng.random() < 0.25:
            flag = rng.choice([["--bin", rng.choice(["0", "1", "3", "64", "1000", "18446744073709551615"])],
                               ["--bf", rng.choice(["1e308", "0", "-3", "nan", "5"])],
                               ["--adf", rng.choice(["11,24", "24,11", "0,1e308", "nan,5", "-1,-2"])],
                               ["--center", rng.choice(["32,32", "-1e308,0", "nan,nan", "1e9,1e9", "0,0"])],
                               ["--scan", rng.choice(["16,16", "0,0", "1,256", "256,256", "18446744073709551615,1", "4294967296,4294967296"])],
                               ["--mrad"], ["--allow-missing"]])
            argv += flag
        return argv

    def stem_master_input(self):
        rng = self.rng
        variant = rng.choice(["", "", "_lz4", "_gzip", "_u32", "_latest"])
        files = self._stem_files(variant)
        m = f"dev_small{variant}_master.h5"
        if rng.random() < 0.55:
            files[m], d = self._size_field_mutate(files[m], [256, 100, 64, 16], [300.0, 20.0, 32.3, 31.6, 0.24, 0.0196874889748088, 1.0, 0.02, 2.4e-11, 300000.0, 75e-6])
        else:
            files[m], d = byte_mutate(rng, files[m])
        return files, self._stem_argv(m), d, None

    def stem_data_input(self):
        rng = self.rng
        variant = rng.choice(["", "", "_lz4", "_gzip", "_u32", "_latest", "_lz4blk", "_raw"])
        files = self._stem_files(variant)
        name = f"dev_small{variant}_data_{rng.choice([1, 2, 3]):06d}.h5"
        if rng.random() < 0.1:
            del files[name]
            d = f"{name} removed"
        elif rng.random() < 0.4:
            files[name], d = self._size_field_mutate(files[name], [100, 64, 56, 1, 256, 4096], [])
        else:
            files[name], d = byte_mutate(rng, files[name])
        d = f"{name}: {d}"
        return files, self._stem_argv(f"dev_small{variant}_master.h5"), d, None


# ---------------------------------------------------------------------------------------------


def run_one(binary: str, folder: Path, argv: list[str]):
    start = time.time()
    try:
        p = subprocess.run([binary, "--quiet", *argv], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT_S, preexec_fn=limit_memory)
        return p.returncode, p.stdout, p.stderr, time.time() - start, False
    except subprocess.TimeoutExpired as e:
        return None, e.stdout or b"", e.stderr or b"", time.time() - start, True


def classify(kind, folder: Path, argv, rc, stderr: bytes, timed_out: bool, cases_in):
    err = stderr.decode("utf-8", "replace")
    if timed_out:
        return "timeout", ""
    if "panicked" in err:
        line = next((l for l in err.splitlines() if "panicked" in l), "")
        return "panic", line[:300]
    if rc < 0:
        return "abort", f"signal {-rc}: {err.strip().splitlines()[-1][:300] if err.strip() else ''}"
    if rc != 0:
        if not err.strip():
            return "nomessage", f"exit {rc} with nothing on stderr"
        return "error", err.strip().splitlines()[-1][:300]
    problems = []
    for p in list(folder.glob("out.json")) + list(folder.glob("out/*.json")):
        try:
            value = json.loads(p.read_text())
        except ValueError as e:
            problems.append(f"{p.name}: unreadable JSON ({e})")
            continue
        found = nonfinite_in_json(value)
        if kind.startswith("stem"):
            # The manifest's nulls are "not known" (no calibration in the file); NaN would be in lists.
            found = [x for x in found if not x.endswith("=null")]
        problems += [f"{p.name} {x}" for x in found[:5]]
        if kind == "bloch" and isinstance(value, dict):
            problems += bloch_flux(value, cases_in or [], "abtem" in argv)
    # --allow-missing writes NaN at the missing positions by design (present.npy marks them, stderr
    # says how many): announced, not silent.
    missing = "--allow-missing" in argv and ("removed" in (folder / ".desc").read_text() or "frames missing" in err)
    for p in folder.glob("out/*.npy"):
        why = None if missing else npy_nonfinite(p)
        if why:
            problems.append(why)
    if problems:
        return "nonfinite", "; ".join(problems)[:500]
    return "ok", ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-kind", type=int, default=200)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--bin", default=None, help="scatterlab binary (default $CARGO_TARGET_DIR/release/scatterlab)")
    ap.add_argument("--work", default=None, help="folder for the saved non-clean cases (default: a new temp folder)")
    ap.add_argument("--keep-ok", action="store_true", help="also keep the clean cases' folders")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    target = os.environ.get("CARGO_TARGET_DIR", str(Path.home() / ".cache/scatterlab/target"))
    binary = args.bin or str(Path(target) / "release" / "scatterlab")
    if not os.access(binary, os.X_OK):
        print(f"no binary at {binary}: cargo build --release -p scatterlab-cli", file=sys.stderr)
        return 2
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix=f"mutate-cli-{seed}-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"seed {seed}, {args.per_kind} per kind, binary {binary}, saving to {work}", flush=True)
    counts: dict[str, Counter] = defaultdict(Counter)
    findings = []
    kinds = [k for k in args.kinds.split(",") if k]
    for kind in kinds:
        if kind not in KINDS:
            print(f"unknown kind {kind} (have {', '.join(KINDS)})", file=sys.stderr)
            return 2
    t0 = time.time()
    for kind in kinds:
        # One stream per kind, so that a kind's mutations do not depend on which other kinds ran.
        rng = random.Random(f"{seed}/{kind}")
        gen = Kinds(rng)
        make = getattr(gen, kind.replace("-", "_") + "_input")
        for n in range(args.per_kind):
            files, argv, desc, cases_in = make()
            folder = work / kind / f"{n:05d}"
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            for name, data in files.items():
                (folder / name).write_bytes(data)
            (folder / ".desc").write_text(desc)
            rc, out, err, secs, timed_out = run_one(binary, folder, argv)
            cls, why = classify(kind, folder, argv, rc, err, timed_out, cases_in)
            counts[kind][cls] += 1
            if cls in ("ok", "error") and not args.keep_ok:
                shutil.rmtree(folder)
                continue
            cmd = f"cd {shlex.quote(str(folder))} && ulimit -v {AS_LIMIT // 1024} && timeout {TIMEOUT_S} {shlex.quote(binary)} {' '.join(map(shlex.quote, argv))}"
            (folder / "cmd.sh").write_text(cmd + "\n")
            (folder / "mutation.txt").write_text(desc + "\n")
            (folder / "stderr.txt").write_bytes(err[-20000:])
            if cls not in ("ok", "error"):
                findings.append((kind, n, cls, desc, why))
                print(f"  {cls:9s} {kind} #{n}: {desc[:160]} | {why[:240]}", flush=True)
        print(f"{kind}: " + ", ".join(f"{c} {counts[kind][c]}" for c in CLASSES) + f"  ({time.time() - t0:.0f} s)", flush=True)
    print(f"\nseed {seed}, per kind {args.per_kind}")
    print(f"{'kind':12s} " + " ".join(f"{c:>9s}" for c in CLASSES))
    for kind in kinds:
        print(f"{kind:12s} " + " ".join(f"{counts[kind][c]:9d}" for c in CLASSES))
    print(f"non-clean cases saved under {work} (replay: sh <kind>/<n>/cmd.sh)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())

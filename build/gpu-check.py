#!/usr/bin/env python3
"""Helper of build/gpu-check.sh and build/gpu-kit.sh (standard library only,
so that any python3 runs it: Debian's here, /opt/torch/.venv's on the GPU
machine).

  inputs DIR                 write the request bodies det.json and cls.json
  post URL BODY OUT          POST BODY to URL, write the answer to OUT
  wait URL SECONDS           wait until GET URL answers 200
  compare REF GOT TOL        largest absolute difference, as JSON; exit 1 above TOL
  step FILE NAME STATUS ...  append one step's record to FILE (JSON lines)
  reason LOG                 the reason of svc's fallback warning in a JSON log
  benchsum FILE              a one-line summary of an svc bench --json document
  report DIR EXIT            gpu-report.json and gpu-report.md from DIR/steps.jsonl
"""

import json
import math
import sys
import time
import urllib.request

# ImageNet normalisation, as PaddleOCR's det and cls preprocessing.
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def text_image(h, w):
    """A white page with dark bars (text-like), normalised, NCHW [1,3,h,w]:
    det answers it with a real probability map (random input gives zeros)."""
    chans = []
    for c in range(3):
        rows = []
        for y in range(h):
            row = []
            for x in range(w):
                ink = (y % 16) in range(5, 11) and (x % 24) < 18 and 4 <= x < w - 4
                v = 0.1 if ink else 0.95
                row.append(round((v - MEAN[c]) / STD[c], 6))
            rows.append(row)
        chans.append(rows)
    return [chans]


def cmd_inputs(out):
    for name, (h, w) in (("det", (320, 320)), ("cls", (48, 192))):
        with open(f"{out}/{name}.json", "w") as f:
            json.dump({"x": text_image(h, w)}, f, separators=(",", ":"))


def cmd_post(url, body, out):
    with open(body, "rb") as f:
        data = f.read()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        answer = r.read()
    with open(out, "wb") as f:
        f.write(answer)


def cmd_wait(url, seconds):
    deadline = time.time() + float(seconds)
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return 0
        except OSError:
            pass
        time.sleep(0.5)
    return 1


def flatten(v, out):
    if isinstance(v, list):
        for e in v:
            flatten(e, out)
    elif isinstance(v, (int, float)):
        out.append(float(v))
    else:
        raise ValueError(f"not a number: {v!r}")
    return out


def max_diff(ref, got):
    """The largest absolute difference over every output (inf when the
    outputs or their sizes differ)."""
    if sorted(ref) != sorted(got):
        return math.inf, 0
    d, n = 0.0, 0
    for name in ref:
        a, b = flatten(ref[name], []), flatten(got[name], [])
        if len(a) != len(b) or not a:
            return math.inf, 0
        n += len(a)
        for x, y in zip(a, b):
            d = max(d, abs(x - y))
    return d, n


def cmd_compare(ref, got, tol):
    with open(ref) as f:
        r = json.load(f)
    with open(got) as f:
        g = json.load(f)
    d, n = max_diff(r, g)
    ok = d <= float(tol)
    print(json.dumps({"max_abs_diff": d if math.isfinite(d) else "inf", "values": n, "tolerance": float(tol), "ok": ok}))
    return 0 if ok else 1


def cmd_step(path, name, status, *kv):
    rec = {"step": name, "status": status}
    for item in kv:
        k, _, v = item.partition("=")
        if v.startswith("@"):
            try:
                with open(v[1:], errors="replace") as f:
                    v = f.read().strip()
            except OSError as e:
                v = f"({e})"
        try:
            rec[k] = json.loads(v)
        except ValueError:
            rec[k] = v
    with open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")


VERDICT = {0: "proved: svc ran the models on the GPU", 1: "failed", 2: "no GPU here"}


def cmd_reason(log):
    """The reason of svc's fallback warning in a JSON log ("" when none)."""
    with open(log, errors="replace") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("level") == "warn" and "falling back" in str(rec.get("msg")):
                print(rec.get("reason", ""))
                return 0
    return 0


def cmd_benchsum(path):
    """One line of JSON from an svc bench --json document: the provider the
    server ran on and, per concurrency, requests/s, p50 and p99 (ms), errors."""
    with open(path) as f:
        doc = json.load(f)
    levels = []
    for lv in doc.get("served") or []:
        lat = lv.get("latency_us") or {}
        levels.append({"concurrency": lv.get("concurrency"), "rps": lv.get("throughput_rps"),
                       "p50_ms": round(lat.get("p50", 0) / 1000, 3), "p99_ms": round(lat.get("p99", 0) / 1000, 3),
                       "errors": lv.get("errors")})
    print(json.dumps({"provider": (doc.get("target") or {}).get("provider", ""), "levels": levels}))
    return 0


def cmd_report(out, code):
    code = int(code)
    steps = []
    try:
        with open(f"{out}/steps.jsonl") as f:
            steps = [json.loads(line) for line in f if line.strip()]
    except OSError:
        pass
    doc = {"exit": code, "verdict": VERDICT.get(code, "failed"), "steps": steps}
    with open(f"{out}/gpu-report.json", "w") as f:
        json.dump(doc, f, indent=1)
    lines = ["# svc GPU check", "", f"**Result: {doc['verdict']}** (exit status {code})", ""]
    lines += ["| step | status | detail |", "|---|---|---|"]
    for s in steps:
        detail = s.get("summary", "")
        if not isinstance(detail, str):
            detail = json.dumps(detail)
        lines.append(f"| {s['step']} | {s['status']} | {str(detail).replace('|', '/')} |")
    bench = [s for s in steps if isinstance(s.get("bench"), dict)]
    if bench:
        lines += ["", "## Throughput (svc bench, same machine)", "",
                  "| model | provider | concurrency | requests/s | p50 ms | p99 ms | errors |", "|---|---|---|---|---|---|---|"]
        for s in bench:
            for lv in s["bench"].get("levels", []):
                lines.append(f"| {s.get('model', '')} | {s['bench'].get('provider', '')} | {lv['concurrency']} | "
                             f"{lv['rps']} | {lv['p50_ms']} | {lv['p99_ms']} | {lv['errors']} |")
    for s in steps:
        lines += ["", f"## {s['step']}: {s['status']}", ""]
        for k, v in s.items():
            if k in ("step", "status", "summary"):
                continue
            if isinstance(v, (dict, list)):
                v = json.dumps(v, indent=1)
            v = str(v)
            if "\n" in v or len(v) > 100:
                lines += [f"{k}:", "", "```text", v, "```", ""]
            else:
                lines.append(f"- {k}: {v}")
    with open(f"{out}/gpu-report.md", "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv):
    cmds = {"inputs": cmd_inputs, "post": cmd_post, "wait": cmd_wait, "compare": cmd_compare,
            "step": cmd_step, "report": cmd_report, "reason": cmd_reason, "benchsum": cmd_benchsum}
    if len(argv) < 2 or argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    return cmds[argv[1]](*argv[2:]) or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

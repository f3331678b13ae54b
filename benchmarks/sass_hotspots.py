"""The hottest SASS lines of a kernel, from the source page of an Nsight Compute report exported as
CSV (`ncu -i report.ncu-rep --page source --csv --print-source sass > report.csv`): the lines
with the most warp-state samples, each with its share of the kernel's samples and its
instruction, so a profile of the GEMM kernel reads as "where the warps wait".  Where the page
carries per-reason stall columns (any other column whose name mentions a stall), each line also
names its largest reasons, so that a hot wgmma line tells whether it waits for the tensor pipe or
for something else; `--columns` prints the page's column names first.  `--local` then lists
every local-memory access that ran (LDL, STL: ptxas's spills), in address order, with how often
it ran and the samples on it and on the lines after it, where a use waits for the load: a spill
reloaded once per tile just before a barrier shows there (docs/performance.md, fifty-seventh
session).

    python benchmarks/sass_hotspots.py report.csv [--top 30] [--reasons 3] [--columns] [--local [LINES]]
"""

from __future__ import annotations

import argparse
import csv
import sys


def number(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv_path")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--reasons", type=int, default=3, help="stall-reason columns named per line (0: none)")
    parser.add_argument("--columns", action="store_true", help="print the source page's column names first")
    parser.add_argument(
        "--local",
        type=int,
        nargs="?",
        const=8,
        default=0,
        help="then every executed LDL/STL with the samples of the LINES lines after it (default 8)",
    )
    args = parser.parse_args()
    with open(args.csv_path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    header_at = next((i for i, r in enumerate(rows) if any("Source" == c.strip() for c in r)), None)
    if header_at is None:
        sys.exit(f"{args.csv_path}: no source-page header (a 'Source' column) found")
    header = [c.strip() for c in rows[header_at]]
    body = [r for r in rows[header_at + 1 :] if len(r) == len(header)]
    source = header.index("Source")
    samples = next((i for i, c in enumerate(header) if "Sampling (All" in c), None)
    if samples is None:
        sys.exit(f"{args.csv_path}: no warp-sampling column among {header}")
    address = next((i for i, c in enumerate(header) if c.startswith("Address")), None)
    if args.columns:
        print("columns: " + " | ".join(header))
    # Per-reason stall columns: those naming a stall, other than the sampling totals.
    reasons = [i for i, c in enumerate(header) if "stall" in c.lower() and "Sampling (" not in c]
    total = sum(number(r[samples]) for r in body) or 1.0
    print(f"{len(body)} SASS lines, {total:.0f} samples ({header[samples]})")
    for r in sorted(body, key=lambda r: -number(r[samples]))[: args.top]:
        where = r[address] if address is not None else ""
        line = f"{100 * number(r[samples]) / total:5.1f}%  {where:>8s}  {r[source].strip()[:110]}"
        top = sorted((i for i in reasons if number(r[i]) > 0), key=lambda i: -number(r[i]))[: args.reasons]
        if top:
            line += "  [" + ", ".join(f"{header[i]} {number(r[i]):.0f}" for i in top) + "]"
        print(line)
    if args.local:
        local_accesses(header, body, source, samples, address, args.local)


def opcode(instruction: str) -> str:
    """The instruction's opcode, past any predicate (`@!P0  LDL R2, [R1]` -> `LDL`)."""
    words = [w for w in instruction.split() if not w.startswith("@")]
    return words[0] if words else ""


def local_accesses(
    header: list[str], body: list[list[str]], source: int, samples: int, address: int | None, after: int
) -> None:
    """Each local-memory access that ran, with its executions, its samples and those of the
    `after` lines that follow it."""
    executed = next((i for i, c in enumerate(header) if c == "Instructions Executed"), None)
    if executed is None:
        print("local accesses: the page has no 'Instructions Executed' column")
        return
    found = [i for i, r in enumerate(body) if number(r[executed]) > 0 and opcode(r[source]).startswith(("LDL", "STL"))]
    print(f"local accesses that ran: {len(found)} (executions, samples on the line, on the {after} lines after it)")
    for i in found:
        r = body[i]
        later = sum(number(x[samples]) for x in body[i + 1 : i + 1 + after])
        where = r[address] if address is not None else ""
        print(
            f"  {where:>8s}  {number(r[executed]):10.0f}  {number(r[samples]):6.0f}  {later:6.0f}  {r[source].strip()[:80]}"
        )


if __name__ == "__main__":
    main()

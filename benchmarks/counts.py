"""Operation and peak-word counts of the exact procedures, measured by Counting.

For total sizes 32 ... 4096 (n = M = s/2 for the Cauchy product tree; N = L = s/2 for
the S4 filter with C~ supplied) prints the operations divided by s log2^2 s and the
peak live words divided by s.  The spec claims both stay bounded.

    python benchmarks/counts.py [--max 4096]
"""
from __future__ import annotations

import argparse


from s4cert.certs.counts import scaling_table


def main() -> None:
    p = argparse.ArgumentParser(description="operation and word counts")
    p.add_argument("--max", type=int, default=4096)
    args = p.parse_args()
    sizes = [2**q for q in range(5, args.max.bit_length()) if 2**q <= args.max]
    for kind in ("cauchy", "filter"):
        print(f"{kind}: {'s':>6} {'ops':>10} {'ops/(s lg2^2 s)':>16} {'peak words':>11} {'peak/s':>7}")
        for row in scaling_table(kind, sizes):
            print(f"{'':>{len(kind) + 1}} {row.size:>6} {row.ops:>10} {row.ops_ratio:>16.3f} "
                  f"{row.peak_words:>11} {row.words_ratio:>7.2f}")


if __name__ == "__main__":
    main()

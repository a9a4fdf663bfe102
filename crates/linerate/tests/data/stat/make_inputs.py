#!/usr/bin/env python3
"""Writes the golden-test input files (deterministic; run once, results are checked in)."""
import random

random.seed(20261121)


def write(name, lines):
    with open(f"inputs/{name}", "w", newline="") as f:
        f.write("".join(lines))


def gauss(n, mu, sd, fmt="%.2f"):
    return [fmt % random.gauss(mu, sd) + "\n" for _ in range(n)]


write("a.txt", gauss(11, 100, 5))
write("b.txt", gauss(15, 108, 5))
write("c.txt", gauss(9, 101, 6))
write("d.txt", gauss(21, 95, 3))
write("e.txt", gauss(5, 110, 10))
write("f.txt", gauss(7, 99, 1))
write("g.txt", gauss(13, 103, 4))
write("ties.txt", [f"{random.randint(0, 4)}\n" for _ in range(21)])
write("ties2.txt", [f"{random.randint(2, 6)}\n" for _ in range(13)])
write("tall.txt", ["3\n"] * 9 + ["1\n", "5\n"])
write("neg.txt", gauss(7, -20, 8, "%.3f"))
write("sci.txt", gauss(9, 1.5e6, 2e5, "%.4e"))
write("tiny.txt", gauss(9, 3e-7, 5e-8, "%.6e"))
write("const.txt", ["42\n"] * 5)
write("const3.txt", ["42.0\n", "42\n", "4.2e1\n"])
write("big1.txt", gauss(1001, 50, 10))
write("big2.txt", gauss(999, 51, 10))
write("cols.txt", [
    "# latency samples, two columns\n",
    "1.5 10\n",
    "\n",
    "2.5\t20  # trailing comment\n",
    "   3.5   30\n",
    "#4.5 40\n",
    "4.5 45 # 50\n",
    "9.5 # 95\n",
    "5.5 60 extra\n",
    "6.5\t\t70\n",
    "7.5 75\n",
    "8.5\n",

])
write("csv.txt", [f"{i},{random.randint(10, 99)},x\n" for i in range(7)])
write("hex.txt", ["0x10\n", "0x1.8p4\n", "20\n", "1e1\n", "+5\n"])
write("three.txt", ["1\n", "2\n", "3\n"])
write("two.txt", ["1\n", "2\n", "# not a value\n"])
write("invalid.txt", ["1\n", "2\n", "3 \n", "4x\n", "5\n"])
write("even.txt", ["1\n", "2\n", "3\n", "4\n"])
write("even2.txt", ["10\n", "2\n", "7.5\n", "3\n", "9\n", "4\n"])
write("zeros.txt", ["0\n", "-0\n", "0\n", "1\n", "-1\n"])
write("crlf.txt", ["1\r\n", "2\r\n", "4\r\n"])
write("long.txt", ["1 " + " ".join(["9"] * 6000) + "\n", "2\n", "3\n"])

"""Command line: `ctxaudit audit ...` (placeholder until the audit lands)."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ctxaudit")
    parser.add_subparsers(dest="command")
    parser.parse_args(argv)
    parser.print_help()
    return 0

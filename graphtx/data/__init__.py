"""Data shipped with graphtx: the embedded demo corpus (public-domain US grants)."""

from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent / "demo"

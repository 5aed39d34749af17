"""graphtx's CLI from a checkout on a machine where graphtx is not installed (the GPU image): python gpu/run_cli.py ARGS."""

import runpy
import sys

sys.argv[0] = "graphtx"
runpy.run_module("graphtx", run_name="__main__")

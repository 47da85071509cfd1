from ctxgraph.cli import run

run()

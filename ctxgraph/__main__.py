from ctxgraph.cli import main

main()

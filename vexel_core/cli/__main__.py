from vexel_core.cli import main

main()

from dpfc.cli import main

main()

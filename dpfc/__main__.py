from dpfc.cli.main import main

main()

from napipatch.cli.app import main

main()

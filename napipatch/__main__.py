from napipatch.cli import main

main()

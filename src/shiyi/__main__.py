from shiyi.interfaces.cli.app import main

main()

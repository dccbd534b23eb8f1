import sys

from safeforge.cli.main import main

if __name__ == "__main__":  # not when a process pool's child imports the parent's main module
    sys.exit(main())

"""DESPITE's `src` package as our import child sees it: this directory goes first on its sys.path."""

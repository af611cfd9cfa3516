"""``python -m bothost`` is the ``bothost`` command."""

from bothost.cli import main

if __name__ == "__main__":
    main()

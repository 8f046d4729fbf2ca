"""``python -m varprobe``: the same as the ``varprobe`` command."""

from varprobe.cli import main

main()

"""``python -m haystack_deep_research.cli``: the ``deep-research`` command."""

import sys

from haystack_deep_research.cli import main

sys.exit(main())

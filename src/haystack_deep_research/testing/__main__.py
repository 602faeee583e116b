"""``python -m haystack_deep_research.testing serve``: the testing kit's servers (see :mod:`._kit`)."""

import sys

from haystack_deep_research.testing._kit import main

sys.exit(main())

"""``python -m haystack_deep_research.testing serve``: the testing kit's servers (see :mod:`.kit`)."""

import sys

from haystack_deep_research.testing.kit import main

sys.exit(main())

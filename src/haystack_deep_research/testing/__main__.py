"""``python -m haystack_deep_research.testing serve``: the testing kit's servers (see :mod:`._kit`)."""

from haystack_deep_research.testing._kit import main

raise SystemExit(main())

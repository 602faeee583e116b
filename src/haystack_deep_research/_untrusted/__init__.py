"""Doors for what the library did not write itself: local files (:mod:`.files`), JSON (:mod:`.json_text`), terminal
text (:mod:`.terminal`)."""

"""
Reading what the library did not write itself, safely: a local file only when it is a regular file inside its folder
and under its size cap (:mod:`.files`), JSON with its nesting bounded, and the JSON object in a model's reply
(:mod:`.json_text`).
"""

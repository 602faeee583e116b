"""The simulated world the benchmark runs in: an OpenAI-compatible LLM server and a generated web corpus."""

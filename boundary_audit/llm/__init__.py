"""Replies from models: contracts as prompts, the `generate` engine, and a scripted mock server.

- `contracts`: the generation contracts (raw, disclosed, native) read from the packaged
  contracts/ folder, and the prompt each one makes for a task;
- `disclosure`: the exact description of a boundary, derived from data (a transport and its
  parameters, an adapter path's pre-processors and facts, a scan finding);
- `extract`: the command a harness would take out of a model's answer;
- `generate`: asking an OpenAI-compatible endpoint, with retries, rate limit and resume;
- `mock_server`: an OpenAI-compatible server on 127.0.0.1 that answers from a script (stdlib
  only; nothing here imports it).

Importing this package imports nothing heavy: each module is imported where it is used.
"""
